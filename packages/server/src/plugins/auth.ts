import { createPublicKey, type KeyObject } from 'node:crypto';
import type { BlockList } from 'node:net';
import {
  ErrorLabel,
  ErrorMessage,
  REVOKE_FORBIDDEN_COMPONENTS,
  requiredComponentsFor,
  verifyContentDigest,
  verifyRequestSignature,
} from '@partner-api/contract';
import type { FastifyRequest, preValidationHookHandler } from 'fastify';
import type { AppContext } from '../context.ts';
import { AppError, unauthorized } from '../lib/errors.ts';
import { buildAllowlist, isAllowed } from '../lib/ip-allowlist.ts';
import type { RejectionReason } from '../lib/metrics.ts';
import { callerCacheOf } from '../services/auth/caller-cache.ts';
import { type Caller, loadCaller, touchCredential } from '../services/auth/load-caller.ts';
import type { TokenClaims, TokenCodec } from '../services/auth/tokens.ts';

export type AuthContext = {
  organizationId: string;
  credentialId: string;
  clientId: string;
  tokenId: string;
  tokenExpiresAt: Date;
  organizationActive: boolean;
};

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthContext;
  }
  interface FastifyContextConfig {
    /** POST /oauth/revoke: malformed/expired tokens are a 400, and the base must not cover body headers. */
    revoke?: boolean;
    /** GET /oauth/me answers 404 itself for an organization that is gone. */
    allowInactiveOrganization?: boolean;
  }
}

const MAX_CACHED_KEYS = 1000;

/**
 * The authentication pipeline, in the order docs/decisions.md fixes (Request pipeline): token,
 * x-client-id, IP allowlist, signing key present, signature, Content-Digest. (Rate limits ran at onRequest; schema validation
 * and idempotency follow.) It runs after body parsing so that malformed bodies get the spec's 500 first.
 */
