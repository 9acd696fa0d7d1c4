import { randomBytes } from 'node:crypto';
import { createId } from '@partner-api/contract';
import { eq } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { credentials, organizations } from '../../db/schema.ts';
import { AppError } from '../../lib/errors.ts';
import { parseSigningPublicKey, toPem } from '../../lib/keys.ts';
import { hashSecret } from '../../lib/passwords.ts';

export type CredentialInput = {
  name: string;
  publicKey?: unknown;
  keyId?: string;
  trustedIps?: string[];
  expiresAt?: Date | null;
};

export const newClientId = () => `org_${randomBytes(16).toString('hex')}`;
export const newClientSecret = () => `${randomBytes(16).toString('hex')}_${randomBytes(16).toString('hex')}`;

/** Creates a credential; the returned clientSecret is the only time the secret exists in clear. */
export async function createCredential({
  db,
  organizationId,
  input,
}: {
  db: Queryable;
  organizationId: string;
  input: CredentialInput;
}) {
  const [org] = await db
    .select({ id: organizations.id })
    .from(organizations)
    .where(eq(organizations.id, organizationId));
  if (!org) throw new AppError(404, 'Not found', 'Organization not found');
  const publicKey = input.publicKey === undefined ? null : toPem(parseSigningPublicKey(input.publicKey));
  const clientSecret = newClientSecret();
  const [row] = await db
    .insert(credentials)
    .values({
      id: createId(),
      organizationId,
      name: input.name,
      clientId: newClientId(),
      secretHash: await hashSecret(clientSecret),
      publicKey,
      keyId: publicKey ? (input.keyId ?? null) : null,
      trustedIps: input.trustedIps ?? [],
      expiresAt: input.expiresAt ?? null,
    })
    .returning();
  const credential = row!;
  return {
    id: credential.id,
    name: credential.name,
    clientId: credential.clientId,
    clientSecret,
    keyId: credential.keyId,
    trustedIps: credential.trustedIps,
    expiresAt: credential.expiresAt,
    createdAt: credential.createdAt,
  };
}
