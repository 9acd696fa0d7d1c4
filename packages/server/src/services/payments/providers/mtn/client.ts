import { type HttpAnswer, sendHttp } from '../http-exchange.ts';
import type { CallOutcome, ExchangeRecord } from '../outcome.ts';
import { type MtnStatusBody, mtnErrorOf, parseMtnStatus } from './callbacks.ts';
import { type MtnConfig, type MtnProduct, mtnCallbackUrl, UUID_V4 } from './settings.ts';
import { MTN_SECRET_KEYS, MtnTokenCache } from './token.ts';

export type MtnPaymentInput = {
  /** `X-Reference-Id`: a UUID v4 of ours, reused on every retry of the same request (config.ts). */
  referenceId: string;
  /** Ours, echoed in the status body and the callback. */
  externalId: string;
  /** Digits with the country code, no `+` (E.164 without the plus). */
  msisdn: string;
  /** A positive decimal string (`"500"`, `"12.5"`). */
  amount: string;
  /** `payerMessage` and `payeeNote`: at most 160 characters, no quotes or angle brackets. */
  payerMessage: string;
  payeeNote: string;
};

/**
 * `duplicate`: MTN answered 409 RESOURCE_ALREADY_EXIST: a request with this X-Reference-Id already
 * reached it (an earlier attempt whose answer was lost). Nothing new happens; its status tells.
 */
export type MtnSendOutcome =
  | CallOutcome<{ referenceId: string }>
  | { kind: 'duplicate'; referenceId: string; exchanges: ExchangeRecord[] };

export type MtnAdapter = {
  readonly provider: 'MTN';
  /** Collection: prompts the payer; 202 empty body, the outcome comes by callback and status. */
  requestToPay(input: MtnPaymentInput): Promise<MtnSendOutcome>;
  /** The request-to-pay's status; an unknown reference is `rejected` RESOURCE_NOT_FOUND (HTTP 404). */
  requestToPayStatus(referenceId: string): Promise<CallOutcome<MtnStatusBody>>;
  /** Disbursement: pays the payee; 202 empty body. */
  transfer(input: MtnPaymentInput): Promise<MtnSendOutcome>;
  transferStatus(referenceId: string): Promise<CallOutcome<MtnStatusBody>>;
};

export type MtnAdapterOptions = { fetch?: typeof fetch; now?: () => Date };

