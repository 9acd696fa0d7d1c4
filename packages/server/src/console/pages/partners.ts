import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { credentialCreateBody, credentialPatchBody, signingKeyBody } from '../../admin/schemas.ts';
import type { Tx } from '../../db/client.ts';
import { InvalidPublicKeyError } from '../../lib/keys.ts';
import { invalidateCallers } from '../../services/auth/caller-cache.ts';
import { createCredential } from '../../services/credentials/create.ts';
import {
  type CredentialPatch,
  listCredentials,
  presentCredential,
  setSigningKey,
  updateCredential,
} from '../../services/credentials/update.ts';
import type { ConsoleSession } from '../../services/operators/sessions.ts';
import { resendEvent } from '../../services/webhooks/history.ts';
import { findWebhook } from '../../services/webhooks/registration.ts';
import type { ConsoleKit } from '../kit.ts';
import {
  DELIVERIES_SHOWN,
  findDelivery,
  findOrganization,
  listAttempts,
  listDeliveries,
  listPartners,
  lockCredential,
  ORGANIZATIONS_SHOWN,
} from './partners-data.ts';
import { credentialCreatedPage, deliveryPage, partnerPage, partnersPage } from './partners-view.ts';

/** The notices a change's redirect names (`?done=`). */
const DONE: Record<string, string> = {
  ips: 'Trusted IPs saved.',
  key: 'Signing key rotated: requests signed with the old key are refused from now on.',
  deactivated: 'Credential deactivated: partners using it are refused.',
  resent: 'A new delivery of the event is queued: the webhook worker sends it.',
};

const FIELD_NAMES: Record<string, string> = {
  name: 'Name',
  publicKey: 'Public key',
  keyId: 'Key id',
  trustedIps: 'Trusted IPs',
  expiresAt: 'Expires',
};

/** The admin schema's findings in words, a trusted IP by its line. */
function problems(error: z.ZodError, form: Record<string, string | string[]>): string {
  return error.issues
    .map((issue) => {
      const [field, index] = issue.path;
      const label = FIELD_NAMES[String(field)] ?? 'The form';
      if (field === 'trustedIps' && typeof index === 'number') {
        const lines = form.trustedIps as string[];
        return `${label}, line ${index + 1} (“${lines[index]}”): ${issue.message}`;
      }
      return `${label}: ${issue.message}`;
    })
    .join('; ');
}

/** A textarea's lines, trimmed, the empty ones dropped. */
const linesOf = (text: string | undefined) =>
  (text ?? '')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');

/** The form's non-empty fields (an empty optional field is absent, as in the admin API's JSON). */
function filled(form: Record<string, string>, names: string[]) {
  const out: Record<string, string> = {};
  for (const name of names) if (form[name]?.trim()) out[name] = form[name]!;
  return out;
}

const REFUSAL: Record<string, [number, string]> = {
  'no-event': [404, 'The event of this delivery is gone (events are kept 30 days).'],
  'no-webhook': [409, 'The organization has no webhook to send it to.'],
  deactivated: [409, 'The webhook is deactivated: the partner must update it before anything is sent.'],
};

/**
 * The Partners page (docs/console.md, "Partners"): organizations, their credentials and webhook
 * deliveries, and the operator's changes to them, each audited with before/after in its transaction.
 */
