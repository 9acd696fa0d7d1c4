import {
  ErrorMessage,
  TOKEN_MAX_TTL_SECONDS,
  TOKEN_TTL_SECONDS,
  type TokenRequest,
  type TokenResponse,
} from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { dateOf, one, run } from '../../db/query.ts';
import { unauthorized } from '../../lib/errors.ts';
import { hashSecret, verifySecret } from '../../lib/passwords.ts';
import type { EventOutbox } from '../webhooks/outbox.ts';
import type { TokenCodec } from './tokens.ts';

const UNKNOWN_CLIENT_HASH = await hashSecret('not-a-client-secret');

/** Client-credentials grant. Every refusal is the same 401, so a caller learns nothing about which part was wrong. */
export async function issueToken({
  db,
  codec,
  input,
  events,
}: {
  db: Db;
  codec: TokenCodec;
  input: TokenRequest;
  events: EventOutbox;
}): Promise<TokenResponse> {
  const row = await one<{
    credentialId: string;
    clientId: string;
    secretHash: string;
    trustedIps: string[];
    isActive: boolean;
    organizationActive: boolean;
    expiresAt: string | null;
    organizationId: string;
    organizationName: string;
  }>(
    db,
    sql`select c.id as "credentialId", c.client_id as "clientId", c.secret_hash as "secretHash",
  c.trusted_ips as "trustedIps", o.id as "organizationId", o.name as "organizationName",
  c.is_active as "isActive", o.is_active as "organizationActive", c.expires_at::text as "expiresAt"
  from credentials c join organizations o on o.id = c.organization_id where c.client_id = ${input.clientId}`,
  );
  // An unknown clientId costs the same hash as a wrong secret, so timing does not reveal which ids exist.
  const secretOk = await verifySecret(input.clientSecret, row?.secretHash ?? UNKNOWN_CLIENT_HASH);
  const usable =
    row?.isActive &&
    row.organizationActive &&
    (row.expiresAt === null || dateOf(row.expiresAt).getTime() > Date.now());
  if (!row || !secretOk || !usable) throw unauthorized(ErrorMessage.invalidCredentials);

  const { token, claims } = codec.issue({
    credentialId: row.credentialId,
    organizationId: row.organizationId,
    clientId: row.clientId,
  });
  const touch = sql`update credentials set last_used_at = now() where id = ${row.credentialId}`;
  const scope: TokenResponse['scope'] = ['READ', 'WRITE'];
  if (!events.enabled) await run(db, touch);
  else {
    // WEBHOOKS_PREVIEW: AUTH.CREATED commits with the issue. Never the token itself: its id (jti).
    await db.transaction(async (tx) => {
      await run(tx, touch);
      await events.emit(tx, {
        organizationId: row.organizationId,
        event: 'AUTH.CREATED',
        data: { clientId: row.clientId, tokenId: claims.jti, scope, expiresAt: claims.exp },
      });
    });
  }
  return {
    message: 'Authentication successful',
    tokenId: claims.jti,
    token,
    expiresIn: TOKEN_TTL_SECONDS,
    maxTTL: TOKEN_MAX_TTL_SECONDS,
    tokenType: 'Bearer',
    scope,
    trustedIps: row.trustedIps,
    organization: { id: row.organizationId, name: row.organizationName, clientId: row.clientId },
    createdAt: claims.iat,
    updatedAt: claims.iat,
  };
}
