import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CallbackPipeline, CallbackVerdict } from '../../callback-pipeline.ts';
import type { QueryResult } from '../../pipeline/adapter.ts';
import type { Log } from '../../provider.ts';
import { guardProviderCallbacks, pathTokenMatcher } from '../callback-guard.ts';
import { redact } from '../http-exchange.ts';
import { lookUpWithin } from '../match-wait.ts';
import type { CallbackRouteDeps } from '../module.ts';
import type { ExchangeRecord } from '../outcome.ts';
import { DARAJA_IDS } from './adapter.ts';
import {
  CALLBACK_ACK,
  type DarajaResult,
  parseQueueTimeoutCallback,
  parseResultCallback,
  parseStkCallback,
  statusOfQueriedTransaction,
  transactionStatusWord,
} from './callbacks.ts';
import { DARAJA_RESULT_CODES } from './result-codes.ts';
import type { MpesaCallbackKind, MpesaSettings } from './settings.ts';
import { MPESA_SECRET_KEYS } from './token.ts';

export const MPESA_ADAPTER_NAME = 'mpesa';

type Matched = { id: string; transactionId: string };
export const DARAJA_CALLBACK_KINDS: readonly MpesaCallbackKind[] = [
  'stk',
  'b2c-result',
  'b2c-timeout',
  'status-result',
  'status-timeout',
];

/** What became of one callback: a verdict of the pipeline, or why it reached none. */
export type InboundOutcome = CallbackVerdict | 'recorded' | 'malformed' | 'unmatched';

/**
 * One Daraja callback body, already past the token (and allowlist) check: parsed exactly, matched
 * to our request by Daraja's ids (docs/payments.md, "Matching callbacks to requests") and handed to
 * the pipeline, which confirms by query before anything is applied. Never throws for a body: a
 * malformed or unmatched one is logged and recorded, and the route acknowledges every body alike.
 */
