import { timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { SERVER_FILES } from '../lib/package-paths.ts';
import { auditBody, writeAudit } from '../services/audit/log.ts';
import { verifyOperator } from '../services/operators/accounts.ts';
import {
  type ConsoleSession,
  createSession,
  endSession,
  findSession,
  randomToken,
} from '../services/operators/sessions.ts';
import { reconcileNow } from '../services/payments/pipeline/operator.ts';
import type { ConsoleKit } from './kit.ts';
import { readOverview } from './overview.ts';
import { registerAuditPage } from './pages/audit.ts';
import { registerBookPage } from './pages/book.ts';
import { registerChartsPage } from './pages/charts.ts';
import { registerMarketPage } from './pages/market.ts';
import { registerMessagesPage } from './pages/messages.ts';
import { registerPartnersPage } from './pages/partners.ts';
import { registerPaymentsPage } from './pages/payments.ts';
import { overviewPage, refusedPage, signInPage } from './pages.ts';
import { createSignInLimit } from './sign-in-limit.ts';

const SESSION_COOKIE = 'console_session';
/** Before sign-in: the double-submit token of the sign-in form (no session exists yet). */
const SIGN_IN_COOKIE = 'console_sign_in';

/** Strict: nothing but this server's own stylesheet; no script at all, no frames, forms post here. */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "frame-ancestors 'none'",
  "form-action 'self'",
  "base-uri 'none'",
].join('; ');

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A console route: the session, not the admin token, authenticates it. */
    console?: boolean;
  }
  interface FastifyInstance {
    /** Every console route registered on this app (method and pattern): the tests walk them all. */
    consoleRoutes?: ReadonlyArray<{ method: string; url: string }>;
  }
}

function cookies(request: FastifyRequest): Map<string, string> {
  const found = new Map<string, string>();
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0) found.set(part.slice(0, at).trim(), part.slice(at + 1).trim());
  }
  return found;
}

/** HttpOnly, SameSite=Strict, scoped to /console; Secure unless the browser talks to localhost. */
function cookie(request: FastifyRequest, name: string, value: string, maxAgeSeconds?: number): string {
  const local = ['localhost', '127.0.0.1', '[::1]'].includes(request.hostname);
  return [
    `${name}=${value}`,
    'Path=/console',
    'HttpOnly',
    'SameSite=Strict',
    ...(local ? [] : ['Secure']),
    ...(maxAgeSeconds === undefined ? [] : [`Max-Age=${maxAgeSeconds}`]),
  ].join('; ');
}

const sameToken = (a: string | undefined, b: string | undefined) =>
  !!a && !!b && a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** A form post's fields (the admin app parses only JSON: the raw body is kept for us). */
function formOf(request: FastifyRequest): Record<string, string> {
  const type = String(request.headers['content-type'] ?? '');
  if (!type.startsWith('application/x-www-form-urlencoded')) return {};
  return Object.fromEntries(new URLSearchParams(request.rawBody ?? ''));
}

const html = (reply: FastifyReply, status: number, body: string) =>
  reply.code(status).type('text/html; charset=utf-8').send(body);
const seeOther = (reply: FastifyReply, location: string) =>
  reply.code(303).header('location', location).send();

/**
 * The operator console (docs/console.md), on the admin app only: sign-in, sign-out, the Overview,
 * and its one change so far (reconcile). Every answer carries the strict CSP; every POST is
 * checked against the session's CSRF token; a change needs the operator role and is audited
 * with the operator as actor (admin/operators.ts, installAuditLog).
 */
