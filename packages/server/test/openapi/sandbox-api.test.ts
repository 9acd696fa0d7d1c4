import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ErrorLabel, ErrorMessage } from '@partner-api/contract';
import { buildTestApp, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { DEMO_CREDENTIAL_PATH } from '../../src/routes/sandbox-demo-credential.ts';
import { createRuntime } from '../../src/runtime.ts';
import { startPayments } from '../../src/services/payments/pipeline/start.ts';
import type { PaymentWorker } from '../../src/services/payments/pipeline/worker.ts';
import { type SandboxCredentialsFile, seedSandbox } from '../../src/services/sandbox/seed.ts';
import { insertCustomer } from '../ussd/support.ts';

type Screen = {
  status: number;
  body: {
    message: string;
    data: { sessionId: string; currentState: string; ussdText: string };
    orderId?: string;
  };
};

describe('the sandbox handset API (/sandbox/api)', () => {
  let t: TestApp;
  let simulator: PaymentWorker;
  beforeAll(async () => {
    t = await buildTestApp('pglite', { SANDBOX_SETTLE_MS: '50' });
    await seedSandbox({ db: t.ctx.database.db, dataDir: t.dataDir, baseUrl: 'http://localhost:8080' });
    simulator = startPayments(t.ctx, t.app.log);
  });
  afterAll(async () => {
    await simulator?.stop();
    await t?.close();
  });

  const post = async (url: string, payload: object): Promise<Screen> => {
    const res = await t.app.inject({ method: 'POST', url, payload });
    return { status: res.statusCode, body: res.json() };
  };

  it('serves the handset page and its assets from files, without outside resources', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/sandbox/ussd' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toContain("default-src 'self'");
    expect(page.body).not.toMatch(/https?:\/\//);
    for (const asset of ['handset.js', 'handset.css']) {
      const res = await t.app.inject({ method: 'GET', url: `/sandbox/ussd/assets/${asset}` });
      expect(res.statusCode).toBe(200);
    }
    expect(
      (await t.app.inject({ method: 'GET', url: '/sandbox/ussd/assets/..%2Findex.html' })).statusCode,
    ).toBe(404);
  });

  it('lists the active customers of the seeded demo organization only', async () => {
    await createPartner(t); // another organization, with its own customers, stays invisible
    const res = await t.app.inject({ method: 'GET', url: '/sandbox/api/customers' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.organization.name).toBe('Demo Investments');
    expect(body.data.map((c: { firstName: string }) => c.firstName).sort()).toEqual([
      'Amina',
      'Brian',
      'Chebet',
      'Daudi',
    ]);
    expect(Object.keys(body.data[0]).sort()).toEqual(['firstName', 'id', 'lastName', 'msisdn']);
  });

  it('runs a buy through the real USSD verbs and reports the payment as it settles', async () => {
    const customers = (await t.app.inject({ method: 'GET', url: '/sandbox/api/customers' })).json().data;
    const amina = customers.find((c: { firstName: string }) => c.firstName === 'Amina');
    const start = await post('/sandbox/api/ussd/session', { customerId: amina.id });
    expect([start.status, start.body.data.currentState]).toEqual([201, 'HOME']);
    const { sessionId } = start.body.data;
    let screen = start;
    for (const choice of ['1', '1', '1', '1000', '1']) {
      screen = await post('/sandbox/api/ussd/process', { sessionId, choice });
      expect(screen.status).toBe(200);
    }
    expect(screen.body.data.currentState).toBe('BUY_SUBMITTED');
    const orderId = screen.body.orderId!;
    expect(screen.body.data.ussdText).toContain(orderId);
    let status = '';
    for (let i = 0; i < 100 && status !== 'SUCCESS'; i++) {
      const res = await t.app.inject({ method: 'GET', url: `/sandbox/api/payment/status/${orderId}` });
      status = res.json().data.payment.status;
      if (status !== 'SUCCESS') await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe('SUCCESS');
  });

  it("answers as the real routes do: validation, another organization's customer, unknown order", async () => {
    const invalid = await post('/sandbox/api/ussd/process', { sessionId: 'ussd_1', choice: '1 2' });
    expect([invalid.status, invalid.body]).toEqual([
      400,
      {
        error: ErrorLabel.validation,
        details: [{ field: 'choice', message: 'Choice must be alphanumeric' }],
      },
    ]);
    const stranger = await insertCustomer(t, await createPartner(t));
    const foreign = await post('/sandbox/api/ussd/session', { customerId: stranger });
    expect([foreign.status, foreign.body]).toEqual([
      404,
      { error: ErrorLabel.customerNotFound, message: ErrorMessage.ussdCustomerNotFound },
    ]);
    const unknown = await t.app.inject({ method: 'GET', url: '/sandbox/api/payment/status/not-an-order' });
    expect([unknown.statusCode, unknown.json().message]).toEqual([400, ErrorMessage.invalidOrderReference]);
  });
});

describe('the sandbox demo credential for "Try it out" on /docs', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp('pglite');
  });
  afterAll(() => t?.close());

  it('is 404 until the sandbox seeded this data directory', async () => {
    const res = await t.app.inject({ method: 'GET', url: DEMO_CREDENTIAL_PATH });
    expect([res.statusCode, res.json().error]).toEqual([404, ErrorLabel.notFound]);
  });

  it('is the credential of sandbox-credentials.json, never cached, and it gets a token', async () => {
    const file = await seedSandbox({
      db: t.ctx.database.db,
      dataDir: t.dataDir,
      baseUrl: 'http://localhost:8080',
    });
    const seeded = JSON.parse(readFileSync(file!, 'utf8')) as SandboxCredentialsFile;
    const res = await t.app.inject({ method: 'GET', url: DEMO_CREDENTIAL_PATH });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const { clientId, clientSecret, keyId, privateKey } = seeded;
    expect(res.json()).toEqual({ clientId, clientSecret, keyId, privateKey });
    const token = await t.app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      payload: { clientId, clientSecret },
    });
    expect(token.statusCode).toBe(200);
  });

  it('is offered by the reference page, whose scripts are served locally', async () => {
    const docs = await t.app.inject({ method: 'GET', url: '/docs' });
    expect(docs.body).toContain(`id="try-use-demo" data-url="${DEMO_CREDENTIAL_PATH}"`);
    for (const asset of ['browser-signer.js', 'try-it-out.js', 'reference.js']) {
      const res = await t.app.inject({ method: 'GET', url: `/docs/assets/${asset}` });
      expect([res.statusCode, res.headers['content-type']]).toEqual([200, 'text/javascript; charset=utf-8']);
      expect(docs.body).toContain(`<script src="/docs/assets/${asset}"></script>`);
    }
  });
});

