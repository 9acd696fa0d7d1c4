import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { rows, run } from '../../src/db/query.ts';
import {
  ensureCatalog,
  holdFirstMove,
  insertCustomer,
  insertHolding,
  orderRow,
  refOf,
  transactionsOf,
  type UssdData,
  ussdClient,
} from './support.ts';

const HOME = { key: '0', label: 'Home', nextState: 'HOME' };

/**
 * Two sessions of one customer confirm the same sell, or the same cancel, at once. The winner
 * applies; the loser gets the refusal the machine shows from what the winner committed (the same
 * screen on both stores), never the ERROR screen, and no error line is logged. On PostgreSQL the
 * winner is held inside its transaction until the loser waits for the row it holds (the guarded
 * update of the holding, the lock on the order), so that the loser's data was read before the
 * winner's commit: that loser once answered "Something went wrong." and logged at level
 * 50. The embedded store runs one transaction at a time: its loser reads after the winner commits.
 */
describeStores('concurrent sells and cancels on %s: the loser gets a clean refusal', (store) => {
  let t: TestApp;
  let stockIds: Awaited<ReturnType<typeof ensureCatalog>>;
  const logLines: string[] = [];
  beforeAll(async () => {
    t = await buildTestApp(store, { LOG_LEVEL: 'warn' }, { logLines });
    stockIds = await ensureCatalog(t);
  });
  afterAll(() => t.close());
  afterEach(() => {
    t.ctx.faultInjector = undefined;
    logLines.length = 0;
  });

  const errorLines = () =>
    logLines.map((line) => JSON.parse(line) as { level: number; msg: string }).filter((l) => l.level >= 50);

  /** Whether a backend comes to wait for a lock in a statement containing `fragment` within 5 s (PostgreSQL). */
  async function waitsInside(fragment: string): Promise<boolean> {
    for (let i = 0; i < 500; i++) {
      const waiting = await rows(
        t.ctx.database.db,
        sql`select 1 from pg_stat_activity where wait_event_type = 'Lock' and position(${fragment} in query) > 0`,
      );
      if (waiting.length > 0) return true;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return false;
  }

  /** The loser's answer: what the machine shows from the winner's commit, and no error line. */
  function expectRefused(answer: { message: string; data: UssdData }, state: string, text: string) {
    expect(answer.message).toBe('USSD request processed successfully');
    expect(answer.data.menu).toEqual({ state, text, options: [HOME], isEndState: false });
    expect(errorLines()).toEqual([]);
  }

  /**
   * Presses `choice` on both sessions: the first holds at its effects until the second waits for a
   * lock in a statement containing `fragment` (PostgreSQL), or until it is sent (the embedded store).
   * Returns both answers and whether the second was seen waiting.
   */
  async function race(
    client: ReturnType<typeof ussdClient>,
    [first, second]: [string, string],
    fragment: string,
  ) {
    const hold = holdFirstMove(t);
    const winner = client.press(first, '1');
    await hold.inside;
    const loser = client.press(second, '1');
    const waited = store === 'postgres' && (await waitsInside(fragment));
    hold.release();
    const [a, b] = await Promise.all([winner, loser]);
    expect([a.statusCode, b.statusCode], `${a.body}\n${b.body}`).toEqual([200, 200]);
    return { won: a.json().data as UssdData, lost: b.json(), waited };
  }

  it('two sells of the same units: one is sold, the other is refused from the sold holding', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner, { msisdn: '254711000666' });
    await insertHolding(t, partner, customerId, stockIds.sell, '3');
    const client = ussdClient(t, partner);
    const a = await client.walk(customerId, ['1', '8', 'ZZSELL', '1', '2', '3']);
    const b = await client.walk(customerId, ['1', '8', 'ZZSELL', '1', '2', '3']);
    expect([a.currentState, b.currentState]).toEqual(['SELL_CONFIRM', 'SELL_CONFIRM']);

    const { won, lost, waited } = await race(client, [a.sessionId, b.sessionId], 'update holdings set units');
    expect(waited).toBe(store === 'postgres');
    expect(won.currentState).toBe('SELL_SUBMITTED');
    expectRefused(lost, 'SELL_CONFIRM', 'Invalid choice.\nYou no longer hold 3 units of ZZSELL.');

    // Money: three units sold once, one payout.
    const sold = await rows<{ id: string; units: string }>(
      t.ctx.database.db,
      sql`select o.id, h.units::text as units from orders o
  join holdings h on h.customer_id = o.customer_id and h.stock_id = o.stock_id
  where o.customer_id = ${customerId}`,
    );
    expect(sold).toEqual([{ id: refOf(won), units: '0.0000' }]);
    expect((await transactionsOf(t, sold[0]!.id)).map((tx) => tx.type)).toEqual(['OUTGOING']);
  });

  it('two sells of the available units of a holding partly pending settlement: never more than available', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner, { msisdn: '254711000668' });
    // Five units held, two of them bought and not yet settled: three available.
    await insertHolding(t, partner, customerId, stockIds.sell, '5');
    await t.ctx.database.db.execute(
      sql`update holdings set pending_units = 2 where customer_id = ${customerId} and stock_id = ${stockIds.sell}`,
    );
    const client = ussdClient(t, partner);
    const a = await client.walk(customerId, ['1', '8', 'ZZSELL', '1', '2']);
    expect(a.menu.text).toBe('Sell ZZSELL\nEnter units to sell (max 3)');
    const b = await client.walk(customerId, ['1', '8', 'ZZSELL', '1', '2', '2']);
    const a3 = (await client.press(a.sessionId, '3')).json().data as UssdData;
    expect([a3.currentState, b.currentState]).toEqual(['SELL_CONFIRM', 'SELL_CONFIRM']);

    const { won, lost, waited } = await race(client, [a.sessionId, b.sessionId], 'update holdings set units');
    expect(waited).toBe(store === 'postgres');
    expect(won.currentState).toBe('SELL_SUBMITTED');
    expectRefused(
      lost,
      'SELL_CONFIRM',
      'Invalid choice.\n2 ZZSELL units are pending settlement and can be sold once settled (3 trading days after the buy).',
    );
    const left = await rows<{ units: string; pending: string }>(
      t.ctx.database.db,
      sql`select units::text as units, pending_units::text as pending from holdings where customer_id = ${customerId}`,
    );
    expect(left).toEqual([{ units: '2.0000', pending: '2.0000' }]);
  });

  // The control: the log lines are read, and a failure that is no lost race is still the ERROR screen.
  it('an unexpected failure of a sell is still the ERROR screen with one error line', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner, { msisdn: '254711000667' });
    await insertHolding(t, partner, customerId, stockIds.sell, '3');
    const client = ussdClient(t, partner);
    const confirm = await client.walk(customerId, ['1', '8', 'ZZSELL', '1', '2', '3']);
    t.ctx.faultInjector = (point) => {
      if (point === 'ussd.process.effects') throw new Error('injected failure');
    };
    const res = await client.press(confirm.sessionId, '1');
    expect(res.json().message).toBe('USSD request processed with error state');
    expect(errorLines().map((l) => l.msg)).toEqual(['USSD move failed; session put in ERROR']);
  });

  it('two cancels of the same order: one cancels it, the other is refused as no longer open', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    const client = ussdClient(t, partner);
    const orderId = refOf(await client.walk(customerId, ['1', '8', 'ZZCANCEL', '1', '1', '1002', '1']));
    const a = await client.walk(customerId, ['2', '1', '1', '1']);
    const b = await client.walk(customerId, ['2', '1', '1', '1']);
    expect([a.currentState, b.currentState]).toEqual([
      'CANCEL_REQUEST_CONFIRMATION',
      'CANCEL_REQUEST_CONFIRMATION',
    ]);

    const { won, lost, waited } = await race(
      client,
      [a.sessionId, b.sessionId],
      'from orders o where o.id = $1 for update',
    );
    expect(waited).toBe(store === 'postgres');
    expect(won.currentState).toBe('REQUEST_CANCELLED');
    expectRefused(lost, 'CANCEL_REQUEST_CONFIRMATION', 'Invalid choice.\nThis request is no longer open.');

    expect(await orderRow(t, orderId)).toMatchObject({ status: 'CANCELLED' });
    expect((await transactionsOf(t, orderId)).map((tx) => [tx.type, tx.status])).toEqual([
      ['INCOMING', 'CANCELLED'],
    ]);
  });

  it('a cancel of an order executed meanwhile (the payment settled) is refused as no longer open', async () => {
    const partner = await createPartner(t);
    const customerId = await insertCustomer(t, partner);
    const client = ussdClient(t, partner);
    const orderId = refOf(await client.walk(customerId, ['1', '8', 'ZZCANCEL', '1', '1', '1002', '1']));
    const confirm = await client.walk(customerId, ['2', '1', '1', '1']);
    expect(confirm.currentState).toBe('CANCEL_REQUEST_CONFIRMATION');
    const db = t.ctx.database.db;
    const execute = sql`update orders set status = 'EXECUTED' where id = ${orderId}`;
    let pressed: ReturnType<typeof client.press> | undefined;
    if (store === 'postgres') {
      // The settlement holds the order's lock; the cancel read the order as open and waits for it.
      await db.transaction(async (tx) => {
        await run(tx, sql`select 1 from orders where id = ${orderId} for update`);
        pressed = client.press(confirm.sessionId, '1');
        expect(await waitsInside('from orders o where o.id = $1 for update')).toBe(true);
        await run(tx, execute);
      });
    } else {
      // One transaction at a time: the settlement commits before the cancel reads.
      await run(db, execute);
      pressed = client.press(confirm.sessionId, '1');
    }
    const res = await pressed!;
    expect(res.statusCode, res.body).toBe(200);
    expectRefused(
      res.json(),
      'CANCEL_REQUEST_CONFIRMATION',
      'Invalid choice.\nThis request is no longer open.',
    );
    expect(await orderRow(t, orderId)).toMatchObject({ status: 'EXECUTED' });
    expect((await transactionsOf(t, orderId)).map((tx) => [tx.type, tx.status])).toEqual([
      ['INCOMING', 'PENDING'],
    ]);
  });
});
