/**
 * The ceiling of bench scenario 2: Fastify 5 with its defaults, no logger, no hooks, one route that
 * answers the same bytes and headers as GET /v1/webhooks/key. Started by bench/run.ts in its own
 * process (PORT from the environment) and measured with the same autocannon settings, so the gap is
 * what the service's pipeline costs (rate limit, request id, logging, metrics).
 */
import { generateKeyPairSync } from 'node:crypto';
import { WEBHOOK_KEY_CACHE_CONTROL } from '@partner-api/contract';
import Fastify from 'fastify';
import { describeWebhookKey } from '../packages/server/src/services/webhooks/signing-key.ts';

const { privateKey } = generateKeyPairSync('ed25519');
const body = JSON.stringify(
  describeWebhookKey({
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    appEnv: 'sandbox',
    generation: 2,
  }),
);

const app = Fastify({ logger: false });
app.get('/key', (_request, reply) => {
  reply.header('cache-control', WEBHOOK_KEY_CACHE_CONTROL).type('application/json; charset=utf-8').send(body);
});
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
