import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  CUID_PATTERN,
  ErrorLabel,
  ErrorMessage,
  type UssdProcessRequest,
  type UssdSessionRequest,
  ussdProcessRequestSchema,
  ussdSessionRequestSchema,
} from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppContext } from '../context.ts';
import { one } from '../db/query.ts';
import { AppError } from '../lib/errors.ts';
import { SERVER_FILES } from '../lib/package-paths.ts';
import { listCustomers } from '../services/customers/list.ts';
import { getPaymentStatus } from '../services/payments/status.ts';
import { DEMO_KEY_ID, type SandboxCredentialsFile } from '../services/sandbox/seed.ts';
import { smsOfNumber } from '../services/sms/list.ts';
import { createUssdSession } from '../services/ussd/create-session.ts';
import { processUssdChoice } from '../services/ussd/process-choice.ts';
import { recentEvents } from '../services/webhooks/event-feed.ts';

const UI_DIR = SERVER_FILES.sandboxUi;
const UI_FILES: Record<string, string> = {
  'handset.css': 'text/css; charset=utf-8',
  'handset.js': 'text/javascript; charset=utf-8',
};
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

type DemoOrganization = { id: string; name: string };

/** How many of the latest events the handset's panel is given. */
const HANDSET_EVENTS = 20;

/**
 * The seeded demo organization: the one named in DATA_DIR/sandbox-credentials.json, else (another
 * instance seeded a shared PostgreSQL) the oldest organization holding the demo signing key.
 */
async function findDemoOrganization(ctx: AppContext): Promise<DemoOrganization | undefined> {
  const db = ctx.database.db;
  let fromFile: string | undefined;
  try {
    const file = path.join(ctx.config.DATA_DIR, 'sandbox-credentials.json');
    fromFile = (JSON.parse(readFileSync(file, 'utf8')) as SandboxCredentialsFile).organizationId;
  } catch {}
  if (fromFile) {
    const org = await one<DemoOrganization>(
      db,
      sql`select id, name from organizations where id = ${fromFile}`,
    );
    if (org) return org;
  }
  return one<DemoOrganization>(
    db,
    sql`select o.id, o.name from credentials c join organizations o on o.id = c.organization_id
  where c.key_id = ${DEMO_KEY_ID} order by o.created_at limit 1`,
  );
}

/** Order ids behind the payments a move asked for, so the page can poll them. */
async function orderIdOf(ctx: AppContext, transactionIds: string[]): Promise<string | undefined> {
  if (transactionIds.length === 0) return undefined;
  const row = await one<{ orderId: string }>(
    ctx.database.db,
    sql`select order_id as "orderId" from transactions where id = any(${sql.param(transactionIds)}::text[])`,
  );
  return row?.orderId;
}

function sendFile(reply: FastifyReply, name: string, type: string, body: Buffer | string) {
  if (name.endsWith('.html')) reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
  return reply
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'no-cache')
    .type(type)
    .send(body);
}

/**
 * Sandbox only (not registered in production): a phone-like USSD handset at GET /sandbox/ussd, and the
 * JSON it runs on under /sandbox/api. Unauthenticated, and it acts only as the demo organization: it
 * calls the same service verbs as POST /v1/ussd/session and /v1/ussd/process (one transaction per
 * move, the same payment requests after the commit) and reads payment status with the same query.
 */
