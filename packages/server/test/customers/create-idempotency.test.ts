/**
 * POST /v1/customers writes the key's record, the row and its CUSTOMER.CREATED in one statement
 * (plugins/idempotency.ts, respondCreated). The idempotency semantics stay those of every other
 * mutation: a key in flight is a 409, an expired record is reused, a crashed request's lock holds
 * until it expires and is then taken over, and each create writes exactly one row and one event.
 */
import { createHash, randomUUID } from 'node:crypto';
import { ErrorMessage } from '@partner-api/contract';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner, type Partner, payloadOf, signedInject } from '@partner-api/testkit/partner.ts';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rows } from '../../src/db/query.ts';

const inProgress = { error: 'Conflict', message: ErrorMessage.idempotencyInProgress };

describeStores('POST /v1/customers idempotency in one statement, on %s', (store) => {
  let t: TestApp;
  let partner: Partner;
  beforeAll(async () => {
    t = await buildTestApp(store, { WEBHOOKS_PREVIEW: 'true' });
    partner = await createPartner(t);
  });
  afterAll(() => t.close());

  const create = (key: string, lastName: string) =>
    signedInject(t.app, partner, {
      method: 'POST',
      url: '/v1/customers',
      body: { firstName: 'Grace', lastName },
      idempotencyKey: key,
    });

  /** The customers of that last name, each with the number of CUSTOMER.CREATED events naming it. */
  const written = (lastName: string) =>
    rows<{ id: string; events: number }>(
      t.ctx.database.db,
      sql`select c.id, (select count(*)::int from webhook_events e
        where e.event = 'CUSTOMER.CREATED' and e.data->>'id' = c.id) as events
      from customers c where c.organization_id = ${partner.organizationId} and c.last_name = ${lastName}`,
    );

  /** A record of the key as another request left it. */
  const record = (key: string, fields: { expired?: boolean; lockedFor?: number; answered?: boolean }) =>
    t.ctx.database.db.execute(sql`insert into idempotency_keys
      (credential_id, key, fingerprint, locked_until, expires_at, response_status, response_body, response_headers)
      values (${partner.credentialId}, ${key}, 'POST /v1/customers elsewhere',
        now() + make_interval(secs => ${fields.lockedFor ?? 0}),
        now() + make_interval(secs => ${fields.expired ? -60 : 3600}),
        ${fields.answered ? 201 : null}, ${fields.answered ? '{}' : null}, ${fields.answered ? '{}' : null}::jsonb)`);

  it('a new key: 201 with one row and one event; the retry replays the same bytes and writes nothing', async () => {
    const key = randomUUID();
    const lastName = `One${randomUUID().slice(0, 8)}`;
    const first = await create(key, lastName);
    expect(first.statusCode, first.body).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await create(key, lastName);
    expect([again.statusCode, again.body, again.headers['idempotent-replayed']]).toEqual([
      201,
      first.body,
      'true',
    ]);
    expect(await written(lastName)).toEqual([{ id: first.json().data.id, events: 1 }]);
  });

  it("another organization's credential with the same key and body: its own create, never the other's replay", async () => {
    const other = await createPartner(t);
    const key = randomUUID();
    const lastName = `Iso${randomUUID().slice(0, 8)}`;
    const ours = await create(key, lastName);
    const theirs = await signedInject(t.app, other, {
      method: 'POST',
      url: '/v1/customers',
      body: { firstName: 'Grace', lastName },
      idempotencyKey: key,
    });
    expect([ours.statusCode, theirs.statusCode, theirs.headers['idempotent-replayed']]).toEqual([
      201,
      201,
      undefined,
    ]);
    expect(theirs.json().data.organizationId).toBe(other.organizationId);
    expect(theirs.json().data.id).not.toBe(ours.json().data.id);
    expect(await written(lastName)).toEqual([{ id: ours.json().data.id, events: 1 }]);
    const again = await create(key, lastName);
    expect([again.body, again.headers['idempotent-replayed']]).toEqual([ours.body, 'true']);
  });

  it("a key whose record expired (another payload's): a new create, not a 422", async () => {
    const key = randomUUID();
    const lastName = `Exp${randomUUID().slice(0, 8)}`;
    await record(key, { expired: true, answered: true });
    const res = await create(key, lastName);
    expect([res.statusCode, res.headers['idempotent-replayed']]).toEqual([201, undefined]);
    expect(await written(lastName)).toEqual([{ id: res.json().data.id, events: 1 }]);
    expect((await create(key, lastName)).headers['idempotent-replayed']).toBe('true');
  });

  it("a crashed request's lock: 409 while it holds, then the key is taken over once", async () => {
    const held = randomUUID();
    const lastName = `Lock${randomUUID().slice(0, 8)}`;
    // The record a request with this very payload left when its process died mid-create.
    const body = payloadOf({ firstName: 'Grace', lastName })!;
    const fingerprint = `POST /v1/customers ${createHash('sha256').update(body).digest('hex')}`;
    await t.ctx.database.db.execute(sql`insert into idempotency_keys
      (credential_id, key, fingerprint, locked_until, expires_at)
      values (${partner.credentialId}, ${held}, ${fingerprint}, now() + interval '1 hour', now() + interval '1 hour')`);
    const locked = await create(held, lastName);
    expect([locked.statusCode, locked.json()]).toEqual([409, inProgress]);
    expect(await written(lastName)).toEqual([]);
    await t.ctx.database.db.execute(sql`update idempotency_keys set locked_until = now() - interval '1 second'
      where key = ${held}`);
    const takenOver = await create(held, lastName);
    expect([takenOver.statusCode, takenOver.headers['idempotent-replayed']]).toEqual([201, undefined]);
    const replay = await create(held, lastName);
    expect([replay.statusCode, replay.body, replay.headers['idempotent-replayed']]).toEqual([
      201,
      takenOver.body,
      'true',
    ]);
    expect(await written(lastName)).toEqual([{ id: takenOver.json().data.id, events: 1 }]);
  });

  it('a key answered for another payload: 422, nothing written', async () => {
    const key = randomUUID();
    const lastName = `Other${randomUUID().slice(0, 8)}`;
    await record(key, { answered: true });
    const res = await create(key, lastName);
    expect([res.statusCode, res.json()]).toEqual([
      422,
      { error: 'Unprocessable Entity', message: ErrorMessage.idempotencyPayloadMismatch },
    ]);
    expect(await written(lastName)).toEqual([]);
  });

  it.runIf(store === 'postgres')(
    'a duplicate sent while the create waits in PostgreSQL: 409 at once, whatever its body; then one row',
    async () => {
      const key = randomUUID();
      const lastName = `Wait${randomUUID().slice(0, 8)}`;
      // Hold the organization row: the insert's foreign-key check waits on it, inside the statement.
      const holder = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await holder.connect();
      try {
        await holder.query('begin');
        await holder.query('select 1 from organizations where id = $1 for update', [partner.organizationId]);
        const holderPid = (await holder.query('select pg_backend_pid() as pid')).rows[0].pid as number;
        const first = create(key, lastName);
        for (const deadline = Date.now() + 10_000; ; ) {
          const { rowCount } = await holder.query(
            'select 1 from pg_stat_activity where $1 = any(pg_blocking_pids(pid))',
            [holderPid],
          );
          if (rowCount) break;
          if (Date.now() > deadline) throw new Error('the create never waited');
          await new Promise((r) => setTimeout(r, 20));
        }
        const same = await create(key, lastName);
        const other = await create(key, `${lastName}x`);
        expect([same.statusCode, same.json()]).toEqual([409, inProgress]);
        expect([other.statusCode, other.json()]).toEqual([409, inProgress]);
        await holder.query('commit');
        const done = await first;
        expect([done.statusCode, done.headers['idempotent-replayed']]).toEqual([201, undefined]);
        const replay = await create(key, lastName);
        expect([replay.statusCode, replay.body]).toEqual([201, done.body]);
        expect(await written(lastName)).toEqual([{ id: done.json().data.id, events: 1 }]);
      } finally {
        await holder.end();
      }
    },
  );
});
