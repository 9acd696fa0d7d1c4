import Fastify, { type FastifyInstance, type FastifyRequest, LogController } from 'fastify';
import type { AppContext } from './context.ts';
import { accessLineWriter } from './lib/logger.ts';
import { trustProxyOption } from './lib/trust-proxy.ts';
import { collectRoutes } from './openapi/route-catalog.ts';
import { createAuthenticator } from './plugins/auth.ts';
import { baseFastifyOptions, type LogOptions } from './plugins/base-options.ts';
import { installBodyParsers } from './plugins/body-parsing.ts';
import { installErrorHandling } from './plugins/errors.ts';
import { installRateLimits } from './plugins/rate-limit.ts';
import { installRequestId } from './plugins/request-id.ts';
import { installUnusedConnectionClose } from './plugins/unused-connections.ts';
import { installValidation } from './plugins/validation.ts';
import { customerRoutes } from './routes/customers.ts';
import { registerDocs } from './routes/docs.ts';
import { healthRoutes } from './routes/health.ts';
import { investmentRoutes } from './routes/investments/index.ts';
import { oauthRoutes, tokenRoute } from './routes/oauth.ts';
import { paymentCallbackRoute } from './routes/payment-callback.ts';
import { paymentRoutes } from './routes/payments.ts';
import { sandboxDemoCredentialRoutes } from './routes/sandbox-demo-credential.ts';
import { sandboxHandsetRoutes } from './routes/sandbox-handset.ts';
import { ussdRoutes } from './routes/ussd.ts';
import { webhookKeyRoute } from './routes/webhook-key.ts';
import { webhookStreamRoute } from './routes/webhook-stream.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { callerCacheOf } from './services/auth/caller-cache.ts';
import { createTokenCodec } from './services/auth/tokens.ts';
import { callbackPipelineFor } from './services/payments/pipeline/start.ts';
import { PAYMENT_PROVIDERS } from './services/payments/providers/index.ts';
import { smsReportRoutes } from './services/sms/routes.ts';

export type BuildOptions = LogOptions;

/** Builds the public app; the process (listen, signals) belongs to server.ts. */
export async function buildApp(ctx: AppContext, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    ...baseFastifyOptions(ctx, options),
    // One access line per request (installRequestMetrics) instead of Fastify's two: half the cost.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: trustProxyOption(ctx.config.TRUST_PROXY),
    bodyLimit: 102_400,
    // While draining, requests on open connections are still served (Fastify's own 503 body is not a spec shape).
    return503OnClosing: false,
  });

  installErrorHandling(app);
  installBodyParsers(app);
  installValidation(app);
  installRequestId(app);
  installUnusedConnectionClose(app);
  installRequestMetrics(app, ctx);
  // Security order (docs/decisions.md, Request pipeline): rate limit here; token, client id,
  // allowlist, signature, digest in the auth plugin; then schema validation; then idempotency.
  const callerCache = callerCacheOf(ctx);
  installRateLimits(app, {
    global: ctx.config.RATE_LIMIT_GLOBAL,
    token: ctx.config.RATE_LIMIT_TOKEN,
    callbacks: ctx.config.PROVIDER_CALLBACK_RATE_LIMIT,
    redis: ctx.redis,
    prefix: ctx.rateLimitPrefix,
    metrics: ctx.metrics,
    readEpoch: callerCache.mode === 'redis' ? () => callerCache.readRedis() : undefined,
  });

  // Every route is recorded with its schemas: the OpenAPI document is built from them.
  const routeCatalog = collectRoutes(app);
  await app.register(healthRoutes, { ctx });
  const codec = createTokenCodec(ctx.secrets.jwtSecret);
  const deps = { ctx, codec };
  await app.register(
    async (v1) => {
      // Unauthenticated: the token exchange, the webhook public key, the provider's signed callback.
      await v1.register(tokenRoute, deps);
      await v1.register(webhookKeyRoute, deps);
      await v1.register(paymentCallbackRoute, deps);
      // Each configured provider's callbacks: the pipeline confirms each by a query to the provider.
      for (const provider of PAYMENT_PROVIDERS) {
        const settings = ctx.config[provider.key];
        if (!settings || !provider.callbackRoutes) continue;
        ctx.callbackPipeline ??= callbackPipelineFor(ctx, app.log);
        await v1.register(provider.callbackRoutes as never, {
          ctx,
          settings,
          pipeline: ctx.callbackPipeline,
        });
      }
      // The SMS gateway's delivery reports (docs/sms.md), when a gateway is configured.
      if (ctx.config.sms) await v1.register(smsReportRoutes, { ctx, settings: ctx.config.sms });
      await v1.register(async (authenticated) => {
        authenticated.addHook('preValidation', createAuthenticator(ctx, codec));
        await authenticated.register(oauthRoutes, deps);
        await authenticated.register(customerRoutes, deps);
        await authenticated.register(paymentRoutes, deps);
        await authenticated.register(ussdRoutes, deps);
        // Outbound webhooks (docs/webhooks.md): while the preview is off these paths stay unmatched routes.
        if (ctx.config.WEBHOOKS_PREVIEW) await authenticated.register(webhookRoutes, deps);
        // Preview only (docs/webhooks.md): the live event stream `partner listen` reads.
        if (ctx.config.WEBHOOKS_PREVIEW) await authenticated.register(webhookStreamRoute, deps);
        // The investments API (docs/investments.md): while its preview is off these paths stay unmatched.
        if (ctx.config.INVESTMENTS_PREVIEW) await authenticated.register(investmentRoutes, deps);
      });
    },
    { prefix: '/v1' },
  );
  // After every /v1 route: GET /v1/openapi.json, /docs and /docs/signing (sandbox and production).
  registerDocs(app, { ctx, routes: routeCatalog });
  // The browser handset and the demo credential exist only in the sandbox: in production their routes
  // are not registered.
  if (ctx.config.APP_ENV === 'sandbox') {
    await app.register(sandboxHandsetRoutes, { ctx });
    await app.register(sandboxDemoCredentialRoutes, { ctx });
  }
  return app;
}