export function createAuthenticator(ctx: AppContext, codec: TokenCodec): preValidationHookHandler {
  const keyCache = new Map<string, KeyObject>();
  const origin = new URL(ctx.config.PUBLIC_BASE_URL).origin;
  const sandbox = ctx.config.APP_ENV === 'sandbox';
  const callers = callerCacheOf(ctx);

  /** From memory when the cache's epoch allows it (services/auth/caller-cache.ts), else the database. */
  async function callerOf(request: FastifyRequest, claims: TokenClaims): Promise<Caller | undefined> {
    const reading = callers.readingFor(request);
    const cached = callers.get(reading, claims.sub, claims.jti);
    if (cached) {
      ctx.metrics.callerLookups.inc({ source: 'memory' });
      return cached;
    }
    ctx.metrics.callerLookups.inc({ source: 'database' });
    const loaded = await loadCaller({ db: ctx.database.db, credentialId: claims.sub, jti: claims.jti });
    if (loaded) callers.set(reading, claims.sub, claims.jti, loaded);
    return loaded;
  }

  /**
   * A caller's allowlist, built once for each loaded caller: a cached caller keeps its
   * `trustedIps` array, so its BlockList is built on its first request, not on every one.
   */
  const allowlists = new WeakMap<readonly string[], BlockList>();
  const allowlistOf = (trustedIps: readonly string[]): BlockList => {
    let list = allowlists.get(trustedIps);
    if (!list) {
      list = buildAllowlist(trustedIps);
      allowlists.set(trustedIps, list);
    }
    return list;
  };

  const reject = (reason: RejectionReason, error: AppError): never => {
    ctx.metrics.rejections.inc({ reason });
    throw error;
  };

  const publicKeyOf = (pem: string): KeyObject => {
    let key = keyCache.get(pem);
    if (!key) {
      if (keyCache.size >= MAX_CACHED_KEYS) keyCache.clear();
      key = createPublicKey(pem);
      keyCache.set(pem, key);
    }
    return key;
  };

  /** Sandbox only: why the signature failed and the base we built, so a partner can diff it. */
  const debugHeaders = (reason: string, base?: string): Record<string, string> | undefined => {
    if (!sandbox) return undefined;
    const parts = [`reason="${reason.replace(/["\\]/g, '')}"`, `time=${Math.floor(Date.now() / 1000)}`];
    if (base !== undefined) parts.push(`base=:${Buffer.from(base).toString('base64')}:`);
    return { 'Signature-Debug': parts.join(', ') };
  };

  function checkToken(request: FastifyRequest): TokenClaims {
    const header = request.headers.authorization;
    const token = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7).trim() : '';
    if (!token) return reject('token', unauthorized(ErrorMessage.tokenRequired));
    const result = codec.check(token);
    if (result.ok) return result.claims;
    if (request.routeOptions.config.revoke && result.reason !== 'invalid') {
      return reject('token', new AppError(400, ErrorLabel.badRequest, ErrorMessage.tokenMalformedOrExpired));
    }
    return reject('token', unauthorized(ErrorMessage.tokenInvalid));
  }

  function checkCaller(request: FastifyRequest, claims: TokenClaims, caller: Caller | undefined): Caller {
    const usable =
      caller &&
      !caller.revoked &&
      caller.isActive &&
      caller.organizationId === claims.org &&
      (caller.expiresAt === null || caller.expiresAt.getTime() > Date.now()) &&
      (caller.organizationActive || request.routeOptions.config.allowInactiveOrganization);
    if (!usable) return reject('token', unauthorized(ErrorMessage.tokenInvalid));
    return caller;
  }

  function checkSignature(request: FastifyRequest, caller: Caller): void {
    const isRevoke = Boolean(request.routeOptions.config.revoke);
    const hasBody = !isRevoke && request.rawBody !== undefined && request.rawBody.length > 0;
    const result = verifyRequestSignature({
      req: { method: request.method, targetUri: origin + request.url, headers: request.headers },
      signatureInputHeader: request.headers['signature-input'],
      signatureHeader: request.headers.signature,
      resolveKey: (keyId) =>
        keyId === caller.keyId && caller.publicKey
          ? { publicKey: publicKeyOf(caller.publicKey), alg: 'ed25519' }
          : undefined,
      requiredComponents: requiredComponentsFor({
        method: request.method,
        hasBody,
        hasIdempotencyKey: request.headers['x-idempotency-key'] !== undefined,
        isRevoke,
      }),
      forbiddenComponents: isRevoke ? [...REVOKE_FORBIDDEN_COMPONENTS] : [],
    });
    if (!result.ok) {
      reject(
        'signature',
        unauthorized(ErrorMessage.signatureFailed, debugHeaders(result.reason, result.base)),
      );
    }
    const digestHeader = request.headers['content-digest'];
    if (hasBody || digestHeader !== undefined) {
      const digest = verifyContentDigest(
        typeof digestHeader === 'string' ? digestHeader : undefined,
        request.rawBody ?? '',
      );
      if (!digest.ok) reject('digest', unauthorized(ErrorMessage.digestFailed, debugHeaders(digest.reason)));
    }
  }

  return async function authenticate(request) {
    const claims = checkToken(request);
    const caller = checkCaller(request, claims, await callerOf(request, claims));

    const clientId = request.headers['x-client-id'];
    if (clientId === undefined || clientId === '')
      reject('client_id', unauthorized(ErrorMessage.clientIdRequired));
    if (clientId !== claims.client_id) reject('client_id', unauthorized(ErrorMessage.clientIdMismatch));

    if (caller.trustedIps.length > 0 && !isAllowed(allowlistOf(caller.trustedIps), request.ip)) {
      reject('allowlist', new AppError(403, ErrorLabel.forbidden, ErrorMessage.ipNotAllowed));
    }
    if (!caller.publicKey || !caller.keyId) reject('signing_key', unauthorized(ErrorMessage.noSigningKey));
    checkSignature(request, caller);

    request.auth = {
      organizationId: caller.organizationId,
      credentialId: caller.credentialId,
      clientId: caller.clientId,
      tokenId: claims.jti,
      tokenExpiresAt: new Date(claims.exp * 1000),
      organizationActive: caller.organizationActive,
    };
    if (!caller.lastUsedAt || Date.now() - caller.lastUsedAt.getTime() > 60_000) {
      caller.lastUsedAt = new Date(); // the cached copy, so the next minute's requests write nothing
      touchCredential({ db: ctx.database.db, credentialId: caller.credentialId }).catch((error) =>
        request.log.warn({ err: error }, 'could not record credential use'),
      );
    }
  };
}