export function registerConsoleRoutes(app: FastifyInstance, ctx: AppContext): void {
  const db = ctx.database.db;
  const css = readFileSync(path.join(SERVER_FILES.consoleAssets, 'console.css'));
  const config = { console: true } as const;
  const routes: { method: string; url: string }[] = [];
  app.addHook('onRoute', (route) => {
    if (!route.config?.console) return;
    for (const method of [route.method].flat())
      if (method !== 'HEAD') routes.push({ method, url: route.url });
  });
  app.decorate('consoleRoutes', routes);

  app.addHook('onSend', async (request, reply, payload) => {
    if (!request.routeOptions.config?.console) return payload;
    reply.header('content-security-policy', CONSOLE_CSP);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('x-frame-options', 'DENY');
    reply.header('cache-control', 'no-store');
    return payload;
  });

  /** The request's session, or the answer already sent (a redirect to sign in). */
  async function session(request: FastifyRequest, reply: FastifyReply): Promise<ConsoleSession | undefined> {
    const token = cookies(request).get(SESSION_COOKIE);
    const found = token
      ? await findSession(db, token, ctx.clock(), ctx.config.CONSOLE_IDLE_MINUTES)
      : undefined;
    if (found && found !== 'expired') {
      request.auditActor = { type: 'operator', id: found.operator.id, name: found.operator.name };
      return found;
    }
    reply.header('set-cookie', cookie(request, SESSION_COOKIE, '', 0));
    await seeOther(reply, found === 'expired' ? '/console/sign-in?expired=1' : '/console/sign-in');
    return undefined;
  }

  /** A POST's session, its CSRF token checked (403 page when it does not match), or undefined once answered. */
  async function posted(request: FastifyRequest, reply: FastifyReply) {
    const found = await session(request, reply);
    if (!found) return undefined;
    const form = formOf(request);
    request.body = form;
    if (!sameToken(form.csrf, found.csrfToken)) {
      await html(
        reply,
        403,
        refusedPage(
          who(found),
          403,
          'This form has expired or did not come from the console: reload the page and try again.',
        ),
      );
      return undefined;
    }
    return found;
  }

  /** A change: `posted`, and the operator role (a viewer gets the 403 page, and the refusal is audited). */
  async function change(request: FastifyRequest, reply: FastifyReply) {
    const found = await posted(request, reply);
    if (!found) return undefined;
    if (found.operator.role === 'operator') return found;
    await html(reply, 403, refusedPage(who(found), 403, 'A viewer cannot change anything: ask an operator.'));
    return undefined;
  }

  const who = (s: ConsoleSession) => ({
    name: s.operator.name,
    role: s.operator.role,
    csrfToken: s.csrfToken,
  });

  app.get('/console/assets/console.css', { config }, async (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', 'no-cache').send(css),
  );

  app.get('/console/sign-in', { config }, async (request, reply) => {
    const csrfToken = randomToken();
    const { expired } = request.query as { expired?: string };
    reply.header('set-cookie', cookie(request, SIGN_IN_COOKIE, csrfToken));
    return html(
      reply,
      200,
      signInPage({
        csrfToken,
        message: expired ? 'Your session ended after a time without activity: sign in again.' : undefined,
      }),
    );
  });

  const signInLimit = createSignInLimit(ctx);
  app.post('/console/sign-in', { config }, async (request, reply) => {
    const form = formOf(request);
    request.body = form;
    const retry = (status: number, message: string) => {
      const csrfToken = randomToken();
      reply.header('set-cookie', cookie(request, SIGN_IN_COOKIE, csrfToken));
      return html(reply, status, signInPage({ csrfToken, message, name: form.name }));
    };
    if (!sameToken(form.csrf, cookies(request).get(SIGN_IN_COOKIE)))
      return retry(403, 'The sign-in form expired: sign in again.');
    const name = String(form.name ?? '').slice(0, 200);
    // Too many failures for this name or address: refused before the credential is checked.
    const waitMs = await signInLimit.waitMs(name, request.ip);
    if (waitMs > 0) {
      const seconds = Math.ceil(waitMs / 1000);
      const at = new Date(ctx.clock().getTime() + seconds * 1000).toISOString().slice(11, 19);
      request.log.warn({ operator: name.slice(0, 100) }, 'console: sign-in refused, too many failures');
      reply.header('retry-after', String(seconds));
      return retry(
        429,
        `Too many failed sign-ins for this name or from this address: try again after ${at} UTC (in ${Math.ceil(seconds / 60)} minute${seconds > 60 ? 's' : ''}).`,
      );
    }
    const operator =
      form.name && form.credential ? await verifyOperator(db, form.name, form.credential) : undefined;
    if (!operator) {
      await signInLimit.failed(name, request.ip);
      request.log.warn({ operator: form.name?.slice(0, 100) }, 'console: sign-in refused');
      return retry(401, 'Wrong name or credential, or the operator is deactivated.');
    }
    await signInLimit.succeeded(name);
    const created = await createSession(db, operator.id, ctx.clock());
    request.auditActor = { type: 'operator', id: operator.id, name: operator.name };
    reply.header('set-cookie', [
      cookie(request, SESSION_COOKIE, created.token),
      cookie(request, SIGN_IN_COOKIE, '', 0),
    ]);
    return seeOther(reply, '/console');
  });

  app.post('/console/sign-out', { config }, async (request, reply) => {
    const found = await posted(request, reply);
    if (!found) return reply;
    await endSession(db, found.id);
    reply.header('set-cookie', cookie(request, SESSION_COOKIE, '', 0));
    return seeOther(reply, '/console/sign-in');
  });

  app.get('/console', { config }, async (request, reply) => {
    const found = await session(request, reply);
    if (!found) return reply;
    const { reconciled } = request.query as { reconciled?: string };
    const notice =
      reconciled && /^\d+$/.test(reconciled) ? `${reconciled} payment requests made due now.` : undefined;
    return html(reply, 200, overviewPage(who(found), await readOverview(ctx), notice));
  });

  app.post('/console/payments/reconcile', { config }, async (request, reply) => {
    const found = await change(request, reply);
    if (!found) return reply;
    const result = await reconcileNow(db, { now: ctx.clock() });
    ctx.paymentWorker?.nudge();
    return seeOther(reply, `/console?reconciled=${result.reconciling}`);
  });

  const kit: ConsoleKit = {
    ctx,
    config,
    session,
    posted,
    change,
    who,
    html,
    seeOther,
    refuse: (reply, found, status, message) => html(reply, status, refusedPage(who(found), status, message)),
    async audit(q, request, entry) {
      const actor = request.auditActor;
      if (!actor) throw new Error('audit: no actor on a console change');
      await writeAudit(q, {
        actor,
        method: request.method,
        route: request.routeOptions.url ?? request.url,
        targetId: entry.targetId,
        body: auditBody(request.body),
        before: entry.before,
        after: entry.after,
        status: entry.status ?? 303,
        ip: request.ip,
        requestId: typeof request.id === 'string' ? request.id : null,
        at: ctx.clock(),
      });
      request.auditWritten = true;
    },
  };
  for (const register of [
    registerPaymentsPage,
    registerChartsPage,
    registerPartnersPage,
    registerMarketPage,
    registerBookPage,
    registerMessagesPage,
    registerAuditPage,
  ])
    register(app, kit);
}