type RouteOptions = FastifyRequest['routeOptions'];

/**
 * The segment after `/v1/payments/callbacks/<provider>/` is a provider's path token, whatever the
 * method, slashes or case: a request no route matched (a GET, PUT or DELETE probing the path) is
 * logged with it replaced too.
 */
const CALLBACK_TOKEN_IN_PATH = /^(\/+v1\/+(?:payments|sms)\/+callbacks\/+[^/]+\/+)[^/]+/i;

/** The path without its query string, and with a path token replaced (services/payments/providers/mpesa/routes.ts). */
function loggedPath(request: FastifyRequest, { url: route, config }: RouteOptions): string | undefined {
  const redact = config?.redactParams;
  if (!redact || !route) return request.url.split('?', 1)[0]!.replace(CALLBACK_TOKEN_IN_PATH, '$1[REDACTED]');
  const params = request.params as Record<string, string>;
  return route.replace(/:(\w+)/g, (_, name: string) =>
    redact.includes(name) ? '[REDACTED]' : (params[name] ?? ''),
  );
}

/**
 * Per response: the metrics, and the one access log line (with the request id, like every line). The
 * path is logged without its query string: a customer search carries names and phone numbers.
 */
function installRequestMetrics(app: FastifyInstance, ctx: AppContext): void {
  const access = accessLineWriter(app.log);
  // Callback style: no promise and no microtask per request (docs/performance.md, "The key
  // route against bare Fastify").
  app.addHook('onResponse', (request, reply, done) => {
    // Fastify builds `routeOptions` afresh on each read: read once.
    const options = request.routeOptions;
    const route = options.url ?? 'unmatched';
    const responseTime = reply.elapsedTime;
    ctx.metrics.requests.record(route, request.method, reply.statusCode, responseTime / 1000);
    access({
      reqId: request.id,
      method: request.method,
      path: loggedPath(request, options),
      statusCode: reply.statusCode,
      responseTime,
      // The peer, as Fastify's own line had it (request.ip would parse X-Forwarded-For once more).
      remoteAddress: request.socket.remoteAddress,
    });
    done();
  });
}
