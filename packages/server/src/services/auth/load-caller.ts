import { and, eq, sql } from 'drizzle-orm';
import type { Db, Queryable } from '../../db/client.ts';
import { prepared } from '../../db/prepared.ts';
import { credentials, organizations, revokedTokens } from '../../db/schema.ts';

/**
 * One round trip per request: the credential behind the token, its organization's state, and
 * whether this token was revoked. Revocations live in the database, so every instance sees them at
 * once. A prepared statement: it runs on every authenticated request (see db/prepared.ts).
 */
export async function loadCaller({ db, credentialId, jti }: { db: Db; credentialId: string; jti: string }) {
  const [row] = await prepared(db, 'auth_load_caller', (root, name) =>
    root
      .select({
        credentialId: credentials.id,
        organizationId: credentials.organizationId,
        clientId: credentials.clientId,
        isActive: credentials.isActive,
        expiresAt: credentials.expiresAt,
        lastUsedAt: credentials.lastUsedAt,
        keyId: credentials.keyId,
        publicKey: credentials.publicKey,
        trustedIps: credentials.trustedIps,
        organizationActive: organizations.isActive,
        revoked: sql<boolean>`exists (select 1 from ${revokedTokens} where ${revokedTokens.jti} = ${sql.placeholder('jti')})`,
      })
      .from(credentials)
      .innerJoin(organizations, eq(organizations.id, credentials.organizationId))
      .where(eq(credentials.id, sql.placeholder('credentialId')))
      .prepare(name),
  ).execute({ credentialId, jti });
  return row;
}

export type Caller = NonNullable<Awaited<ReturnType<typeof loadCaller>>>;

/** lastUsedAt moves at most once a minute per credential: not a write per request. */
export async function touchCredential({ db, credentialId }: { db: Queryable; credentialId: string }) {
  await db
    .update(credentials)
    .set({ lastUsedAt: sql`now()` })
    .where(
      and(
        eq(credentials.id, credentialId),
        sql`(${credentials.lastUsedAt} is null or ${credentials.lastUsedAt} < now() - interval '1 minute')`,
      ),
    );
}

export async function revokeToken({ db, jti, expiresAt }: { db: Queryable; jti: string; expiresAt: Date }) {
  await db.insert(revokedTokens).values({ jti, expiresAt }).onConflictDoNothing();
}
