import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createId, ErrorMessage } from '@partner-api/contract';
import { freePort, type Sandbox, startSandbox } from '@partner-api/testkit/process.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  ConnectionError,
  createUssdGatewayHandler,
  IdempotencyError,
  NotFoundError,
  PartnerClient,
  type PaymentStatusResponse,
  ValidationError,
} from '../src/index.ts';
import { ORDER_REF, record } from './support.ts';

/** Every call below goes through the SDK against a real server process: nothing is injected. */
describe('the SDK against a real sandbox server', () => {
  let sandbox: Sandbox;
  let client: PartnerClient;
  const newClient = (overrides = {}) => PartnerClient.fromSandboxFile(sandbox.credentialsFile, overrides);

  beforeAll(async () => {
    sandbox = await startSandbox();
    client = newClient();
  });
  afterAll(async () => {
    await sandbox?.server.stop();
  });

  describe('oauth', () => {
    it('token: exchanges the credentials for a bearer token and caches it', async () => {
      const c = newClient();
      const events = record(c);
      const token = await c.oauth.token();
      expect(token).toMatchObject({
        message: 'Authentication successful',
        tokenType: 'Bearer',
        expiresIn: 3600,
        maxTTL: 86400,
        organization: { clientId: sandbox.credentials.clientId },
      });
      await c.oauth.me();
      await c.oauth.me();
      expect(events.requests.map((e) => e.path)).toEqual(['/oauth/token', '/oauth/me', '/oauth/me']);
    });

    it('concurrent first calls share one token fetch', async () => {
      const c = newClient();
      const events = record(c);
      await Promise.all(Array.from({ length: 8 }, () => c.oauth.me()));
      expect(events.requests.filter((e) => e.path === '/oauth/token')).toHaveLength(1);
    });

    it('me: the organization with its active credentials', async () => {
      const { data } = await client.oauth.me();
      expect(data.name).toBe('Demo Investments');
      expect(data.credentials.map((c) => c.clientId)).toContain(sandbox.credentials.clientId);
    });

    it('revoke: the signed revoke (no body headers) is accepted and the next call gets a new token', async () => {
      const c = newClient();
      const events = record(c);
      const first = await c.oauth.token();
      expect(await c.oauth.revoke()).toEqual({ message: 'Token revoked successfully' });
      await c.oauth.me();
      const tokens = events.requests.filter((e) => e.path === '/oauth/token');
      expect(tokens).toHaveLength(2);
      expect(events.responses.map((e) => [e.path, e.status])).toEqual([
        ['/oauth/token', 200],
        ['/oauth/revoke', 200],
        ['/oauth/token', 200],
        ['/oauth/me', 200],
      ]);
      // The revoked token is refused by the server from now on.
      const other = newClient();
      await expect(other.oauth.revoke({ token: first.token })).rejects.toMatchObject({
        status: 401,
        message: ErrorMessage.tokenInvalid,
      });
    });

    it('a token revoked behind the client is answered by one transparent refresh', async () => {
      const victim = newClient();
      const events = record(victim);
      const { token } = await victim.oauth.token();
      // Another process of the same partner revokes the token this client holds.
      await newClient().oauth.revoke({ token });
      events.clear();
      const list = await victim.customers.list({ limit: 1 });
      expect(list.data).toHaveLength(1);
      expect(events.responses.map((e) => [e.path, e.status, e.error?.message])).toEqual([
        ['/customers', 401, ErrorMessage.tokenInvalid],
        ['/oauth/token', 200, undefined],
        ['/customers', 200, undefined],
      ]);
    });

    it('wrong credentials fail the token call with an AuthenticationError', async () => {
      const c = newClient({ clientSecret: `${'0'.repeat(32)}_${'0'.repeat(32)}` });
      await expect(c.oauth.me()).rejects.toMatchObject({
        name: 'AuthenticationError',
        status: 401,
        message: ErrorMessage.invalidCredentials,
      });
    });
  });

  describe('signatures made by the SDK', () => {
    it('are verified by the server for GET, POST, PATCH and revoke', async () => {
      const c = newClient();
      const events = record(c);
      const created = await c.customers.create({ firstName: 'Signed', lastName: 'Post' });
      await c.customers.get(created.data.id);
      await c.customers.update(created.data.id, { referenceId: 'signed-patch' });
      await c.oauth.revoke();
      expect(
        events.responses.map((e) => [e.method, e.path.replace(created.data.id, ':id'), e.status]),
      ).toEqual([
        ['POST', '/oauth/token', 200],
        ['POST', '/customers', 201],
        ['GET', '/customers/:id', 200],
        ['PATCH', '/customers/:id', 200],
        ['POST', '/oauth/revoke', 200],
      ]);
    });

    it('made with a key the server does not know fail as AuthenticationError, without retries or refresh', async () => {
      const wrongKey = generateKeyPairSync('ed25519').privateKey;
      const c = newClient({ privateKey: wrongKey });
      const events = record(c);
      const calls: Array<() => Promise<unknown>> = [
        () => c.customers.list(),
        () => c.customers.create({ firstName: 'Never', lastName: 'Created' }),
        () => c.customers.update(sandbox.credentials.customerIds[0]!, { referenceId: 'never' }),
        () => c.oauth.revoke(),
      ];
      for (const call of calls) {
        const error = await call().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(AuthenticationError);
        expect((error as AuthenticationError).message).toBe(ErrorMessage.signatureFailed);
        // Sandbox: the server explains itself.
        expect((error as AuthenticationError).signatureDebug).toMatch(/reason="bad signature"/);
        expect((error as AuthenticationError).requestId).toBeTruthy();
      }
      expect(events.responses.filter((e) => e.status === 401)).toHaveLength(4);
    });
  });

  describe('customers', () => {
    it('create, get, list and update', async () => {
      const lastName = `Wambui-${randomUUID().slice(0, 8)}`;
      const created = await client.customers.create({
        firstName: 'Grace',
        lastName,
        msisdn: '254711000222',
        identificationType: 'NATIONAL_ID',
        identificationNumber: '12345678',
      });
      expect(created.message).toBe('Customer created successfully');
      expect(created.data).toMatchObject({ firstName: 'Grace', lastName, isActive: true });

      expect((await client.customers.get(created.data.id)).data).toEqual(created.data);

      const listed = await client.customers.list({ search: lastName });
      expect(listed.pagination).toEqual({ page: 1, limit: 10, total: 1, totalPages: 1 });
      expect(listed.data[0]!.id).toBe(created.data.id);
      expect((await client.customers.list({ msisdn: '254711000222' })).data.map((c) => c.id)).toEqual([
        created.data.id,
      ]);

      const updated = await client.customers.update(created.data.id, { msisdn: null, isActive: false });
      expect(updated.message).toBe('Customer updated successfully');
      expect(updated.data).toMatchObject({ id: created.data.id, msisdn: null, isActive: false });
    });

    it('listAll walks every page', async () => {
      const all = [];
      for await (const customer of client.customers.listAll({ limit: 2 })) all.push(customer.id);
      const { pagination } = await client.customers.list();
      expect(all).toHaveLength(pagination.total);
      expect(new Set(all).size).toBe(all.length);
    });

    it('a caller-supplied idempotency key replays; the same key with another body is an IdempotencyError', async () => {
      const idempotencyKey = randomUUID();
      const first = await client.customers.create(
        { firstName: 'Once', lastName: 'Only' },
        { idempotencyKey },
      );
      const again = await client.customers.create(
        { firstName: 'Once', lastName: 'Only' },
        { idempotencyKey },
      );
      expect(again).toEqual(first);
      const error = await client.customers
        .create({ firstName: 'Once', lastName: 'Different' }, { idempotencyKey })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(IdempotencyError);
      expect(error).toMatchObject({ status: 422, label: 'Unprocessable Entity' });
    });

    it('a lost response is retried with the same key and the server executes once', async () => {
      const lastName = `Lost-${randomUUID().slice(0, 8)}`;
      let dropped = false;
      // The request reaches the server, but its answer never reaches the client.
      const lossyFetch: typeof fetch = async (input, init) => {
        const response = await fetch(input, init);
        if (!dropped && init?.method === 'POST' && String(input).endsWith('/v1/customers')) {
          dropped = true;
          throw new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } });
        }
        return response;
      };
      const c = newClient({ fetch: lossyFetch });
      const events = record(c);
      const created = await c.customers.create({ firstName: 'Lost', lastName });
      const attempts = events.responses.filter((e) => e.path === '/customers');
      expect(attempts.map((e) => e.status)).toEqual([0, 201]);
      expect(attempts[0]!.error).toBeInstanceOf(ConnectionError);
      expect(new Set(attempts.map((e) => e.idempotencyKey)).size).toBe(1);
      const found = await client.customers.list({ search: lastName });
      expect(found.pagination.total).toBe(1);
      expect(found.data[0]!.id).toBe(created.data.id);
    });

    it('a 404 is a NotFoundError with the label, message and request id', async () => {
      const error = await client.customers.get(createId()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error).toMatchObject({ status: 404, label: 'Not found', message: 'Customer not found' });
      expect((error as NotFoundError).requestId).toMatch(/\S+/);
      expect((error as NotFoundError).requestId).toBe((error as NotFoundError).headers['x-request-id']);
    });

    it('a 400 is a ValidationError with details (and is not retried)', async () => {
      const c = newClient();
      const events = record(c);
      const error = await c.customers.create({ firstName: '', lastName: 'X' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect(error).toMatchObject({ status: 400, label: 'Validation failed' });
      expect((error as ValidationError).details).toEqual([
        { field: 'firstName', message: 'firstName must not be empty' },
      ]);
      expect(events.requests.filter((e) => e.path === '/customers')).toHaveLength(1);
    });
  });

  describe('webhook key', () => {
    it('is fetched once, cached by base URL and key id, and fetched again for an unknown key id', async () => {
      const c = newClient();
      c.webhooks.clearCache();
      const events = record(c);
      const key = await c.webhooks.key();
      expect(key).toMatchObject({ keyId: 'service-staging-ed25519-2', algorithm: 'ED25519' });
      expect(key.publicKey).toContain('BEGIN PUBLIC KEY');
      expect(key.jwks.keys[0]).toMatchObject({ kid: key.keyId, kty: 'OKP', crv: 'Ed25519' });
      expect(await c.webhooks.key()).toBe(key);
      expect(await c.webhooks.keyFor(key.keyId)).toBe(key);
      // Another client fetches the key into its own cache.
      expect(await newClient().webhooks.keyFor(key.keyId)).toEqual(key);
      expect(events.requests.filter((e) => e.path === '/webhooks/key')).toHaveLength(1);

      expect(await c.webhooks.keyFor('service-staging-ed25519-3')).toBeUndefined();
      expect(events.requests.filter((e) => e.path === '/webhooks/key')).toHaveLength(2);
    });
  });

  describe('payment status', () => {
    it('an unknown order is a NotFoundError; an implausible reference a ValidationError', async () => {
      const orderId = createId();
      await expect(client.paymentStatus.get(orderId)).rejects.toMatchObject({
        name: 'NotFoundError',
        label: 'Transaction not found',
        message: ErrorMessage.transactionNotFound(orderId),
      });
      await expect(client.paymentStatus.get('not-an-order')).rejects.toMatchObject({
        name: 'ValidationError',
        label: 'Invalid request',
        message: ErrorMessage.invalidOrderReference,
      });
    });
  });

  describe('USSD', () => {
    it('a whole buy, then the payment polled until final', async () => {
      const customerId = sandbox.credentials.customerIds[0]!;
      const home = await client.ussd.start(customerId);
      expect(home.message).toBe('Success');
      expect(home.data.currentState).toBe('HOME');
      expect(home.data.ussdText).toContain('Welcome to Demo Investments');
      const sessionId = home.data.sessionId;
      const step = async (choice: string, state: string) => {
        const response = await client.ussd.process(sessionId, choice);
        expect(response.data.currentState, `${choice} -> ${response.data.ussdText}`).toBe(state);
        return response;
      };
      await step('1', 'STOCKS');
      expect((await step('7', 'STOCKS')).data.ussdText).toMatch(/page 2\//);
      await step('1', 'SELECT_STOCK');
      await step('1', 'BUY_AMOUNT');
      await step('1000', 'BUY_CONFIRM');
      const submitted = await step('1', 'BUY_SUBMITTED');
      expect(submitted.data.menu.isEndState).toBe(true);
      expect(submitted.data.ussdText).toContain('Request received');

      await expect(client.ussd.process(sessionId, '0')).rejects.toMatchObject({
        name: 'ValidationError',
        message: ErrorMessage.sessionInactive,
      });

      const orderId = ORDER_REF.exec(submitted.data.ussdText)?.[1];
      expect(orderId).toBeDefined();
      const polls: PaymentStatusResponse[] = [];
      const final = await client.paymentStatus.waitForFinal(orderId!, {
        timeoutMs: 20_000,
        onPoll: (status) => polls.push(status),
      });
      expect(final.data.orderId).toBe(orderId);
      expect(final.data.payment).toMatchObject({ type: 'INCOMING', status: 'SUCCESS', currency: 'KES' });
      expect(Number(final.data.payment!.amount)).toBe(1000);
      expect(polls.at(-1)).toEqual(final);
    });

    it('an unknown session is a NotFoundError labelled SESSION_NOT_FOUND', async () => {
      await expect(client.ussd.process(`ussd_${'ab'.repeat(16)}`, '1')).rejects.toMatchObject({
        name: 'NotFoundError',
        label: 'SESSION_NOT_FOUND',
      });
    });

    it('the gateway helper turns Africa’s Talking callbacks into CON/END screens', async () => {
      const findCustomerId = async (phoneNumber: string) =>
        (await client.customers.list({ msisdn: phoneNumber.replace(/^\+/, '') })).data[0]?.id;
      const gateway = createUssdGatewayHandler(client, { findCustomerId });
      const at = (text: string) => gateway({ sessionId: 'ATUid_e2e1', phoneNumber: '+254712345678', text });

      expect(await at('')).toMatch(/^CON Welcome to Demo Investments/);
      expect(await at('1')).toMatch(/^CON Select a stock \(page 1\//);
      const page2 = await at('1*7');
      expect(page2).toMatch(/^CON Select a stock \(page 2\//);
      // The gateway repeats a callback: the move is replayed, not made twice (still page 2).
      expect(await at('1*7')).toBe(page2);
      // Not a possible choice: the screen again (with a notice when it still fits 182 characters).
      expect([page2, `CON Invalid choice.\n${page2.slice(4)}`]).toContain(await at('1*7*#'));
      expect(await at('1*7*#*1')).toMatch(/^CON .+\nPrice: KES/);
      expect(await at('1*7*#*1*1')).toMatch(/^CON Buy \w+\nEnter amount/);
      expect(await at('1*7*#*1*1*1000')).toMatch(/^CON Buy \w+ for KES 1,000\.00/);
      expect(await at('1*7*#*1*1*1000*1')).toMatch(/^END Request received/);
      expect(gateway.sessions.size).toBe(0);

      expect(await gateway({ sessionId: 'ATUid_e2e2', phoneNumber: '+255000000000', text: '' })).toMatch(
        /^END This number is not registered/,
      );
    });

    it('a gateway that lost its map (restart) replays the inputs so far on the same session', async () => {
      const findCustomerId = () => sandbox.credentials.customerIds[1];
      const callback = { sessionId: 'ATUid_e2e3', phoneNumber: '+254722000111' };
      const before = createUssdGatewayHandler(client, { findCustomerId });
      await before({ ...callback, text: '' });
      await before({ ...callback, text: '1' });
      const page2 = await before({ ...callback, text: '1*7' });
      const ourSession = before.sessions.get(callback.sessionId)!.sessionId;

      const after = createUssdGatewayHandler(client, { findCustomerId });
      expect(await after({ ...callback, text: '1*7' })).toBe(page2);
      expect(after.sessions.get(callback.sessionId)!.sessionId).toBe(ourSession);
      expect(await after({ ...callback, text: '1*7*7' })).toMatch(/page 3\//);
    });
  });

  describe('connection failures', () => {
    it('are ConnectionErrors (status 0) after the retries', async () => {
      const port = await freePort();
      const c = newClient({ baseUrl: `http://127.0.0.1:${port}`, maxRetries: 1 });
      const events = record(c);
      const error = await c.webhooks.key().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectionError);
      expect((error as ConnectionError).status).toBe(0);
      expect(events.requests).toHaveLength(2);
    });
  });
});

describe('a 429 from the rate limiter', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ RATE_LIMIT_GLOBAL: '3/2s' });
  });
  afterAll(async () => {
    await sandbox?.server.stop();
  });

  it('is retried after Retry-After with the same idempotency key, and the server executes once', async () => {
    const c = PartnerClient.fromSandboxFile(sandbox.credentialsFile);
    const events = record(c);
    const lastName = `Limited-${randomUUID().slice(0, 8)}`;
    // Spend the budget of 3 per 2 s: the token and two reads.
    await c.oauth.token();
    await c.customers.list({ limit: 1 });
    await c.customers.list({ limit: 1 });
    const created = await c.customers.create({ firstName: 'Rate', lastName });

    const attempts = events.responses.filter((e) => e.path === '/customers' && e.method === 'POST');
    expect(attempts.map((e) => e.status)).toEqual([429, 201]);
    expect(attempts[0]!.error?.message).toBe(ErrorMessage.rateLimitGlobal);
    const retryAfter = Number(attempts[0]!.retryAfter);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    const sent = events.requests.filter((e) => e.path === '/customers' && e.method === 'POST');
    expect(sent).toHaveLength(2);
    expect(sent[0]!.idempotencyKey).toBeDefined();
    expect(sent[1]!.idempotencyKey).toBe(sent[0]!.idempotencyKey);
    // Retry-After is a floor: the retry left at least that long after the 429 arrived.
    expect(sent[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(retryAfter * 1000);

    const found = await c.customers.list({ search: lastName });
    expect(found.pagination.total).toBe(1);
    expect(found.data[0]!.id).toBe(created.data.id);
  });
});