export function registerPartnersPage(app: FastifyInstance, kit: ConsoleKit): void {
  const { ctx, config } = kit;
  const db = ctx.database.db;
  type Params = { id: string; credentialId?: string; deliveryId?: string };
  const paramsOf = (request: FastifyRequest) => request.params as Params;
  const doneOf = (request: FastifyRequest) => DONE[(request.query as { done?: string }).done ?? ''];

  app.get('/console/partners', { config }, async (request, reply) => {
    const found = await kit.session(request, reply);
    if (!found) return reply;
    const search = String((request.query as { q?: unknown }).q ?? '')
      .trim()
      .slice(0, 200);
    return kit.html(
      reply,
      200,
      partnersPage({
        who: kit.who(found),
        environment: ctx.config.APP_ENV,
        search,
        partners: await listPartners(db, search),
        shown: ORGANIZATIONS_SHOWN,
      }),
    );
  });

  app.get('/console/partners/:id', { config }, async (request, reply) => {
    const found = await kit.session(request, reply);
    if (!found) return reply;
    const { id } = paramsOf(request);
    const organization = await findOrganization(db, id);
    if (!organization) return kit.refuse(reply, found, 404, 'No such organization.');
    const [credentials, webhook, deliveries] = await Promise.all([
      listCredentials(db, id),
      findWebhook(db, id),
      listDeliveries(db, id),
    ]);
    return kit.html(
      reply,
      200,
      partnerPage({
        who: kit.who(found),
        organization,
        credentials,
        webhook,
        deliveries,
        shown: DELIVERIES_SHOWN,
        done: doneOf(request),
      }),
    );
  });

  app.get('/console/partners/:id/deliveries/:deliveryId', { config }, async (request, reply) => {
    const found = await kit.session(request, reply);
    if (!found) return reply;
    const { id, deliveryId } = paramsOf(request);
    const organization = await findOrganization(db, id);
    const delivery = organization ? await findDelivery(db, id, deliveryId!) : undefined;
    if (!organization || !delivery) return kit.refuse(reply, found, 404, 'No such delivery.');
    return kit.html(
      reply,
      200,
      deliveryPage({
        who: kit.who(found),
        organization,
        delivery,
        attempts: await listAttempts(db, delivery.id),
        done: doneOf(request),
      }),
    );
  });

  app.post('/console/partners/:id/credentials', { config }, async (request, reply) => {
    const found = await kit.change(request, reply);
    if (!found) return reply;
    const { id } = paramsOf(request);
    const form = request.body as Record<string, string>;
    const input = {
      ...filled(form, ['name', 'publicKey', 'keyId', 'expiresAt']),
      ...(linesOf(form.trustedIps).length ? { trustedIps: linesOf(form.trustedIps) } : {}),
    };
    const parsed = credentialCreateBody.safeParse(input);
    if (!parsed.success) return kit.refuse(reply, found, 400, problems(parsed.error, input));
    const organization = await findOrganization(db, id);
    if (!organization) return kit.refuse(reply, found, 404, 'No such organization.');
    const created = await keyChecked(reply, found, () =>
      db.transaction(async (tx) => {
        const made = await createCredential({ db: tx, organizationId: id, input: parsed.data });
        // The secret stays out of the audit row: it exists in clear only on this answer.
        const { clientSecret: _secret, ...after } = made;
        await kit.audit(tx, request, { targetId: made.id, before: null, after, status: 201 });
        return made;
      }),
    );
    if (!created) return reply;
    return kit.html(reply, 201, credentialCreatedPage({ who: kit.who(found), organization, created }));
  });

  /**
   * A change to one credential of the organization: the row read and locked in the transaction
   * (before), the verb on that transaction (after), the audit row; around it the caller caches'
   * invalidation, as the admin routes do.
   */
  async function changeCredential(
    request: FastifyRequest,
    reply: FastifyReply,
    found: ConsoleSession,
    work: (tx: Tx, id: string) => Promise<unknown>,
    done: string,
  ) {
    const { id, credentialId } = paramsOf(request);
    const changed = await keyChecked(reply, found, () =>
      invalidateCallers(
        ctx,
        () =>
          db.transaction(async (tx) => {
            const before = await lockCredential(tx, id, credentialId!);
            if (!before) return 'missing' as const;
            const after = await work(tx, before.id);
            await kit.audit(tx, request, { targetId: before.id, before: presentCredential(before), after });
            return 'changed' as const;
          }),
        request.log,
      ),
    );
    if (!changed) return reply;
    if (changed === 'missing')
      return kit.refuse(reply, found, 404, 'No such credential of this organization.');
    return kit.seeOther(reply, `/console/partners/${encodeURIComponent(id)}?done=${done}`);
  }

  /** `work`, with a key the parser refuses answered as the operator's input error (400, nothing changed). */
  async function keyChecked<T>(reply: FastifyReply, found: ConsoleSession, work: () => Promise<T>) {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof InvalidPublicKeyError)) throw error;
      await kit.refuse(reply, found, 400, `Public key: ${error.message}`);
      return undefined;
    }
  }

  app.post(
    '/console/partners/:id/credentials/:credentialId/trusted-ips',
    { config },
    async (request, reply) => {
      const found = await kit.change(request, reply);
      if (!found) return reply;
      const form = request.body as Record<string, string>;
      const input = { trustedIps: linesOf(form.trustedIps) };
      const parsed = credentialPatchBody.safeParse(input);
      if (!parsed.success) return kit.refuse(reply, found, 400, problems(parsed.error, input));
      const patch: CredentialPatch = { trustedIps: parsed.data.trustedIps };
      return changeCredential(
        request,
        reply,
        found,
        (tx, id) => updateCredential({ db: tx, id, patch }),
        'ips',
      );
    },
  );

  app.post(
    '/console/partners/:id/credentials/:credentialId/signing-key',
    { config },
    async (request, reply) => {
      const found = await kit.change(request, reply);
      if (!found) return reply;
      const input = filled(request.body as Record<string, string>, ['publicKey', 'keyId']);
      const parsed = signingKeyBody.safeParse(input);
      if (!parsed.success) return kit.refuse(reply, found, 400, problems(parsed.error, input));
      const { publicKey, keyId } = parsed.data;
      return changeCredential(
        request,
        reply,
        found,
        (tx, id) => setSigningKey({ db: tx, id, publicKey, keyId }),
        'key',
      );
    },
  );

  app.post(
    '/console/partners/:id/credentials/:credentialId/deactivate',
    { config },
    async (request, reply) => {
      const found = await kit.change(request, reply);
      if (!found) return reply;
      if ((request.body as Record<string, string>).confirm !== 'yes')
        return kit.refuse(
          reply,
          found,
          400,
          'Tick “I understand partners using it are refused at once” to deactivate the credential.',
        );
      return changeCredential(
        request,
        reply,
        found,
        (tx, id) => updateCredential({ db: tx, id, patch: { isActive: false } }),
        'deactivated',
      );
    },
  );

  app.post('/console/partners/:id/deliveries/:deliveryId/resend', { config }, async (request, reply) => {
    const found = await kit.change(request, reply);
    if (!found) return reply;
    const { id, deliveryId } = paramsOf(request);
    const outcome = await db.transaction(async (tx) => {
      const before = await findDelivery(tx, id, deliveryId!);
      if (!before) return 'no-delivery' as const;
      const sent = await resendEvent(tx, id, before.eventId);
      if (typeof sent === 'string') return sent;
      const after = await findDelivery(tx, id, sent.deliveryId);
      await kit.audit(tx, request, { targetId: before.id, before, after });
      return sent;
    });
    if (outcome === 'no-delivery')
      return kit.refuse(reply, found, 404, 'No such delivery of this organization.');
    if (typeof outcome === 'string') return kit.refuse(reply, found, ...REFUSAL[outcome]!);
    ctx.webhookWorker?.nudge();
    return kit.seeOther(
      reply,
      `/console/partners/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(outcome.deliveryId)}?done=resent`,
    );
  });
}