export async function handleDarajaCallback(
  pipeline: CallbackPipeline,
  input: {
    kind: MpesaCallbackKind;
    rawBody: string;
    receivedAt: Date;
    /** Where the callback came from (the route's request.ip, after TRUST_PROXY). */
    sourceAddress?: string;
    log: Log;
    matchWaitMs?: number;
    /** Redacted wherever they occur in the recorded body (the path token, echoed by a QueueTimeOut). */
    secretValues?: readonly string[];
  },
): Promise<InboundOutcome> {
  const { kind, rawBody, log } = input;
  const exchange = (error: string | null = null): ExchangeRecord => ({
    provider: 'MPESA',
    operation: `callback:${kind}`,
    method: 'POST',
    // Never the path token: the record names the route by its kind alone.
    path: `/v1/payments/callbacks/daraja/[token]/${kind}`,
    // A QueueTimeOut echoes our own request: its SecurityCredential and the token in its URLs.
    requestBody: redact(jsonOrText(rawBody), MPESA_SECRET_KEYS, input.secretValues),
    status: 200,
    responseBody: CALLBACK_ACK,
    startedAt: input.receivedAt,
    ...(input.sourceAddress ? { sourceAddress: input.sourceAddress } : {}),
    latencyMs: Date.now() - input.receivedAt.getTime(),
    error,
  });

  const malformed = async (error: string): Promise<InboundOutcome> => {
    log.warn({ kind, error, bytes: rawBody.length }, 'Daraja callback: malformed body');
    await pipeline.recordUnmatched?.(MPESA_ADAPTER_NAME, exchange(error), `malformed: ${error}`);
    return 'malformed';
  };
  const find = async (key: string, value: string, orphan?: () => Promise<Matched | undefined>) => {
    // A callback can overtake the commit of the answer that gave us its id (Daraja calls back within
    // a second or two): look again for a while before calling it unmatched.
    const found = await lookUpWithin(
      () => pipeline.findRequestByProviderId(MPESA_ADAPTER_NAME, key, value),
      input.matchWaitMs,
    );
    const candidate = !found && orphan ? await orphan() : undefined;
    if (!found && !candidate) {
      log.warn({ kind, key, value }, 'Daraja callback: no request of ours has this id');
      await pipeline.recordUnmatched?.(MPESA_ADAPTER_NAME, exchange(), `unmatched ${key} ${value}`);
    }
    return found ? { request: found } : candidate ? { request: candidate, orphan: true } : undefined;
  };
  const findOne = async (key: string, value: string) => (await find(key, value))?.request;

  switch (kind) {
    case 'stk': {
      const parsed = parseStkCallback(rawBody);
      if (!parsed.ok) return malformed(parsed.error);
      const cb = parsed.value;
      // A push whose answer we never got (timeout, reset, a crash) has no CheckoutRequestID of ours:
      // the one pending collection of the number and amount a callback names is its candidate. The
      // callback's ids are asked about by STK Query first, and stored only if Daraja confirms them.
      const payment = cb.payment;
      const orphan =
        payment?.phoneNumber && pipeline.findOrphanCollection
          ? () =>
              pipeline.findOrphanCollection!(MPESA_ADAPTER_NAME, {
                key: DARAJA_IDS.checkoutRequestId,
                msisdn: payment.phoneNumber!,
                amount: String(payment.amount),
              })
          : undefined;
      const match = await find(DARAJA_IDS.checkoutRequestId, cb.checkoutRequestId, orphan);
      if (!match) return 'unmatched';
      if (match.orphan)
        log.warn({ kind, requestId: match.request.id }, 'Daraja callback: a candidate by number and amount');
      return pipeline.handleCallback({
        adapterName: MPESA_ADAPTER_NAME,
        requestId: match.request.id,
        claimed: {
          status: cb.status,
          ...(cb.reason ? { reason: cb.reason } : {}),
          ...(cb.payment ? { receipt: cb.payment.receipt } : {}),
        },
        exchange: exchange(),
        ...(match.orphan
          ? {
              adoptIds: {
                [DARAJA_IDS.checkoutRequestId]: cb.checkoutRequestId,
                [DARAJA_IDS.merchantRequestId]: cb.merchantRequestId,
              },
            }
          : {}),
      });
    }
    case 'b2c-result': {
      const parsed = parseResultCallback(rawBody);
      if (!parsed.ok) return malformed(parsed.error);
      const r = parsed.value;
      const request = await findOne(DARAJA_IDS.originatorConversationId, r.originatorConversationId);
      if (!request) return 'unmatched';
      const receipt = r.transactionId ?? stringParameter(r, 'TransactionReceipt');
      return pipeline.handleCallback({
        adapterName: MPESA_ADAPTER_NAME,
        requestId: request.id,
        claimed: {
          status: r.status,
          ...(r.reason ? { reason: r.reason } : {}),
          ...(receipt ? { receipt } : {}),
        },
        exchange: exchange(),
      });
    }
    case 'b2c-timeout': {
      // Not an outcome: Daraja gave up waiting internally; a Result may still follow.
      const parsed = parseQueueTimeoutCallback(rawBody);
      if (!parsed.ok) return malformed(parsed.error);
      const request = await findOne(
        DARAJA_IDS.originatorConversationId,
        parsed.value.originatorConversationId,
      );
      if (!request) return 'unmatched';
      return pipeline.handleCallback({
        adapterName: MPESA_ADAPTER_NAME,
        requestId: request.id,
        claimed: { status: 'PENDING', reason: 'B2C QueueTimeOut: Daraja timed out internally' },
        exchange: exchange(),
      });
    }
    case 'status-result': {
      const parsed = parseResultCallback(rawBody);
      if (!parsed.ok) return malformed(parsed.error);
      const r = parsed.value;
      // The payout's id is in the parameters; the Result's own OriginatorConversationID is the query's.
      // A failed payout's answer may not carry it (Daraja documents only the completed shape): then
      // the Result's own id, that of our query, names the payout we asked about.
      const payoutId = stringParameter(r, 'OriginatorConversationID');
      const request = payoutId
        ? await findOne(DARAJA_IDS.originatorConversationId, payoutId)
        : await findOne(DARAJA_IDS.statusQueryId, r.originatorConversationId);
      if (!request) return 'unmatched';
      await pipeline.recordQueryAnswer(request.id, transactionStatusAnswer(r, exchange()));
      return 'recorded';
    }
    case 'status-timeout': {
      // The echo of our Transaction Status request carries the query's id, which we do not keep:
      // the payout stays with reconciliation, which asks again.
      const parsed = parseQueueTimeoutCallback(rawBody);
      if (!parsed.ok) return malformed(parsed.error);
      log.warn({ kind }, 'Daraja Transaction Status timed out; reconciliation will ask again');
      await pipeline.recordUnmatched?.(MPESA_ADAPTER_NAME, exchange(), 'Transaction Status QueueTimeOut');
      return 'unmatched';
    }
  }
}

/**
 * A Transaction Status Result as a query result. Completed is SUCCESS with the receipt; Failed (the
 * query succeeded, the payout did not) and a known failure code are final; Pending is pending. A
 * code Daraja does not document for this (e.g. the fake's "TS_NOT_FOUND") or a TransactionStatus
 * word we do not read is `unknown`, never FAILED: a payout is not failed on a guess, and the
 * operator sees the word (docs/payments.md, "Transaction Status's TransactionStatus word").
 */
