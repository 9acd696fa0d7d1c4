import { WEBHOOK_KEY_CACHE_CONTROL } from '@partner-api/contract';
import type { FastifyInstance } from 'fastify';
import { describeWebhookKey } from '../services/webhooks/signing-key.ts';
import type { RouteDeps } from './deps.ts';

/**
 * GET /webhooks/key: unauthenticated (registered outside the auth scope), still under the global
 * rate limit. The body never changes while the process runs, so it is built and serialised once.
 */
export async function webhookKeyRoute(app: FastifyInstance, { ctx }: RouteDeps) {
  const body = JSON.stringify(
    describeWebhookKey({
      privateKeyPem: ctx.secrets.webhookSigningKey,
      appEnv: ctx.config.APP_ENV,
      generation: ctx.config.WEBHOOK_KEY_GENERATION,
    }),
  );
  app.get('/webhooks/key', (_request, reply) => {
    reply
      .header('cache-control', WEBHOOK_KEY_CACHE_CONTROL)
      .type('application/json; charset=utf-8')
      .send(body);
  });
}
