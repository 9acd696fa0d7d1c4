import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { marked } from 'marked';
import type { AppContext } from '../context.ts';
import { SERVER_FILES } from '../lib/package-paths.ts';
import { buildOpenApiDocument } from '../openapi/build-document.ts';
import type { CatalogRoute } from '../openapi/route-catalog.ts';
import type { OpenApiDocument } from '../openapi/types.ts';
import { withReferenceClients } from './reference-clients.ts';
import { DEMO_CREDENTIAL_PATH } from './sandbox-demo-credential.ts';

const OWN_ASSETS = SERVER_FILES.openApiAssets;
const SIGNING_GUIDE = SERVER_FILES.signingGuide;
const SWAGGER_UI = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** Everything the pages load comes from this server: the machines (and many partners' networks) are offline. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "img-src 'self' data:",
  "style-src 'self' 'unsafe-inline'",
  "script-src 'self'",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

type Asset = { type: string; body: Buffer };
const ASSET_FILES: Record<string, { dir: string; type: string }> = {
  'swagger-ui.css': { dir: SWAGGER_UI, type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { dir: SWAGGER_UI, type: 'text/javascript; charset=utf-8' },
  'docs.css': { dir: OWN_ASSETS, type: 'text/css; charset=utf-8' },
  'reference.js': { dir: OWN_ASSETS, type: 'text/javascript; charset=utf-8' },
  'browser-signer.js': { dir: OWN_ASSETS, type: 'text/javascript; charset=utf-8' },
  'try-it-out.js': { dir: OWN_ASSETS, type: 'text/javascript; charset=utf-8' },
};

const REFERENCE_SCRIPTS = ['swagger-ui-bundle.js', 'browser-signer.js', 'try-it-out.js', 'reference.js']
  .map((name) => `<script src="/docs/assets/${name}"></script>`)
  .join('');

/**
 * The "Try it out" credential panel. Only the sandbox offers its demo credential (the button and the
 * endpoint it reads); production pages carry neither, and sign with a pasted credential only.
 */
function tryItOutPanel(appEnv: 'sandbox' | 'production'): string {
  const demoButton =
    appEnv === 'sandbox'
      ? `<p><button type="button" id="try-use-demo" data-url="${DEMO_CREDENTIAL_PATH}">Use the sandbox demo credential</button></p>`
      : '';
  return page(readFileSync(path.join(OWN_ASSETS, 'try-it-out.html'), 'utf8'), { demoButton });
}

// Read once per process (the bundle is 1.7 MB); every app built in a test process shares them.
let assets: Map<string, Asset> | undefined;
function loadAssets(): Map<string, Asset> {
  assets ??= new Map(
    Object.entries(ASSET_FILES).map(([name, { dir, type }]) => [
      name,
      { type, body: readFileSync(path.join(dir, name)) },
    ]),
  );
  return assets;
}

const documents = new WeakMap<FastifyInstance, OpenApiDocument>();

/** The document an app serves (the test suite's contract check reads it without a request). */
export function openApiDocumentOf(app: FastifyInstance): OpenApiDocument | undefined {
  return documents.get(app);
}

function page(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{(\w+)\}\}/g, (_, key: string) => values[key] ?? '');
}

function sendHtml(reply: FastifyReply, html: string) {
  return reply
    .header('content-security-policy', CONTENT_SECURITY_POLICY)
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'no-cache')
    .type('text/html; charset=utf-8')
    .send(html);
}

/**
 * GET /v1/openapi.json, GET /docs (the rendered reference) and GET /docs/signing, in sandbox and
 * production alike (a public reference is normal). Unauthenticated; rate limited like every route.
 * Called on the root app after every /v1 route is registered: the document is built once, here.
 */
export function registerDocs(
  app: FastifyInstance,
  { ctx, routes }: { ctx: AppContext; routes: CatalogRoute[] },
) {
  const document = buildOpenApiDocument({
    routes,
    publicBaseUrl: ctx.config.PUBLIC_BASE_URL,
    appEnv: ctx.config.APP_ENV,
    preview: ctx.config.WEBHOOKS_PREVIEW,
    investments: ctx.config.INVESTMENTS_PREVIEW,
  });
  documents.set(app, document);
  const documentJson = JSON.stringify(document);
  const layout = readFileSync(path.join(OWN_ASSETS, 'layout.html'), 'utf8');
  const sandboxLink = ctx.config.APP_ENV === 'sandbox' ? '<a href="/sandbox/ussd">USSD handset</a>' : '';
  const referenceHtml = page(layout, {
    title: document.info.title,
    styles: '<link rel="stylesheet" href="/docs/assets/swagger-ui.css">',
    sandboxLink,
    main: `${tryItOutPanel(ctx.config.APP_ENV)}<div id="swagger-ui"></div>${REFERENCE_SCRIPTS}`,
  });
  const signingHtml = page(layout, {
    title: `Signing requests · ${document.info.title}`,
    sandboxLink,
    main: `<article class="guide">${marked.parse(withReferenceClients(app, readFileSync(SIGNING_GUIDE, 'utf8')), { async: false })}</article>`,
  });

  app.get('/v1/openapi.json', (_request, reply) => {
    reply.header('cache-control', 'no-cache').type('application/json; charset=utf-8').send(documentJson);
  });
  app.get('/docs', (_request, reply) => sendHtml(reply, referenceHtml));
  app.get('/docs/signing', (_request, reply) => sendHtml(reply, signingHtml));
  app.get<{ Params: { file: string } }>('/docs/assets/:file', (request, reply) => {
    const asset = Object.hasOwn(ASSET_FILES, request.params.file)
      ? loadAssets().get(request.params.file)
      : undefined;
    if (!asset) return reply.callNotFound();
    return reply
      .header('cache-control', 'public, max-age=3600')
      .header('x-content-type-options', 'nosniff')
      .type(asset.type)
      .send(asset.body);
  });
}
