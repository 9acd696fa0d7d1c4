/**
 * PATCH /v1/customers/{id}, POST /v1/ussd/session and POST /v1/ussd/process claim their key in the
 * statement of their first read (plugins/idempotency.ts, respondClaimingWithRead). The idempotency
 * semantics stay those of every other mutation: a replay of the same bytes, a 422 for another
 * payload, a 409 while a request holds the key, a crashed request's lock taken over once it expires,
 * an expired record reused, and a 4xx answered after the claim stored and replayed.
 *
 * A claim that is a transaction of its own commits without waiting for the WAL flush; the answer's
 * write, which stores the reply, does wait, and flushes the claim with it (store.ts, `claimInsert`).
 */
import { createHash, randomUUID } from 'node:crypto';
import { ErrorMessage } from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner, type Partner, payloadOf, signedInject } from '@partner-api/testkit/partner.ts';
import { type SQL, sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.ts';
import { one, rows } from '../../src/db/query.ts';
import { claimKey, claimWithRead } from '../../src/services/idempotency/store.ts';
import { createCustomerViaApi } from './helpers.ts';

const inProgress = { error: 'Conflict', message: ErrorMessage.idempotencyInProgress };
const mismatch = { error: 'Unprocessable Entity', message: ErrorMessage.idempotencyPayloadMismatch };

describeStores('the key claimed with the first read, on %s', (store) => {
  let t: TestApp;
  let partner: Partner;
  beforeAll(async () => {
    t = await buildTestApp(store, { WEBHOOKS_PREVIEW: 'true' });
    partner = await createPartner(t);
  });
  afterAll(() => t.close());

  const patch = (id: string, body: unknown, key: string, p = partner) =>
    signedInject(t.app, p, { method: 'PATCH', url: `/v1/customers/${id}`, body, idempotencyKey: key });
  const lastNameOf = async (id: string) =>
    (
      await one<{ lastName: string }>(
        t.ctx.database.db,
        sql`select last_name as "lastName" from customers where id = ${id}`,
      )
    )?.lastName;
  const updatedEvents = async (id: string) =>
    (
      await rows<{ n: number }>(
        t.ctx.database.db,
        sql`select count(*)::int as n from webhook_events where event = 'CUSTOMER.UPDATED' and data->>'id' = ${id}`,
      )
    )[0]!.n;

  /** A record of the key as another request left it: `fingerprint` null means another payload's. */
  const record = (
    key: string,
    fields: { fingerprint?: string; lockedFor?: number; expired?: boolean; answered?: boolean },
  ) =>
    t.ctx.database.db.execute(sql`insert into idempotency_keys
      (credential_id, key, fingerprint, locked_until, expires_at, response_status, response_body, response_headers)
      values (${partner.credentialId}, ${key}, ${fields.fingerprint ?? 'PATCH elsewhere'},
        now() + make_interval(secs => ${fields.lockedFor ?? 0}),
        now() + make_interval(secs => ${fields.expired ? -60 : 3600}),
        ${fields.answered ? 200 : null}, ${fields.answered ? '{}' : null}, ${fields.answered ? '{}' : null}::jsonb)`);
  const fingerprintOf = (method: string, path: string, body: unknown) =>
    `${method} ${path} ${createHash('sha256')
      .update(payloadOf(body) ?? '')
      .digest('hex')}`;

  it('PATCH, a new key: 200, one event; the retry replays the same bytes and writes nothing', async () => {
    const customer = await createCustomerViaApi(t, partner);
    const key = randomUUID();
    const first = await patch(customer.id, { lastName: 'Germain' }, key);
    expect([first.statusCode, first.headers['idempotent-replayed']]).toEqual([200, undefined]);
    const again = await patch(customer.id, { lastName: 'Germain' }, key);
    expect([again.statusCode, again.body, again.headers['idempotent-replayed']]).toEqual([
      200,
      first.body,
      'true',
    ]);
    expect(await updatedEvents(customer.id)).toBe(1);
  });

  it('eight copies of a PATCH at once: one runs, the others get the 409 or its replay; one event', async () => {
    const customer = await createCustomerViaApi(t, partner);
    const key = randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => patch(customer.id, { lastName: 'Germain' }, key)),
    );
    const ran = answers.filter((a) => a.statusCode === 200 && !a.headers['idempotent-replayed']);
    expect(ran).toHaveLength(1);
    for (const other of answers.filter((a) => a !== ran[0])) {
      if (other.statusCode === 409) expect(other.json()).toEqual(inProgress);
      else
        expect([other.statusCode, other.body, other.headers['idempotent-replayed']]).toEqual([
          200,
          ran[0]!.body,
          'true',
        ]);
    }
    expect(await updatedEvents(customer.id)).toBe(1);
  });

  it('PATCH with a key answered for another payload: 422, nothing written', async () => {
    const customer = await createCustomerViaApi(t, partner);
    const key = randomUUID();
    await record(key, { answered: true });
    const res = await patch(customer.id, { lastName: 'Germain' }, key);
    expect([res.statusCode, res.json()]).toEqual([422, mismatch]);
    expect(await lastNameOf(customer.id)).toBe(customer.lastName);
  });

  it("PATCH under a crashed request's lock: 409 while it holds, then taken over once", async () => {
    const customer = await createCustomerViaApi(t, partner);
    const key = randomUUID();
    const body = { lastName: 'Germain' };
    await record(key, {
      fingerprint: fingerprintOf('PATCH', `/v1/customers/${customer.id}`, body),
      lockedFor: 3600,
    });
    const locked = await patch(customer.id, body, key);
    expect([locked.statusCode, locked.json()]).toEqual([409, inProgress]);
    expect(await lastNameOf(customer.id)).toBe(customer.lastName);
    await t.ctx.database.db.execute(
      sql`update idempotency_keys set locked_until = now() - interval '1 second' where key = ${key}`,
    );
    const takenOver = await patch(customer.id, body, key);
    expect([takenOver.statusCode, takenOver.headers['idempotent-replayed']]).toEqual([200, undefined]);
    expect(await lastNameOf(customer.id)).toBe('Germain');
    const replay = await patch(customer.id, body, key);
    expect([replay.body, replay.headers['idempotent-replayed']]).toEqual([takenOver.body, 'true']);
    expect(await updatedEvents(customer.id)).toBe(1);
  });

  it("PATCH with a key whose record expired (another payload's): a new patch, not a 422", async () => {
    const customer = await createCustomerViaApi(t, partner);
    const key = randomUUID();
    await record(key, { expired: true, answered: true });
    const res = await patch(customer.id, { lastName: 'Germain' }, key);
    expect([res.statusCode, res.headers['idempotent-replayed']]).toEqual([200, undefined]);
    expect(await lastNameOf(customer.id)).toBe('Germain');
  });

  it("PATCH of another organization's customer: 404, stored and replayed, the customer unchanged", async () => {
    const other = await createPartner(t);
    const theirs = await createCustomerViaApi(t, other);
    const key = randomUUID();
    const res = await patch(theirs.id, { lastName: 'Germain' }, key);
    expect(res.statusCode, res.body).toBe(404);
    const again = await patch(theirs.id, { lastName: 'Germain' }, key);
    expect([again.statusCode, again.body, again.headers['idempotent-replayed']]).toEqual([
      404,
      res.body,
      'true',
    ]);
    expect(await lastNameOf(theirs.id)).toBe(theirs.lastName);
  });

  it("a USSD session under a request's lock: 409 and no session; then one session, replayed", async () => {
    const customer = await createCustomerViaApi(t, partner);
    const key = randomUUID();
    const body = { customerId: customer.id };
    await record(key, { fingerprint: fingerprintOf('POST', '/v1/ussd/session', body), lockedFor: 3600 });
    const open = () =>
      signedInject(t.app, partner, { method: 'POST', url: '/v1/ussd/session', body, idempotencyKey: key });
    const sessions = async () =>
      (
        await rows<{ n: number }>(
          t.ctx.database.db,
          sql`select count(*)::int as n from ussd_sessions where customer_id = ${customer.id}`,
        )
      )[0]!.n;
    const locked = await open();
    expect([locked.statusCode, locked.json()]).toEqual([409, inProgress]);
    expect(await sessions()).toBe(0);
    await t.ctx.database.db.execute(
      sql`update idempotency_keys set locked_until = now() - interval '1 second' where key = ${key}`,
    );
    const opened = await open();
    expect(opened.statusCode, opened.body).toBe(201);
    const replay = await open();
    expect([replay.statusCode, replay.body, replay.headers['idempotent-replayed']]).toEqual([
      201,
      opened.body,
      'true',
    ]);
    expect(await sessions()).toBe(1);
  });

  const syncCommitAfter = (claim: (tx: Database['db']) => Promise<unknown>) =>
    t.ctx.database.db.transaction(async (tx) => {
      await claim(tx);
      return (await one<{ s: string }>(tx, sql`select current_setting('synchronous_commit') as s`))!.s;
    });

  it("a claim marked alone skips its transaction's WAL flush, and only that transaction's", async () => {
    // Observed inside a transaction block, which the product never does with `alone`.
    const claim = () => ({ credentialId: partner.credentialId, key: randomUUID() });
    const read = sql`select 1 as one`;
    expect(await syncCommitAfter((tx) => claimKey(tx, claim(), 'POST /x 0', 60, 60, true))).toBe('off');
    expect(await syncCommitAfter((tx) => claimKey(tx, claim(), 'POST /x 0', 60, 60, false))).toBe('on');
    expect(await syncCommitAfter((tx) => claimWithRead(tx, claim(), 'POST /x 0', 60, 60, read, true))).toBe(
      'off',
    );
    expect(await syncCommitAfter((tx) => claimWithRead(tx, claim(), 'POST /x 0', 60, 60, read, false))).toBe(
      'on',
    );
    const after = await one<{ s: string }>(
      t.ctx.database.db,
      sql`select current_setting('synchronous_commit') as s`,
    );
    expect(after?.s).toBe('on');
  });

  it('one connection tells whether a transaction block is open on it', async () => {
    const seen = await t.ctx.database.onOneConnection(async (db, outside) => {
      const before = outside();
      const inside = await db.transaction(async (tx) => {
        await tx.execute(sql`select 1`);
        return outside();
      });
      return [before, inside, outside()];
    });
    expect(seen).toEqual([true, false, true]);
  });

  it("a PATCH's claim commits alone, unflushed; its answer's write waits for the flush", async () => {
    const customer = await createCustomerViaApi(t, partner);
    const sent: string[] = [];
    const dialect = new PgDialect();
    const database = t.ctx.database;
    const original = database.onOneConnection;
    database.onOneConnection = (work) =>
      original((db, outside) =>
        work(
          new Proxy(db, {
            get: (target, name) =>
              name === 'execute'
                ? (query: SQL) => {
                    sent.push(dialect.sqlToQuery(query).sql);
                    return target.execute(query);
                  }
                : Reflect.get(target, name),
          }),
          outside,
        ),
      );
    try {
      const answered = await patch(customer.id, { lastName: 'Flushed' }, randomUUID());
      expect(answered.statusCode).toBe(200);
    } finally {
      database.onOneConnection = original;
    }
    const unflushed = "set_config('synchronous_commit', 'off', true)";
    expect(sent).toHaveLength(2);
    expect(sent[0]).toContain(unflushed);
    expect(sent[1]).toContain('update idempotency_keys');
    expect(sent[1]).not.toContain('synchronous_commit');
  });

  it("a USSD move on another organization's session: 403, stored and replayed, the session unmoved", async () => {
    const other = await createPartner(t);
    const theirs = await createCustomerViaApi(t, other);
    const opened = await signedInject(t.app, other, {
      method: 'POST',
      url: '/v1/ussd/session',
      body: { customerId: theirs.id },
    });
    const sessionId = opened.json().data.sessionId;
    const key = randomUUID();
    const move = () =>
      signedInject(t.app, partner, {
        method: 'POST',
        url: '/v1/ussd/process',
        body: { sessionId, choice: '1' },
        idempotencyKey: key,
      });
    const stateOf = async (id: string) =>
      (await one<{ state: string }>(t.ctx.database.db, sql`select state from ussd_sessions where id = ${id}`))
        ?.state;
    expect(await stateOf(sessionId)).toBe('HOME');
    const res = await move();
    expect([res.statusCode, res.json()]).toEqual([
      403,
      { error: 'SESSION_FORBIDDEN', message: ErrorMessage.sessionForbidden },
    ]);
    const again = await move();
    expect([again.statusCode, again.body, again.headers['idempotent-replayed']]).toEqual([
      403,
      res.body,
      'true',
    ]);
    expect(await stateOf(sessionId)).toBe('HOME');
  });
});
