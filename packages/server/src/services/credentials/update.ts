import { type SQL, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { assignments, dateOf, one, rows } from '../../db/query.ts';
import type { credentials } from '../../db/schema.ts';
import { AppError } from '../../lib/errors.ts';
import { parseSigningPublicKey, toPem } from '../../lib/keys.ts';

export type CredentialPatch = { trustedIps?: string[]; isActive?: boolean; expiresAt?: Date | null };

type Credential = typeof credentials.$inferSelect;
type Timestamps = 'expiresAt' | 'lastUsedAt' | 'createdAt' | 'updatedAt';
/** A credential as `credentialColumns` selects it: never the secret hash nor the key, timestamps as text. */
export type CredentialRow = Omit<Credential, 'secretHash' | 'publicKey' | Timestamps> & {
  expiresAt: string | null;
  lastUsedAt: string | null;
  createdAt: string;
  updatedAt: string;
  hasSigningKey: boolean;
};

/** The columns of a CredentialRow, in the table's order (the order of the operator's JSON). */
export const credentialColumns = sql`id, organization_id as "organizationId", name, client_id as "clientId",
  key_id as "keyId", trusted_ips as "trustedIps", is_active as "isActive", expires_at::text as "expiresAt",
  last_used_at::text as "lastUsedAt", created_at::text as "createdAt", updated_at::text as "updatedAt",
  public_key is not null as "hasSigningKey"`;

const COLUMNS: { [K in keyof Required<CredentialPatch>]: SQL } = {
  trustedIps: sql`trusted_ips`,
  isActive: sql`is_active`,
  expiresAt: sql`expires_at`,
};

const credentialNotFound = () => new AppError(404, 'Not found', 'Credential not found');

/** The operator's view of a credential: never the secret hash, the timestamps as dates. */
export function presentCredential(row: CredentialRow) {
  return {
    ...row,
    expiresAt: dateOf(row.expiresAt),
    lastUsedAt: dateOf(row.lastUsedAt),
    createdAt: dateOf(row.createdAt),
    updatedAt: dateOf(row.updatedAt),
  };
}

/** The credentials, newest first, of one organization or of all (GET /admin/credentials, the console). */
export async function listCredentials(db: Queryable, organizationId?: string) {
  const filter = organizationId ? sql`where organization_id = ${organizationId}` : sql``;
  const found = await rows<CredentialRow>(
    db,
    sql`select ${credentialColumns} from credentials ${filter} order by created_at desc, id desc`,
  );
  return found.map(presentCredential);
}

/** Writes `set` (and updatedAt) to the credential; 404 when there is none. */
async function updateColumns(db: Queryable, id: string, set: SQL[]) {
  const row = await one<CredentialRow>(
    db,
    sql`update credentials set ${sql.join([...set, sql`updated_at = ${new Date().toISOString()}::timestamptz`], sql`, `)}
  where id = ${id} returning ${credentialColumns}`,
  );
  if (!row) throw credentialNotFound();
  return presentCredential(row);
}

export async function updateCredential({
  db,
  id,
  patch,
}: {
  db: Queryable;
  id: string;
  patch: CredentialPatch;
}) {
  const { expiresAt } = patch;
  const values = {
    ...patch,
    expiresAt: expiresAt === undefined ? undefined : (expiresAt?.toISOString() ?? null),
  };
  return updateColumns(db, id, assignments(values, COLUMNS));
}

/** Registers or rotates the request-signing key; a rotation must change the key id. */
export async function setSigningKey({
  db,
  id,
  publicKey,
  keyId,
}: {
  db: Queryable;
  id: string;
  publicKey: unknown;
  keyId: string;
}) {
  const pem = toPem(parseSigningPublicKey(publicKey));
  return updateColumns(db, id, [sql`public_key = ${pem}`, sql`key_id = ${keyId}`]);
}