describe('in production', () => {
  let app: FastifyInstance;
  let close: () => Promise<void>;
  beforeAll(async () => {
    // Production needs DATABASE_URL to start; the routes under test do not, so the config is built directly.
    const dataDir = mkdtempSync(path.join(tmpdir(), 'partner-api-test-'));
    const config = {
      ...loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PUBLIC_BASE_URL: 'https://api.example.com' }),
      APP_ENV: 'production' as const,
    };
    const ctx = await createRuntime(config, { storePath: 'memory://' });
    app = await buildApp(ctx, { logger: false });
    close = async () => {
      await app.close();
      await ctx.close();
    };
  });
  afterAll(() => close?.());

  it('has no handset: /sandbox/ussd and /sandbox/api are not registered', async () => {
    for (const url of [
      '/sandbox/ussd',
      '/sandbox/ussd/assets/handset.js',
      '/sandbox/api/customers',
      DEMO_CREDENTIAL_PATH,
    ]) {
      const res = await app.inject({ method: 'GET', url });
      expect([res.statusCode, res.json()]).toEqual([404, { error: 'Not Found' }]);
    }
  });

  it('serves the reference and the document, naming the production server', async () => {
    const document = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    expect(document.servers).toEqual([{ url: 'https://api.example.com/v1', description: 'Production' }]);
    const docs = await app.inject({ method: 'GET', url: '/docs' });
    expect(docs.statusCode).toBe(200);
    expect(docs.body).not.toContain('/sandbox/ussd');
    // "Try it out" signs with a pasted credential only: no demo credential, nor a way to ask for one.
    expect(docs.body).toContain('id="try-form"');
    expect(docs.body).not.toContain('try-use-demo');
    expect(docs.body).not.toContain('/sandbox/');
    expect(docs.body).not.toMatch(/demo credential/i);
  });
});
