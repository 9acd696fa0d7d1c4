import { createHash } from 'node:crypto';
import { ErrorLabel, ErrorMessage } from '@partner-api/contract';
import { type SQL, sql } from 'drizzle-orm';
import type { FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import type { AppContext } from '../context.ts';
import type { Queryable, Tx } from '../db/client.ts';
import { one, type Read, run } from '../db/query.ts';
import { AppError, validationFailed } from '../lib/errors.ts';
import type { HandlerResult, StoreAnswer } from '../services/idempotency/answer.ts';
import {
  type Claim,
  type ClaimOutcome,
  claimKey,
  claimWithRead,
  completeKey,
  completion,
  createInOneStatement,
  releaseKey,
} from '../services/idempotency/store.ts';
import type { EmittedEvent } from '../services/webhooks/outbox.ts';

declare module 'fastify' {
  interface FastifyRequest {
    idempotency?: Claim;
    /** Checked by `requireIdempotencyKey`; claimed by `respondIdempotently`. */
    idempotencyKey?: Claim;
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

/** The claim a request's X-Idempotency-Key names, or the spec's 400 for a missing or malformed key. */
function keyOf(request: FastifyRequest): Claim {
  const header = request.headers['x-idempotency-key'];
  if (header === undefined || header === '') {
    throw new AppError(400, ErrorLabel.badRequest, ErrorMessage.idempotencyKeyRequired);
  }
  const key = typeof header === 'string' ? parseIdempotencyKey(header) : undefined;
  if (!key)
    throw validationFailed([{ field: 'x-idempotency-key', message: 'X-Idempotency-Key must be a UUID' }]);
  return { credentialId: request.auth!.credentialId, key };
}

/** Claims the key; a replay, a mismatch or a key in flight is answered here and the work never runs. */
async function claimOrAnswer(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  claim: Claim,
  fingerprint = fingerprintOf(request),
) {
  // The pool runs each statement on a connection outside any transaction block: the claim commits alone.
  const outcome = await claimKey(
    ctx.database.db,
    claim,
    fingerprint,
    ctx.config.IDEMPOTENCY_TTL_SECONDS,
    ctx.config.IDEMPOTENCY_LOCK_SECONDS,
    true,
  );
  return answerOutcome(ctx, request, reply, claim, outcome);
}

function claimed(ctx: AppContext, request: FastifyRequest, claim: Claim): void {
  request.idempotency = claim;
  ctx.metrics.idempotency.inc({ outcome: 'executed' });
}

function answerOutcome(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  claim: Claim,
  outcome: ClaimOutcome,
) {
  switch (outcome.kind) {
    case 'claimed':
      return claimed(ctx, request, claim);
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
}

/**
 * preHandler of every mutating route (after auth and validation): the spec's 400 for a missing or
 * malformed X-Idempotency-Key. It claims nothing: `respondIdempotently` claims, so that the claim can
 * ride on the work's first statement.
 */
export const requireIdempotencyKey: preHandlerHookHandler = async (request) => {
  request.idempotencyKey = keyOf(request);
};

/** A create whose id and timestamps the server chose: its answer is known before it runs. */
type Created = { status: number; body: unknown; insertFrom: (source: SQL) => SQL; event?: EmittedEvent };

/**
 * How a mutation runs inside its key's claim, cheapest first:
 * - `created`: the key's record, the row and its webhook event in one autocommit statement;
 * - `firstRead`: work that begins with a one-row read, on which the claim rides; its later reads and
 *   writes use `db`, and it may store its answer as a CTE of its last write (`store`);
 * - `transaction`: any other work, in one transaction with the key's record.
 */
export type IdempotentWork =
  | { created: Created }
  | { firstRead: (db: Queryable, store: StoreAnswer, read: Read) => Promise<HandlerResult> }
  | { transaction: (tx: Tx, store: StoreAnswer) => Promise<HandlerResult> };

/**
 * The one way a mutating route answers under X-Idempotency-Key. The same semantics whichever the
 * work: a replay of the same bytes answers the stored response (`Idempotent-Replayed: true`), another
 * payload is a 422, a key in flight a 409, a crashed request's expired lock is taken over; a 4xx the
 * work throws is stored (its writes rolled back or never made) and a 5xx frees the key.
 */
export async function respondIdempotently(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  work: IdempotentWork,
): Promise<FastifyReply> {
  if ('created' in work) return respondCreated(ctx, request, reply, work.created);
  if ('firstRead' in work) return respondClaimingWithRead(ctx, request, reply, work.firstRead);
  await claimOrAnswer(ctx, request, reply, request.idempotencyKey!);
  if (reply.sent) return reply;
  return respond(ctx, request, reply, work.transaction, inTransaction(ctx));
}

type Work<D extends Queryable> = (db: D, store: StoreAnswer) => Promise<HandlerResult>;

/**
 * As a `transaction` work, without a transaction around the work: two round trips fewer (`BEGIN`,
 * `COMMIT`), for work whose writes are one statement that carries the stored answer (`store`), or
 * that opens a transaction of its own where it needs one (a USSD move). Its 4xx answers must come
 * before its first write, since nothing rolls that write back. The work runs on one connection
 * (`onOneConnection`), as a transaction would: a request that has read does not queue again for its
 * write while holding what it read (docs/performance.md, "Fewer statements, one connection").
 * `outsideTransaction` tells whether no transaction block is open on that connection now.
 */
function respondInStatements(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  work: (db: Queryable, store: StoreAnswer, outsideTransaction: () => boolean) => Promise<HandlerResult>,
): Promise<FastifyReply> {
  let outsideTransaction = () => false;
  return respond(
    ctx,
    request,
    reply,
    (db, store) => work(db, store, outsideTransaction),
    (body) =>
      ctx.database.onOneConnection((db, outside) => {
        outsideTransaction = outside;
        return body(db);
      }),
  );
}

/**
 * As `respondInStatements`, for a route whose work begins with
 * a one-row read: the key's claim rides on that read (`claimWithRead`), one round trip fewer
 * (docs/performance.md, "Fewer statements, one connection"). The work reads with `read` before anything
 * else; its later reads and writes use `db`. A key that already has a record is decided by
 * `claimKey` on the same connection: a replay, a 422 or a 409 is answered and the work goes no
 * further; an expired record or a crashed request's lock is taken over and the read runs alone. The
 * same semantics as a claim in the guard: what the work answers once claimed is stored (4xx) or the
 * key freed (5xx).
 */
async function respondClaimingWithRead(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  work: (db: Queryable, store: StoreAnswer, read: Read) => Promise<HandlerResult>,
): Promise<FastifyReply> {
  const claim = request.idempotencyKey!;
  const fingerprint = fingerprintOf(request);
  const { IDEMPOTENCY_TTL_SECONDS: ttl, IDEMPOTENCY_LOCK_SECONDS: lock } = ctx.config;
  try {
    return await respondInStatements(ctx, request, reply, (db, store, outsideTransaction) => {
      const read: Read = async <Row>(query: SQL) => {
        if (request.idempotency) return one<Row>(db, query);
        // The work's first statement, so none of its transactions is open yet; checked all the same.
        const alone = outsideTransaction();
        const first = await claimWithRead<Row>(db, claim, fingerprint, ttl, lock, query, alone);
        if (first.claimed) {
          claimed(ctx, request, claim);
          return first.row;
        }
        const outcome = await claimKey(db, claim, fingerprint, ttl, lock, alone);
        if (outcome.kind !== 'claimed') throw new KeyAnswered(outcome);
        claimed(ctx, request, claim);
        return one<Row>(db, query);
      };
      return work(db, store, read).then((result) => {
        if (!request.idempotency) throw new Error('the work answered without its first read');
        return result;
      });
    });
  } catch (error) {
    // Answered by the key's record, after the connection went back to the pool.
    if (!(error instanceof KeyAnswered)) throw error;
    await answerOutcome(ctx, request, reply, claim, error.outcome);
    return reply;
  }
}

/** The work stopped because the key's record answers the request (a replay, a 422 or a 409). */
class KeyAnswered extends Error {
  constructor(readonly outcome: ClaimOutcome) {
    super(`idempotency key answered: ${outcome.kind}`);
  }
}

type Settled = { status: number; payload: string };

async function respond<D extends Queryable>(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  work: Work<D>,
  within: (body: (db: D) => Promise<Settled>) => Promise<Settled>,
): Promise<FastifyReply> {
  const { status, payload } = await settle(ctx, request, within, async (db) => {
    let stored: { result: HandlerResult; payload: string } | undefined;
    // The claim as it is when the work stores: `respondClaimingWithRead`'s work claims on its way.
    const store: StoreAnswer = (result, onlyIf) => {
      const claim = request.idempotency;
      if (!claim) return undefined;
      stored = { result, payload: JSON.stringify(result.body) };
      return completion(claim, { status: result.status, body: stored.payload, headers: {} }, onlyIf);
    };
    const result = await work(db, store);
    if (stored?.result === result) return { status: result.status, payload: stored.payload };
    const payload = JSON.stringify(result.body);
    const claim = request.idempotency;
    if (claim) await completeKey(db, claim, { status: result.status, body: payload, headers: {} });
    return { status: result.status, payload };
  });
  // Committed: a webhook event this mutation emitted is delivered now, not at the next poll.
  if (ctx.events.enabled) ctx.webhookWorker?.nudge();
  return reply.code(status).type('application/json; charset=utf-8').send(payload);
}

/**
 * The answer of a create whose id and timestamps the server chose, known before it runs. New key: the key's record with this answer, the row
 * (`insertFrom`) and its webhook event are one autocommit statement, so the signed create costs one
 * database round trip (docs/performance.md, "A signed create in one statement"). Same semantics as
 * a `transaction` work: a duplicate while it runs is a 409; a key that has a record takes the
 * ordinary path (replay, 422, 409, or a crashed request's expired lock taken over); a failure
 * stores nothing (5xx). A client gone while the statement waits: PostgreSQL cancels it
 * (`client_connection_check_interval`, db/client.ts) or it commits whole, row and answer, and the
 * retry replays it; either way once.
 */
async function respondCreated(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  created: Created,
): Promise<FastifyReply> {
  const payload = JSON.stringify(created.body);
  const answer = { status: created.status, body: payload, headers: {} };
  const { event } = created;
  const claim = request.idempotencyKey!;
  const writes = (source: SQL) =>
    event
      ? sql`created_row as (${created.insertFrom(source)}), ${ctx.events.emission(event, source)}`
      : sql`created_row as (${created.insertFrom(source)})`;
  const fingerprint = fingerprintOf(request);
  const outcome = await createInOneStatement(
    ctx.database.db,
    claim,
    fingerprint,
    ctx.config.IDEMPOTENCY_TTL_SECONDS,
    answer,
    writes(sql`from claim`),
  );
  if (outcome.kind === 'created') {
    ctx.metrics.idempotency.inc({ outcome: 'executed' });
  } else {
    if (outcome.kind === 'ordinary') await claimOrAnswer(ctx, request, reply, claim, fingerprint);
    else await answerOutcome(ctx, request, reply, claim, outcome);
    if (reply.sent) return reply;
    // Claimed (an expired record, or a crashed request's lock): the transaction, as for any mutation.
    await settle(ctx, request, inTransaction(ctx), async (tx, claimed) => {
      const stored = claimed ? sql`stored as (${completion(claimed, answer)}), ` : sql``;
      await run(tx, sql`with ${stored}${writes(sql``)} select 1`);
      return { status: created.status, payload };
    });
  }
  if (event) {
    ctx.events.emitted(event.event);
    ctx.webhookWorker?.nudge();
  }
  return reply.code(created.status).type('application/json; charset=utf-8').send(payload);
}

const inTransaction =
  (ctx: AppContext) =>
  (body: (tx: Tx) => Promise<Settled>): Promise<Settled> =>
    ctx.database.db.transaction(body);

/** A mutation with its claimed key, `within` its transaction (or none): a 4xx is stored, a 5xx frees the key. */
async function settle<D extends Queryable>(
  ctx: AppContext,
  request: FastifyRequest,
  within: (body: (db: D) => Promise<Settled>) => Promise<Settled>,
  transact: (db: D, claim: Claim | undefined) => Promise<Settled>,
): Promise<Settled> {
  try {
    return await within((db) => transact(db, request.idempotency));
  } catch (error) {
    // The claim as it stands now: a work that claims with its first read may have claimed or not.
    const claim = request.idempotency;
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