const MSISDN = /^\d{8,15}$/;
const AMOUNT = /^(?:0|[1-9]\d*)(?:\.\d+)?$/;
/** MTN's common errors list apostrophes and some special characters as causes of a 400. */
const UNSAFE_TEXT = /['"<>&]/;

function requireInput(ok: boolean, message: string): void {
  if (!ok) throw new RangeError(message);
}
function checkInput(input: MtnPaymentInput): void {
  requireInput(UUID_V4.test(input.referenceId), `referenceId must be a UUID v4, got ${input.referenceId}`);
  requireInput(MSISDN.test(input.msisdn), `msisdn must be 8 to 15 digits, got ${input.msisdn}`);
  requireInput(
    AMOUNT.test(input.amount) && Number(input.amount) > 0,
    `amount must be positive: ${input.amount}`,
  );
  for (const text of [input.payerMessage, input.payeeNote]) {
    requireInput(text.length <= 160 && !UNSAFE_TEXT.test(text), `message/note unusable by MTN: ${text}`);
  }
  requireInput(input.externalId.length >= 1, 'externalId must not be empty');
}

/**
 * The MTN MoMo Open API adapter: each method makes one request (plus the product's token request
 * when needed, and one more try when MTN refuses the token with 401) and returns a typed outcome
 * with the exchange records.
 */
export function createMtnAdapter(config: MtnConfig, options: MtnAdapterOptions = {}): MtnAdapter {
  const now = () => (options.now ?? (() => new Date()))().getTime();
  const tokens: Record<MtnProduct, MtnTokenCache> = {
    collection: new MtnTokenCache(config, 'collection', now, options.fetch),
    disbursement: new MtnTokenCache(config, 'disbursement', now, options.fetch),
  };
  const requestMs = config.timeouts?.requestMs ?? 15_000;
  const base = config.baseUrl.replace(/\/+$/, '');

  async function call<T>(
    product: MtnProduct,
    operation: string,
    request: { method: 'GET' | 'POST'; path: string; headers?: Record<string, string>; body?: unknown },
    onSuccess: (answer: Extract<HttpAnswer, { ok: true }>) => T | null,
  ): Promise<CallOutcome<T> | { kind: 'conflict'; exchanges: ExchangeRecord[] }> {
    const exchanges: ExchangeRecord[] = [];
    for (let attempt = 1; ; attempt++) {
      const token = await tokens[product].get();
      exchanges.push(...token.exchanges);
      if (!token.ok) return { kind: 'not-sent', detail: token.detail, exchanges };
      const { answer, record } = await sendHttp({
        provider: 'MTN',
        operation,
        method: request.method,
        url: `${base}${request.path}`,
        headers: {
          authorization: `Bearer ${token.token}`,
          'x-target-environment': config.targetEnvironment,
          'ocp-apim-subscription-key': config[product].subscriptionKey,
          ...request.headers,
        },
        body: request.body,
        timeoutMs: requestMs,
        secretKeys: MTN_SECRET_KEYS,
        secretValues: [config.callbackToken],
        fetch: options.fetch,
      });
      exchanges.push(record);
      if (!answer.ok) return { kind: 'ambiguous', reason: answer.failure, detail: answer.detail, exchanges };
      const error = mtnErrorOf(answer.json);
      const why = error ? `${error.code} ${error.message}`.trim() : answer.text.slice(0, 200);
      if (answer.status >= 200 && answer.status < 300) {
        const value = onSuccess(answer);
        if (value !== null) return { kind: 'accepted', value, exchanges };
        return {
          kind: 'ambiguous',
          reason: 'unparseable',
          detail: `HTTP ${answer.status}: unexpected body`,
          exchanges,
        };
      }
      if (answer.status === 401) {
        // The token (or the product's key) was refused by the gateway: nothing was done.
        tokens[product].drop(token.token);
        if (attempt === 1) continue;
        return { kind: 'not-sent', detail: `HTTP 401 twice: ${why}`, exchanges };
      }
      if (answer.status === 409) return { kind: 'conflict', exchanges };
      if (answer.status >= 400 && answer.status < 500) {
        return {
          kind: 'rejected',
          code: error?.code ?? `HTTP_${answer.status}`,
          message: error?.message ?? why,
          httpStatus: answer.status,
          exchanges,
        };
      }
      // A 5xx (even one naming a code) or anything else: it may have been acted on.
      return {
        kind: 'ambiguous',
        reason: answer.status >= 500 ? 'server-error' : 'unparseable',
        detail: `HTTP ${answer.status}: ${why}`,
        exchanges,
      };
    }
  }

  async function send(product: MtnProduct, input: MtnPaymentInput): Promise<MtnSendOutcome> {
    checkInput(input);
    const party = { partyIdType: 'MSISDN', partyId: input.msisdn };
    const collection = product === 'collection';
    const outcome = await call(
      product,
      collection ? 'request-to-pay' : 'transfer',
      {
        method: 'POST',
        path: collection ? '/collection/v1_0/requesttopay' : '/disbursement/v1_0/transfer',
        headers: {
          'x-reference-id': input.referenceId,
          'x-callback-url': mtnCallbackUrl(config, input.referenceId),
        },
        body: {
          amount: input.amount,
          currency: config.currency,
          externalId: input.externalId,
          ...(collection ? { payer: party } : { payee: party }),
          payerMessage: input.payerMessage,
          payeeNote: input.payeeNote,
        },
      },
      // 202 Accepted with an empty body; the reference is the one we sent.
      (answer) => (answer.status === 202 ? { referenceId: input.referenceId } : null),
    );
    if (outcome.kind === 'conflict')
      return { kind: 'duplicate', referenceId: input.referenceId, exchanges: outcome.exchanges };
    return outcome;
  }

  async function status(product: MtnProduct, referenceId: string): Promise<CallOutcome<MtnStatusBody>> {
    requireInput(UUID_V4.test(referenceId), `referenceId must be a UUID v4, got ${referenceId}`);
    const collection = product === 'collection';
    const outcome = await call(
      product,
      collection ? 'request-to-pay-status' : 'transfer-status',
      {
        method: 'GET',
        path: collection
          ? `/collection/v1_0/requesttopay/${referenceId}`
          : `/disbursement/v1_0/transfer/${referenceId}`,
      },
      (answer) => {
        if (answer.status !== 200) return null;
        const parsed = parseMtnStatus(answer.json);
        return parsed.ok ? parsed.value : null;
      },
    );
    if (outcome.kind === 'conflict') {
      const detail = 'HTTP 409 to a status query';
      return { kind: 'ambiguous', reason: 'unparseable', detail, exchanges: outcome.exchanges };
    }
    return outcome;
  }

  return {
    provider: 'MTN',
    requestToPay: (input) => send('collection', input),
    requestToPayStatus: (referenceId) => status('collection', referenceId),
    transfer: (input) => send('disbursement', input),
    transferStatus: (referenceId) => status('disbursement', referenceId),
  };
}
