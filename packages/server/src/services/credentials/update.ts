import { eq } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { credentials } from '../../db/schema.ts';
import { AppError } from '../../lib/errors.ts';
import { parseSigningPublicKey, toPem } from '../../lib/keys.ts';

export type CredentialPatch = { trustedIps?: string[]; isActive?: boolean; expiresAt?: Date | null };

const credentialNotFound = () => new AppError(404, 'Not found', 'Credential not found');

/** The operator's view of a credential: never the secret hash. */
export function presentCredential(row: typeof credentials.$inferSelect) {
  const { secretHash: _hidden, publicKey, ...rest } = row;
  return { ...rest, hasSigningKey: publicKey !== null };
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
  const [row] = await db
    .update(credentials)
    .set({ ...patch, updatedAt: new Date() })
    .where(eq(credentials.id, id))
    .returning();
  if (!row) throw credentialNotFound();
  return presentCredential(row);
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
  const [row] = await db
    .update(credentials)
    .set({ publicKey: pem, keyId, updatedAt: new Date() })
    .where(eq(credentials.id, id))
    .returning();
  if (!row) throw credentialNotFound();
  return presentCredential(row);
}
