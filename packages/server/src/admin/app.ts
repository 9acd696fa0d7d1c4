import { createHash, timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { registerConsoleRoutes } from '../console/routes.ts';
import type { AppContext } from '../context.ts';
import { unauthorized, validationFailed } from '../lib/errors.ts';
import { InvalidPublicKeyError } from '../lib/keys.ts';
import { baseFastifyOptions } from '../plugins/base-options.ts';
import { installBodyParsers } from '../plugins/body-parsing.ts';
import { installErrorHandling } from '../plugins/errors.ts';
import { installRequestId } from '../plugins/request-id.ts';
import { installUnusedConnectionClose } from '../plugins/unused-connections.ts';
import { installValidation } from '../plugins/validation.ts';
import { metricsHandler } from '../routes/health.ts';
import { invalidateCallers } from '../services/auth/caller-cache.ts';
import { createCredential } from '../services/credentials/create.ts';
import { listCredentials, setSigningKey, updateCredential } from '../services/credentials/update.ts';
import { createOrganization } from '../services/organizations/create.ts';
import { listOrganizations } from '../services/organizations/list.ts';
import { updateOrganization } from '../services/organizations/update.ts';
import { registerMarketRoutes } from './market.ts';
import { installAuditLog, registerOperatorRoutes } from './operators.ts';
import { registerReportRoutes } from './reports.ts';
import * as s from './schemas.ts';
import { registerTradingRoutes } from './trading.ts';

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Key problems are the operator's input errors: answer them as validation on `publicKey`. */
async function withKeyValidation<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof InvalidPublicKeyError)
      throw validationFailed([{ field: 'publicKey', message: error.message }]);
    throw error;
  }
}

/** The operator's API, on its own listener (ADMIN_HOST:ADMIN_PORT, loopback by default). */
export async function buildAdminApp(
  ctx: AppContext,
  options: { logger?: boolean } = {},
): Promise<FastifyInstance> {
  const app = Fastify({
    // As on the public listener: logs, request ids, an over-long id reaches validation (400) and a
    // malformed URL gets a request id and a spec shape, not Fastify's own bodies.
    ...baseFastifyOptions(ctx, options),
  });
  installErrorHandling(app);
  installBodyParsers(app);
  installValidation(app);
  installRequestId(app);
  installUnusedConnectionClose(app);

  const expected = digest(ctx.secrets.adminToken);
  app.addHook('onRequest', async (request) => {
    // The console's routes authenticate by session (console/routes.ts); every other route by token.
    if (request.routeOptions.config?.console) return;
    const header = request.headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice(7) : '';
    // Compare digests so the comparison is constant-time whatever the presented length.
    if (!token || !timingSafeEqual(digest(token), expected)) throw unauthorized('Invalid admin token');
    request.auditActor = { type: 'admin-token' };
  });
  installAuditLog(app, ctx);
  // The console's request history (docs/console.md, Charts): one sampler per process, stopped on close.
  ctx.metrics.history.start(ctx.config.METRICS_SAMPLE_SECONDS * 1000, () => ctx.clock());
  app.addHook('onClose', async () => ctx.metrics.history.stop());

  const db = ctx.database.db;
  // Prometheus scrapes it with the admin token (`authorization: { credentials: … }`).
  app.get('/metrics', metricsHandler(ctx));
  app.post('/admin/organizations', { schema: { body: s.organizationCreateBody } }, async (request, reply) => {
    const organization = await createOrganization({ db, input: request.body as never });
    return reply.code(201).send(organization);
  });
  app.get('/admin/organizations', async () => listOrganizations({ db }));
  app.patch(
    '/admin/organizations/:id',
    { schema: { params: s.idParams, body: s.organizationPatchBody } },
    async (request) => {
      const { id } = request.params as { id: string };
      return invalidateCallers(
        ctx,
        () => updateOrganization({ db, id, patch: request.body as never }),
        request.log,
      );
    },
  );

  app.post(
    '/admin/organizations/:id/credentials',
    { schema: { params: s.idParams, body: s.credentialCreateBody } },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const created = await withKeyValidation(() =>
        createCredential({ db, organizationId: id, input: request.body as never }),
      );
      return reply.code(201).send(created);
    },
  );
  app.get('/admin/credentials', { schema: { querystring: s.organizationFilter } }, async (request) => {
    const { organizationId } = request.query as { organizationId?: string };
    return listCredentials(db, organizationId);
  });
  app.put(
    '/admin/credentials/:id/signing-key',
    { schema: { params: s.idParams, body: s.signingKeyBody } },
    async (request) => {
      const { id } = request.params as { id: string };
      const { publicKey, keyId } = request.body as { publicKey: unknown; keyId: string };
      return invalidateCallers(
        ctx,
        () => withKeyValidation(() => setSigningKey({ db, id, publicKey, keyId })),
        request.log,
      );
    },
  );
  app.patch(
    '/admin/credentials/:id',
    { schema: { params: s.idParams, body: s.credentialPatchBody } },
    async (request) => {
      const { id } = request.params as { id: string };
      return invalidateCallers(
        ctx,
        () => updateCredential({ db, id, patch: request.body as never }),
        request.log,
      );
    },
  );
  registerTradingRoutes(app, ctx);
  registerMarketRoutes(app, ctx);
  registerReportRoutes(app, ctx);
  registerOperatorRoutes(app, ctx);
  registerConsoleRoutes(app, ctx);
  return app;
}