export function transactionStatusAnswer(r: DarajaResult, exchange: ExchangeRecord): QueryResult {
  const exchanges = [exchange];
  if (DARAJA_RESULT_CODES[r.code] === undefined) {
    return { kind: 'unknown', reason: r.reason ?? `M-Pesa ${r.code}`, exchanges };
  }
  const status = statusOfQueriedTransaction(r);
  const word = transactionStatusWord(r);
  if (status === undefined) {
    const said = word ? `TransactionStatus "${word.slice(0, 40)}"` : 'no TransactionStatus';
    return {
      kind: 'unknown',
      reason: `M-Pesa Transaction Status: ${said}, which we do not read as paid or failed`,
      exchanges,
    };
  }
  if (status === 'PENDING') return { kind: 'pending', exchanges };
  const receipt = stringParameter(r, 'ReceiptNo') ?? r.transactionId ?? undefined;
  // What Daraja's record says moved: checked against our request when a receipt is in dispute.
  const amount = stringParameter(r, 'Amount');
  const party = stringParameter(r, 'DebitPartyName');
  // Code 0 with TransactionStatus "Failed": the description is the query's own success text.
  const reason =
    r.status === 'SUCCESS' && status !== 'SUCCESS' ? `M-Pesa Transaction Status: ${word}` : r.reason;
  return {
    kind: 'final',
    status,
    ...(reason ? { reason } : {}),
    ...(status === 'SUCCESS' && receipt ? { receipt } : {}),
    ...(amount || party ? { evidence: { ...(amount ? { amount } : {}), ...(party ? { party } : {}) } } : {}),
    exchanges,
  };
}

function stringParameter(r: DarajaResult, key: string): string | undefined {
  const value = r.parameters[key];
  return value === undefined || String(value).trim() === '' ? undefined : String(value);
}

function jsonOrText(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw.slice(0, 10_000);
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** True when the request may skip the rate limits (a provider callback under the right token). */
    rateLimitExempt?: (request: FastifyRequest) => boolean;
    /** Path parameters the access log replaces with `[REDACTED]` (a path token). */
    redactParams?: readonly string[];
  }
}

/** Relative to /v1; the word "mpesa" stays out of the path (docs/payments.md). */
export const DARAJA_CALLBACK_ROUTE = '/payments/callbacks/daraja/:token/:kind';

/**
 * POST /v1/payments/callbacks/daraja/{token}/{kind}: Daraja's callbacks, outside the partner
 * authentication. A wrong token or kind is the unknown route's 404; a source outside the optional
 * allowlist a 403. Under the right token every body, however malformed or large, gets 200 and
 * Daraja's acknowledgement (CALLBACK_ACK), never a 500 or a stack: the body is logged and
 * recorded, and the pipeline confirms by query before anything is applied.
 */
export async function darajaCallbackRoutes(
  app: FastifyInstance,
  { ctx, settings, pipeline }: CallbackRouteDeps<MpesaSettings>,
) {
  const tokenMatches = pathTokenMatcher(settings.callbackToken);
  const kindOf = (request: FastifyRequest): MpesaCallbackKind | undefined => {
    const kind = (request.params as { kind?: string }).kind;
    return DARAJA_CALLBACK_KINDS.find((k) => k === kind);
  };
  const valid = (request: FastifyRequest) =>
    tokenMatches((request.params as { token?: string }).token) && kindOf(request) !== undefined;

  // Text bodies for the Daraja parsers alone; 404, 403, and Daraja's ack for every body under the token.
  guardProviderCallbacks(app, {
    ctx,
    provider: 'Daraja',
    valid,
    allowedIps: settings.callbackAllowedIps,
    ack: CALLBACK_ACK,
  });

  app.post(
    DARAJA_CALLBACK_ROUTE,
    { config: { rateLimitExempt: valid, redactParams: ['token'] } },
    async (request, reply) => {
      const kind = kindOf(request) as MpesaCallbackKind;
      try {
        const outcome = await handleDarajaCallback(pipeline, {
          kind,
          rawBody: request.rawBody ?? '',
          receivedAt: new Date(),
          sourceAddress: request.ip,
          log: request.log,
          secretValues: [settings.callbackToken],
        });
        ctx.metrics.paymentCallbacks.inc({ outcome });
        if (outcome === 'contradicted')
          request.log.warn({ kind, suspicious: true }, 'Daraja callback contradicted by the query');
      } catch (error) {
        // A store that is down must not turn into Daraja retries of a 500: reconciliation asks later.
        request.log.error(
          { err: error, kind },
          'Daraja callback not processed; reconciliation will settle it',
        );
        ctx.metrics.paymentCallbacks.inc({ outcome: 'error' });
      }
      return reply.code(200).send(CALLBACK_ACK);
    },
  );
}