export async function sandboxHandsetRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const db = ctx.database.db;
  // The page asks for /sandbox/api/events only when it is told the preview is on: with it off that
  // route does not exist, and the request would be a 404 in the browser's console.
  const page = readFileSync(path.join(UI_DIR, 'index.html'), 'utf8').replace(
    '{{webhooksPreview}}',
    String(ctx.config.WEBHOOKS_PREVIEW),
  );
  const files = new Map(Object.keys(UI_FILES).map((name) => [name, readFileSync(path.join(UI_DIR, name))]));

  let demo: DemoOrganization | undefined;
  const demoOrganization = async (): Promise<DemoOrganization> => {
    demo ??= await findDemoOrganization(ctx);
    if (!demo) {
      throw new AppError(
        404,
        ErrorLabel.notFound,
        'No sandbox demo organization: start the sandbox on an empty store',
      );
    }
    return demo;
  };

  app.get('/sandbox/ussd', (_request, reply) =>
    sendFile(reply, 'index.html', 'text/html; charset=utf-8', page),
  );
  app.get<{ Params: { file: string } }>('/sandbox/ussd/assets/:file', (request, reply) => {
    const { file } = request.params;
    const body = Object.hasOwn(UI_FILES, file) ? files.get(file) : undefined;
    if (!body) return reply.callNotFound();
    return sendFile(reply, file, UI_FILES[file]!, body);
  });

  app.get('/sandbox/api/customers', async () => {
    const organization = await demoOrganization();
    const { data } = await listCustomers({
      db,
      organizationId: organization.id,
      query: { page: 1, limit: 100, isActive: true },
    });
    const customers = data.map(({ id, firstName, lastName, msisdn }) => ({
      id,
      firstName,
      lastName,
      msisdn,
    }));
    return { organization, data: customers };
  });

  app.post(
    '/sandbox/api/ussd/session',
    { schema: { body: ussdSessionRequestSchema } },
    async (request, reply) => {
      const { customerId } = request.body as UssdSessionRequest;
      const { id: organizationId } = await demoOrganization();
      const result = await ctx.database.onOneConnection((db) =>
        createUssdSession({ ctx, db, input: { organizationId, customerId }, log: request.log }),
      );
      ctx.metrics.ussdMoves.inc({ state: result.state });
      return reply.code(result.status).send(result.body);
    },
  );

  app.post(
    '/sandbox/api/ussd/process',
    { schema: { body: ussdProcessRequestSchema } },
    async (request, reply) => {
      const { sessionId, choice } = request.body as UssdProcessRequest;
      const { id: organizationId } = await demoOrganization();
      const result = await ctx.database.onOneConnection((db) =>
        processUssdChoice({ ctx, db, input: { organizationId, sessionId, choice }, log: request.log }),
      );
      ctx.metrics.ussdMoves.inc({ state: result.state });
      // As the real route: the worker sends the queued requests once the move committed.
      if (result.payments.length > 0) ctx.paymentWorker?.nudge();
      const orderId = await orderIdOf(
        ctx,
        result.payments.map((p) => p.id),
      );
      return reply.code(result.status).send({ ...result.body, ...(orderId ? { orderId } : {}) });
    },
  );

  // WEBHOOKS_PREVIEW only (else a 404, and the page shows no panel): the demo organization's latest
  // webhook events, so that the page can list the ones its moves caused.
  if (ctx.config.WEBHOOKS_PREVIEW) {
    app.get('/sandbox/api/events', async () => {
      const { id: organizationId } = await demoOrganization();
      return { data: await recentEvents(db, organizationId, HANDSET_EVENTS) };
    });
  }

  // The phone's SMS inbox (docs/sms.md, "Sandbox"): the investor SMS sent to the customer's number.
  app.get<{ Params: { customerId: string } }>('/sandbox/api/sms/:customerId', async (request) => {
    const { customerId } = request.params;
    if (!CUID_PATTERN.test(customerId))
      throw new AppError(400, ErrorLabel.invalidRequest, 'customerId must be a customer id');
    const { id: organizationId } = await demoOrganization();
    return { data: await smsOfNumber(db, organizationId, customerId) };
  });

  app.get<{ Params: { orderId: string } }>('/sandbox/api/payment/status/:orderId', async (request) => {
    const { orderId } = request.params;
    if (!CUID_PATTERN.test(orderId)) {
      throw new AppError(400, ErrorLabel.invalidRequest, ErrorMessage.invalidOrderReference);
    }
    const { id: organizationId } = await demoOrganization();
    const data = await getPaymentStatus({ db, organizationId, orderId });
    if (!data)
      throw new AppError(404, ErrorLabel.transactionNotFound, ErrorMessage.transactionNotFound(orderId));
    return { data };
  });
}
