import { createHash } from 'node:crypto';
import { ErrorLabel, ErrorMessage } from '@partner-api/contract';
import { type SQL, sql } from 'drizzle-orm';
import type { FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import type { AppContext } from '../context.ts';
import type { Tx } from '../db/client.ts';
import { run } from '../db/query.ts';
import { AppError, validationFailed } from '../lib/errors.ts';
import { type Claim, claimKey, completeKey, completion, releaseKey } from '../services/idempotency/store.ts';

declare module 'fastify' {
  interface FastifyRequest {
    idempotency?: Claim;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUID, bare or as the IETF draft's quoted sf-string. */
export function parseIdempotencyKey(value: string): string | undefined {
  const bare = value.length > 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
  return UUID.test(bare) ? bare.toLowerCase() : undefined;
}

/** Method, path and the SHA-256 of the raw body: a reused key with any other payload is a 422. */
function fingerprintOf(request: FastifyRequest): string {
  const bodyHash = createHash('sha256')
    .update(request.rawBody ?? '')
    .digest('hex');
  return `${request.method} ${request.url.split('?', 1)[0]} ${bodyHash}`;
}

/** preHandler of every mutating route that requires X-Idempotency-Key (after auth and validation). */
export function createIdempotencyGuard(ctx: AppContext): preHandlerHookHandler {
  return async function requireIdempotencyKey(request, reply) {
    const header = request.headers['x-idempotency-key'];
    if (header === undefined || header === '') {
      throw new AppError(400, ErrorLabel.badRequest, ErrorMessage.idempotencyKeyRequired);
    }
    const key = typeof header === 'string' ? parseIdempotencyKey(header) : undefined;
    if (!key)
      throw validationFailed([{ field: 'x-idempotency-key', message: 'X-Idempotency-Key must be a UUID' }]);
    const claim = { credentialId: request.auth!.credentialId, key };
    const outcome = await claimKey(
      ctx.database.db,
      claim,
      fingerprintOf(request),
      ctx.config.IDEMPOTENCY_TTL_SECONDS,
      ctx.config.IDEMPOTENCY_LOCK_SECONDS,
    );
    switch (outcome.kind) {
      case 'claimed':
        request.idempotency = claim;
        ctx.metrics.idempotency.inc({ outcome: 'executed' });
        return;
      case 'mismatch':
        ctx.metrics.idempotency.inc({ outcome: 'mismatch' });
        throw new AppError(422, ErrorLabel.unprocessable, ErrorMessage.idempotencyPayloadMismatch);
      case 'in_progress':
        ctx.metrics.idempotency.inc({ outcome: 'conflict' });
        throw new AppError(409, ErrorLabel.conflict, ErrorMessage.idempotencyInProgress);
      case 'replay':
        ctx.metrics.idempotency.inc({ outcome: 'replayed' });
        return reply
          .code(outcome.response.status)
          .headers({ ...outcome.response.headers, 'Idempotent-Replayed': 'true' })
          .type('application/json; charset=utf-8')
          .send(outcome.response.body);
    }
  };
}

export type HandlerResult = { status: number; body: unknown };

/**
 * Runs a mutation in one transaction together with its idempotency record. A 4xx from the work is
 * stored (and replayed) with the mutation rolled back; a 5xx frees the key so a retry can succeed.
 */
export async function respondInTransaction(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  work: (tx: Tx) => Promise<HandlerResult>,
): Promise<FastifyReply> {
  const { status, payload } = await settle(ctx, request, async (tx, claim) => {
    const result = await work(tx);
    const payload = JSON.stringify(result.body);
    if (claim) await completeKey(tx, claim, { status: result.status, body: payload, headers: {} });
    return { status: result.status, payload };
  });
  // Committed: a webhook event this mutation emitted is delivered now, not at the next poll.
  if (ctx.events.enabled) ctx.webhookWorker?.nudge();
  return reply.code(status).type('application/json; charset=utf-8').send(payload);
}

/**
 * respondInTransaction for a mutation whose answer is known before it runs (a create whose id and
 * timestamps the server chose): the row and the stored answer are written by one statement (the
 * answer as a CTE of `write`), so a signed create costs BEGIN, that statement and COMMIT after the
 * claim, instead of BEGIN, the insert, the stored answer and COMMIT. Same semantics: the claim stays
 * a statement of its own (409 while in flight, 422, replays); a failure stores nothing for a 5xx.
 */
export async function respondCreated(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  created: { status: number; body: unknown; write: SQL },
): Promise<FastifyReply> {
  const payload = JSON.stringify(created.body);
  await settle(ctx, request, async (tx, claim) => {
    const answer = { status: created.status, body: payload, headers: {} };
    await run(
      tx,
      claim ? sql`with stored as (${completion(claim, answer)}) ${created.write}` : created.write,
    );
    return { status: created.status, payload };
  });
  return reply.code(created.status).type('application/json; charset=utf-8').send(payload);
}

/** The transaction of a mutation with its claimed key: a 4xx is stored, a 5xx frees the key. */
async function settle(
  ctx: AppContext,
  request: FastifyRequest,
  transact: (tx: Tx, claim: Claim | undefined) => Promise<{ status: number; payload: string }>,
): Promise<{ status: number; payload: string }> {
  const claim = request.idempotency;
  try {
    return await ctx.database.db.transaction((tx) => transact(tx, claim));
  } catch (error) {
    if (claim) {
      if (error instanceof AppError && error.statusCode < 500) {
        await completeKey(ctx.database.db, claim, {
          status: error.statusCode,
          body: JSON.stringify(error.body()),
          headers: error.headers ?? {},
        });
      } else {
        await releaseKey(ctx.database.db, claim).catch((e) =>
          request.log.warn({ err: e }, 'could not release idempotency key'),
        );
      }
    }
    throw error;
  }
}
