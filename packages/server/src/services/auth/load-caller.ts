import { sql } from 'drizzle-orm';
import type { Db, Queryable } from '../../db/client.ts';
import { dateOf, one, run } from '../../db/query.ts';
import type { EventOutbox } from '../webhooks/outbox.ts';

type Row = {
  credentialId: string;
  organizationId: string;
  clientId: string;
  isActive: boolean;
  expiresAt: string | null;
  lastUsedAt: string | null;
  keyId: string | null;
  publicKey: string | null;
  trustedIps: string[];
  organizationActive: boolean;
  revoked: boolean;
};

/**
 * One round trip per request: the credential behind the token, its organization's state, and
 * whether this token was revoked. Revocations live in the database, so every instance sees them at
 * once. It runs on every authenticated request: a named prepared statement on PostgreSQL (db/pool.ts).
 */
export async function loadCaller({
  db,
  credentialId,
  jti,
}: {
  db: Queryable;
  credentialId: string;
  jti: string;
}) {
  const row = await one<Row>(
    db,
    sql`select c.id as "credentialId", c.organization_id as "organizationId", c.client_id as "clientId",
  c.is_active as "isActive", c.expires_at::text as "expiresAt", c.last_used_at::text as "lastUsedAt",
  c.key_id as "keyId", c.public_key as "publicKey", c.trusted_ips as "trustedIps",
  o.is_active as "organizationActive", exists (select 1 from revoked_tokens r where r.jti = ${jti}) as revoked
  from credentials c join organizations o on o.id = c.organization_id where c.id = ${credentialId}`,
  );
  return row && { ...row, expiresAt: dateOf(row.expiresAt), lastUsedAt: dateOf(row.lastUsedAt) };
}

export type Caller = NonNullable<Awaited<ReturnType<typeof loadCaller>>>;

/** lastUsedAt moves at most once a minute per credential: not a write per request. */
export async function touchCredential({ db, credentialId }: { db: Queryable; credentialId: string }) {
  await run(
    db,
    sql`update credentials set last_used_at = now() where id = ${credentialId}
  and (last_used_at is null or last_used_at < now() - interval '1 minute')`,
  );
}

/**
 * Blacklists a token. With WEBHOOKS_PREVIEW its AUTH.DELETED commits with the revocation, once:
 * a second revocation of the same token (a race) inserts nothing and emits nothing.
 */
export async function revokeToken({
  db,
  jti,
  expiresAt,
  events,
  owner,
}: {
  db: Db;
  jti: string;
  expiresAt: Date;
  events: EventOutbox;
  owner: { organizationId: string; clientId: string };
}) {
  const insert = sql`insert into revoked_tokens (jti, expires_at) values (${jti}, ${expiresAt.toISOString()}::timestamptz)
  on conflict do nothing`;
  if (!events.enabled) return void (await run(db, insert));
  await db.transaction(async (tx) => {
    if ((await run(tx, insert)) === 0) return;
    await events.emit(tx, {
      organizationId: owner.organizationId,
      event: 'AUTH.DELETED',
      data: {
        clientId: owner.clientId,
        tokenId: jti,
        expiresAt: Math.floor(expiresAt.getTime() / 1000),
        revokedAt: Math.floor(Date.now() / 1000),
      },
    });
  });
}
