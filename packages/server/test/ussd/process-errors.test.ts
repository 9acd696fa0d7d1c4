import { randomUUID } from 'node:crypto';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner, type Partner, signedInject } from '@partner-api/testkit/partner.ts';
import { eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { rows, run } from '../../src/db/query.ts';
import { orders, ussdSessions } from '../../src/db/schema.ts';
import { withErrorState } from '../../src/services/ussd/error-state.ts';
import {
  ensureCatalog,
  FIXTURES,
  holdFirstMove,
  insertCustomer,
  type UssdData,
  ussdClient,
} from './support.ts';

describeStores('POST /v1/ussd/process: errors, idempotency and races on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store);
    await ensureCatalog(t);
  });
  afterAll(() => t.close());
  afterEach(() => {
    t.ctx.faultInjector = undefined;
  });

  async function setup(msisdn?: string | null) {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner, { msisdn });
    return { partner, customerId, client: ussdClient(t, partner) };
  }

  it('choice validation: alphanumeric, 1 to 10 characters, a string', async () => {
    const { partner, customerId, client } = await setup();
    const { sessionId } = (await client.open(customerId)).json().data;
    const cases: [unknown, string][] = [
      ['1 2', 'Choice must be alphanumeric'],
      ['*1#', 'Choice must be alphanumeric'],
      ['', 'Choice must be 1 to 10 characters'],
      ['ABCDEFGHIJK', 'Choice must be 1 to 10 characters'],
      [1, 'Choice must be a string'],
      [undefined, 'Choice is required'],
    ];
    for (const [choice, message] of cases) {
      const res = await signedInject(t.app, partner, {
        method: 'POST',
        url: '/v1/ussd/process',
        body: { sessionId, choice },
      });
      expect(res.statusCode, String(choice)).toBe(400);
      expect(res.json()).toEqual({ error: 'Validation failed', details: [{ field: 'choice', message }] });
    }
    expect((await client.press(sessionId, 'ABCDEFGHIJ')).statusCode).toBe(200);
  });

  it('a lone surrogate in sessionId, choice or customerId is a validation error naming the field, and moves nothing', async () => {
    const { partner, customerId, client } = await setup();
    const { sessionId } = (await client.open(customerId)).json().data;
    const post = (url: string, body: unknown) => signedInject(t.app, partner, { method: 'POST', url, body });
    const refused = (field: string, message: string) => ({
      error: 'Validation failed',
      details: [{ field, message }],
    });
    const surrogate = 'must be valid Unicode text (an unpaired surrogate was sent)';
    const cases: [string, unknown, ReturnType<typeof refused>][] = [
      ['/v1/ussd/process', { sessionId: `${sessionId}\ud800`, choice: '1' }, refused('sessionId', surrogate)],
      ['/v1/ussd/process', { sessionId: '\udfff', choice: '1' }, refused('sessionId', surrogate)],
      [
        '/v1/ussd/process',
        { sessionId, choice: '1\ud800' },
        refused('choice', 'Choice must be alphanumeric'),
      ],
      [
        '/v1/ussd/session',
        { customerId: `${customerId.slice(0, -1)}\ud800` },
        refused('customerId', 'Invalid customer ID format'),
      ],
    ];
    for (const [url, body, expected] of cases) {
      const res = await post(url, body);
      expect([url, res.statusCode, res.json()]).toEqual([url, 400, expected]);
    }
    const sessions = await t.ctx.database.db
      .select()
      .from(ussdSessions)
      .where(eq(ussdSessions.customerId, customerId));
    expect(sessions.map((row) => row.state)).toEqual(['HOME']);
  });

  it('404 SESSION_NOT_FOUND; 403 SESSION_FORBIDDEN for another organization', async () => {
    const { customerId, client } = await setup();
    const missing = await client.press(`ussd_${'0'.repeat(32)}`, '1');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ error: 'SESSION_NOT_FOUND', message: 'USSD session not found' });

    const { sessionId } = (await client.open(customerId)).json().data;
    const intruder = ussdClient(t, await createPartner(t));
    const forbidden = await intruder.press(sessionId, '1');
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json()).toEqual({
      error: 'SESSION_FORBIDDEN',
      message: 'Session does not belong to this organization',
    });
    const [row] = await t.ctx.database.db.select().from(ussdSessions).where(eq(ussdSessions.id, sessionId));
    expect(row?.state).toBe('HOME');
  });

  it('400 for an expired session and for one that is no longer active', async () => {
    const { customerId, client } = await setup();
    const { sessionId, expiresAt } = (await client.open(customerId)).json().data;
    const moved = (await client.press(sessionId, '1')).json().data as UssdData;
    expect(new Date(moved.expiresAt).getTime()).toBeGreaterThanOrEqual(new Date(expiresAt).getTime());

    const db = t.ctx.database.db;
    await db
      .update(ussdSessions)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(ussdSessions.id, sessionId));
    const expired = await client.press(sessionId, '0');
    expect(expired.statusCode).toBe(400);
    expect(expired.json()).toEqual({ error: 'Bad Request', message: 'USSD session has expired' });

    await db.update(ussdSessions).set({ isActive: false }).where(eq(ussdSessions.id, sessionId));
    const inactive = await client.press(sessionId, '0');
    expect(inactive.statusCode).toBe(400);
    expect(inactive.json()).toEqual({ error: 'Bad Request', message: 'USSD session is no longer active' });
  });

  it('an internal failure inside a move rolls it back and answers 200 in ERROR; 0 goes HOME', async () => {
    const { partner, customerId, client } = await setup();
    const confirm = await searchAndConfirm(partner, customerId, '1000');
    expect(confirm.currentState).toBe('BUY_CONFIRM');
    t.ctx.faultInjector = (point) => {
      if (point === 'ussd.process.effects') throw new Error('injected move failure');
    };
    const key = randomUUID();
    const failed = await client.press(confirm.sessionId, '1', key);
    t.ctx.faultInjector = undefined;
    expect(failed.statusCode).toBe(200);
    // The ERROR answer was stored after the rollback to the savepoint: the same key replays it.
    const replay = await client.press(confirm.sessionId, '1', key);
    expect([replay.statusCode, replay.body, replay.headers['idempotent-replayed']]).toEqual([
      200,
      failed.body,
      'true',
    ]);
    expect(failed.json()).toMatchObject({
      message: 'USSD request processed with error state',
      data: {
        sessionId: confirm.sessionId,
        currentState: 'ERROR',
        menu: {
          state: 'ERROR',
          options: [{ key: '0', label: 'Home', nextState: 'HOME' }],
          isEndState: false,
        },
      },
    });
    // The order and its collection were rolled back with the move.
    const placed = await t.ctx.database.db.select().from(orders).where(eq(orders.customerId, customerId));
    expect(placed).toHaveLength(0);
    const [row] = await t.ctx.database.db
      .select()
      .from(ussdSessions)
      .where(eq(ussdSessions.id, confirm.sessionId));
    expect(row).toMatchObject({ state: 'ERROR', isActive: true });
    const home = (await client.press(confirm.sessionId, '0')).json();
    expect(home).toMatchObject({
      message: 'USSD request processed successfully',
      data: { currentState: 'HOME' },
    });
  });

  it('a submitted buy repeated with its key replays the stored answer; one order, one collection', async () => {
    const { partner, customerId, client } = await setup();
    const confirm = await searchAndConfirm(partner, customerId, '1000');
    const key = randomUUID();
    const submitted = await client.press(confirm.sessionId, '1', key);
    expect(submitted.statusCode, submitted.body).toBe(200);
    expect(submitted.json().data.currentState).toBe('BUY_SUBMITTED');
    const replay = await client.press(confirm.sessionId, '1', key);
    expect([replay.statusCode, replay.body, replay.headers['idempotent-replayed']]).toEqual([
      200,
      submitted.body,
      'true',
    ]);
    const placed = await t.ctx.database.db.select().from(orders).where(eq(orders.customerId, customerId));
    expect(placed).toHaveLength(1);
    const collections = await rows<{ n: number }>(
      t.ctx.database.db,
      sql`select count(*)::int as n from transactions where order_id = ${placed[0]!.id}`,
    );
    expect(collections[0]?.n).toBe(1);
  });

  it('a database error inside a move is rolled back to its savepoint; the request transaction goes on', async () => {
    const db = t.ctx.database.db;
    const { customerId, client } = await setup();
    const { sessionId } = (await client.open(customerId)).json().data;
    const bySession = eq(ussdSessions.id, sessionId);
    const outcome = await db.transaction((tx) =>
      withErrorState(
        tx,
        async (savepoint) => {
          await savepoint.update(ussdSessions).set({ state: 'STOCKS' }).where(bySession);
          await savepoint.execute(sql`select 1 / 0`);
          return 'moved';
        },
        async () => {
          // The failed statement is behind us: the enclosing transaction still works.
          await tx.update(ussdSessions).set({ isActive: true }).where(bySession);
          return 'error state';
        },
      ),
    );
    expect(outcome).toBe('error state');
    const [row] = await db.select().from(ussdSessions).where(bySession);
    expect(row?.state).toBe('HOME');
  });

  it('a repeated idempotency key replays the move without applying it again', async () => {
    const { customerId, client } = await setup();
    const stocksScreen = await client.walk(customerId, ['1']);
    const key = randomUUID();
    const first = await client.press(stocksScreen.sessionId, '7', key);
    const replay = await client.press(stocksScreen.sessionId, '7', key);
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    const [row] = await t.ctx.database.db
      .select()
      .from(ussdSessions)
      .where(eq(ussdSessions.id, stocksScreen.sessionId));
    expect(row?.context).toMatchObject({ stocksPage: 2 });
    const reused = await client.press(stocksScreen.sessionId, '8', key);
    expect(reused.statusCode).toBe(422);
  });

  const pageOf = (body: string) => /\(page (\d+)\//.exec(JSON.parse(body).data.menu.text)?.[1];

  it('two racing calls on one session (different keys) apply one after the other', async () => {
    const { customerId, client } = await setup();
    const stocksScreen = await client.walk(customerId, ['1']);
    const hold = holdFirstMove(t);
    const first = client.press(stocksScreen.sessionId, '7');
    await hold.inside;
    // The first has read the session (page 1) and is held before its write. The second reads the
    // same version, writes page 2 and answers; the first's write then finds the session moved and
    // applies in the locked transaction from page 2: both apply, one after the other, never both
    // from the same state.
    const second = client.press(stocksScreen.sessionId, '7');
    expect(pageOf((await second).body)).toBe('2');
    hold.release();
    const [a, b] = await Promise.all([first, second]);
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    expect([pageOf(a.body), pageOf(b.body)]).toEqual(['3', '2']);
    const [row] = await t.ctx.database.db
      .select()
      .from(ussdSessions)
      .where(eq(ussdSessions.id, stocksScreen.sessionId));
    expect(row?.context).toMatchObject({ stocksPage: 3 });

    // Without holding: both still apply, one after the other.
    const [c, d] = await Promise.all([
      client.press(stocksScreen.sessionId, '7'),
      client.press(stocksScreen.sessionId, '7'),
    ]);
    expect([pageOf(c.body), pageOf(d.body)].sort()).toEqual(['4', '5']);
  });

  // A move with effects locks the session row, in a statement that also reads the move's data and
  // whose snapshot predates a wait for that lock: a move that waited must read the data again, or
  // it would act on what was true before it waited. Here the customer's number is removed by the
  // writer it waited for: the buy must be refused, not placed.
  it.skipIf(store !== 'postgres')(
    'a move that waited for the session lock reads what committed while it waited',
    async () => {
      const { partner, customerId, client } = await setup();
      const confirm = await client.walk(customerId, ['1', '8', 'ZZBUY', '1', '1', '500']);
      expect(confirm.currentState).toBe('BUY_CONFIRM');
      const db = t.ctx.database.db;
      const waiting = async () =>
        (
          await rows(
            db,
            sql`select 1 from pg_stat_activity where wait_event_type = 'Lock'
              and query like '%from ussd_sessions where id = $1 for update%'`,
          )
        ).length > 0;
      let submitted: ReturnType<typeof client.press> | undefined;
      await db.transaction(async (tx) => {
        await run(tx, sql`select 1 from ussd_sessions where id = ${confirm.sessionId} for update`);
        submitted = client.press(confirm.sessionId, '1');
        for (let i = 0; !(await waiting()); i++) {
          if (i > 200) throw new Error('the move never waited for the session lock');
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        await run(tx, sql`update customers set msisdn = null where id = ${customerId}`);
        await run(tx, sql`update ussd_sessions set updated_at = now() where id = ${confirm.sessionId}`);
      });
      const res = await submitted!;
      expect(res.statusCode, res.body).toBe(200);
      const data = res.json().data as UssdData;
      expect(data.currentState).toBe('BUY_CONFIRM');
      expect(data.menu.text.startsWith('Invalid choice.')).toBe(true);
      const placed = await rows(
        db,
        sql`select 1 from orders where organization_id = ${partner.organizationId} and customer_id = ${customerId}`,
      );
      expect(placed).toEqual([]);
    },
  );

  it('the same key while the first call is in flight: 409 on PostgreSQL, a replay once it completes', async () => {
    const { customerId, client } = await setup();
    const stocksScreen = await client.walk(customerId, ['1']);
    const hold = holdFirstMove(t);
    const key = randomUUID();
    const first = client.press(stocksScreen.sessionId, '7', key);
    await hold.inside;
    if (store === 'postgres') {
      const conflict = await client.press(stocksScreen.sessionId, '7', key);
      expect(conflict.statusCode).toBe(409);
      expect(conflict.json()).toEqual({
        error: 'Conflict',
        message: 'A request with this X-Idempotency-Key is already in progress',
      });
      hold.release();
      expect((await first).statusCode).toBe(200);
    } else {
      // The embedded store has one connection: the repeat waits for the first and replays it.
      const repeat = client.press(stocksScreen.sessionId, '7', key);
      hold.release();
      const [a, b] = await Promise.all([first, repeat]);
      expect(b.body).toBe(a.body);
      expect(b.headers['idempotent-replayed']).toBe('true');
    }
    const [row] = await t.ctx.database.db
      .select()
      .from(ussdSessions)
      .where(eq(ussdSessions.id, stocksScreen.sessionId));
    expect(row?.context).toMatchObject({ stocksPage: 2 });
  });

  it('security: 401 unsigned, 400 without an idempotency key, 403 outside the IP allowlist', async () => {
    const { partner, customerId, client } = await setup();
    const { sessionId } = (await client.open(customerId)).json().data;
    const anonymous = await t.app.inject({
      method: 'POST',
      url: '/v1/ussd/process',
      headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() },
      payload: { sessionId, choice: '1' },
    });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toEqual({
      error: 'Unauthorized',
      message: 'Organization authentication token is required',
    });
    const noKey = await signedInject(t.app, partner, {
      method: 'POST',
      url: '/v1/ussd/process',
      body: { sessionId, choice: '1' },
      idempotencyKey: false,
    });
    expect(noKey.statusCode).toBe(400);
    expect(noKey.json()).toEqual({
      error: 'Bad Request',
      message: 'X-Idempotency-Key header is required for this request',
    });
    const fenced = await createPartner(t, { trustedIps: ['203.0.113.7'] });
    const fencedCustomer = await insertCustomer(t, fenced);
    for (const res of [
      await ussdClient(t, fenced).open(fencedCustomer),
      await ussdClient(t, fenced).press(sessionId, '1'),
    ]) {
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ error: 'Forbidden', message: 'Client IP not allowed' });
    }
  });

  async function searchAndConfirm(partner: Partner, customerId: string, amount: string) {
    expect(FIXTURES.buy.symbol).toBe('ZZBUY');
    return ussdClient(t, partner).walk(customerId, ['1', '8', 'ZZBUY', '1', '1', amount]);
  }
});
