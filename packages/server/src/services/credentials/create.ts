import { randomBytes } from 'node:crypto';
import { createId } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { dateOf, one } from '../../db/query.ts';
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
  const org = await one<{ id: string }>(db, sql`select id from organizations where id = ${organizationId}`);
  if (!org) throw new AppError(404, 'Not found', 'Organization not found');
  const publicKey = input.publicKey === undefined ? null : toPem(parseSigningPublicKey(input.publicKey));
  const clientSecret = newClientSecret();
  const credential = (await one<{
    id: string;
    name: string;
    clientId: string;
    keyId: string | null;
    trustedIps: string[];
    expiresAt: string | null;
    createdAt: string;
  }>(
    db,
    sql`insert into credentials (id, organization_id, name, client_id, secret_hash, public_key, key_id, trusted_ips, expires_at)
  values (${createId()}, ${organizationId}, ${input.name}, ${newClientId()}, ${await hashSecret(clientSecret)}, ${publicKey},
  ${publicKey ? (input.keyId ?? null) : null}, ${sql.param(input.trustedIps ?? [])}::text[], ${input.expiresAt?.toISOString() ?? null}::timestamptz)
  returning id, name, client_id as "clientId", key_id as "keyId", trusted_ips as "trustedIps",
  expires_at::text as "expiresAt", created_at::text as "createdAt"`,
  ))!;
  return {
    id: credential.id,
    name: credential.name,
    clientId: credential.clientId,
    clientSecret,
    keyId: credential.keyId,
    trustedIps: credential.trustedIps,
    expiresAt: dateOf(credential.expiresAt),
    createdAt: dateOf(credential.createdAt),
  };
}
