import {
  ErrorMessage,
  TOKEN_MAX_TTL_SECONDS,
  TOKEN_TTL_SECONDS,
  type TokenRequest,
  type TokenResponse,
} from '@partner-api/contract';
import { eq } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { credentials, organizations } from '../../db/schema.ts';
import { unauthorized } from '../../lib/errors.ts';
import { hashSecret, verifySecret } from '../../lib/passwords.ts';
import type { TokenCodec } from './tokens.ts';

const UNKNOWN_CLIENT_HASH = await hashSecret('not-a-client-secret');

/** Client-credentials grant. Every refusal is the same 401, so a caller learns nothing about which part was wrong. */
export async function issueToken({
  db,
  codec,
  input,
}: {
  db: Queryable;
  codec: TokenCodec;
  input: TokenRequest;
}): Promise<TokenResponse> {
  const [row] = await db
    .select({ credential: credentials, organization: organizations })
    .from(credentials)
    .innerJoin(organizations, eq(organizations.id, credentials.organizationId))
    .where(eq(credentials.clientId, input.clientId));
  // An unknown clientId costs the same hash as a wrong secret, so timing does not reveal which ids exist.
  const secretOk = await verifySecret(input.clientSecret, row?.credential.secretHash ?? UNKNOWN_CLIENT_HASH);
  const usable =
    row?.credential.isActive &&
    row.organization.isActive &&
    (row.credential.expiresAt === null || row.credential.expiresAt.getTime() > Date.now());
  if (!row || !secretOk || !usable) throw unauthorized(ErrorMessage.invalidCredentials);

  const { credential, organization } = row;
  const { token, claims } = codec.issue({
    credentialId: credential.id,
    organizationId: organization.id,
    clientId: credential.clientId,
  });
  await db.update(credentials).set({ lastUsedAt: new Date() }).where(eq(credentials.id, credential.id));
  return {
    message: 'Authentication successful',
    tokenId: claims.jti,
    token,
    expiresIn: TOKEN_TTL_SECONDS,
    maxTTL: TOKEN_MAX_TTL_SECONDS,
    tokenType: 'Bearer',
    scope: ['READ', 'WRITE'],
    trustedIps: credential.trustedIps,
    organization: { id: organization.id, name: organization.name, clientId: credential.clientId },
    createdAt: claims.iat,
    updatedAt: claims.iat,
  };
}
