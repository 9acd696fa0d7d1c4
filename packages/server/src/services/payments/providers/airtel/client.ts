import type { KeyObject } from 'node:crypto';
import { z } from 'zod';
import { sendHttp } from '../http-exchange.ts';
import type { CallOutcome, ExchangeRecord } from '../outcome.ts';
import { airtelPublicKey, encryptPin, signMessage } from './crypto.ts';
import { type Classified, classify } from './envelope.ts';
import {
  type AirtelTransactionStatus,
  type CodeMeaning,
  isAirtelTransactionStatus,
  type MappedStatus,
  mapTransactionStatus,
} from './result-codes.ts';
import type { AirtelConfig } from './settings.ts';
import { AIRTEL_SECRET_KEYS, airtelTokenCache } from './token.ts';

export type UssdPushInput = {
  /** Ours, unique per collection and reused on every retry: Airtel refuses a second use (ESB000041). */
  transactionId: string;
  /** The local number WITHOUT the country code (`733123456` for +254 733 123 456). */
  msisdn: string;
  /** A JSON number with at most `amountDecimals` decimals, > 0. */
  amount: number;
  /** 4 to 64 characters ("reference for the goods purchased"). */
  reference: string;
};
export type UssdPushAccepted = { transactionId: string; responseCode: string; message: string };

export type DisbursementInput = {
  /** Ours, unique per payout and reused on every retry: a reuse is DP00900001017 / ESB000041. */
  transactionId: string;
  msisdn: string;
  amount: number;
  reference: string;
  payeeName?: string;
};
export type DisbursementAccepted = {
  transactionId: string;
  /** `success` (paid at once), `in-process`, or `ambiguous` (enquire). */
  meaning: CodeMeaning;
  responseCode: string;
  message: string;
  airtelMoneyId?: string;
  referenceId?: string;
};

/** An enquiry's answer: the transaction's status, or `not-found` (Airtel has no such id). */
export type EnquiryAnswer =
  | { found: false; code: string; message: string }
  | (MappedStatus & {
      found: true;
      transactionStatus: AirtelTransactionStatus;
      message: string;
      airtelMoneyId?: string;
    });

/** A reused id: the earlier request with it went through; an enquiry tells its outcome. */
export type Duplicate = {
  kind: 'duplicate';
  transactionId: string;
  code: string;
  exchanges: ExchangeRecord[];
};

export type AirtelAdapter = {
  readonly provider: 'AIRTEL';
  /** Collection USSD push; the outcome comes on the callback or by enquiry (wait ≥ 3 minutes). */
  ussdPush(input: UssdPushInput): Promise<CallOutcome<UssdPushAccepted> | Duplicate>;
  /** Transaction enquiry of a collection by our id. */
  collectionEnquiry(transactionId: string): Promise<CallOutcome<EnquiryAnswer>>;
  /** Disbursement (payout) with the encrypted PIN; often final in its own answer. */
  disburse(input: DisbursementInput): Promise<CallOutcome<DisbursementAccepted> | Duplicate>;
  /** Transaction enquiry of a payout by our id. */
  disbursementEnquiry(transactionId: string): Promise<CallOutcome<EnquiryAnswer>>;
};

export type AirtelAdapterOptions = { fetch?: typeof fetch; now?: () => Date };

const enquiryData = z.object({
  transaction: z.object({
    id: z.union([z.string(), z.number()]).optional(),
    status: z.string(),
    message: z.string().nullish(),
    airtel_money_id: z.string().nullish(),
  }),
});
const encryptionKeyData = z.object({ key: z.string().min(1), key_id: z.unknown().optional() });
const disbursementData = z.object({
  transaction: z
    .object({
      id: z.union([z.string(), z.number(), z.boolean()]).nullish(),
      status: z.string().nullish(),
      airtel_money_id: z.string().nullish(),
      reference_id: z.string().nullish(),
    })
    .partial(),
});

/** Refuses what Airtel cannot take before anything is sent: a programming error, not an outcome. */
function requireInput(ok: boolean, message: string): void {
  if (!ok) throw new RangeError(message);
}

type Failure = Exclude<Classified, { kind: 'success' | 'invalid-token' }>;

/** A failure that is not a duplicate or not-found, as a CallOutcome. */
function notAccepted(
  c: Failure,
  exchanges: ExchangeRecord[],
): Exclude<CallOutcome<never>, { kind: 'accepted' }> {
  switch (c.kind) {
    case 'ambiguous':
      return { kind: 'ambiguous', reason: c.reason, detail: c.detail, exchanges };
    case 'throttled':
      return { kind: 'not-sent', detail: c.detail, exchanges };
    case 'failure':
      if (
        c.meaning === 'ambiguous' ||
        c.meaning === 'in-process' ||
        c.meaning === 'duplicate' ||
        c.meaning === 'not-found'
      )
        return {
          kind: 'ambiguous',
          reason: 'server-error',
          detail: `Airtel ${c.code}: ${c.message} (HTTP ${c.httpStatus})`,
          exchanges,
        };
      return { kind: 'rejected', code: c.code, message: c.message, httpStatus: c.httpStatus, exchanges };
  }
}

/**
 * The Airtel Africa Open API adapter: each method makes one request (plus the token request it
 * needs, and one retry when Airtel calls the token invalid) and returns a typed outcome with the
 * exchange records. It reads every answer's BODY: HTTP 200 with `status.success: false` is a failure.
 */
export function createAirtelAdapter(config: AirtelConfig, options: AirtelAdapterOptions = {}): AirtelAdapter {
  const now = options.now ?? (() => new Date());
  const tokens = airtelTokenCache(config, () => now().getTime(), options.fetch);
  const requestMs = config.timeouts?.requestMs ?? 15_000;
  const base = config.baseUrl.replace(/\/+$/, '');
  let publicKey: KeyObject | undefined = config.rsaPublicKey
    ? airtelPublicKey(config.rsaPublicKey)
    : undefined;
  const decimals = config.amountDecimals;
  const requireAmount = (amount: number) =>
    requireInput(
      Number.isFinite(amount) && amount > 0 && Number(amount.toFixed(decimals)) === amount,
      `amount must be > 0 with at most ${decimals} decimals, got ${amount}`,
    );
  const requireMsisdn = (msisdn: string) =>
    requireInput(
      /^\d{6,12}$/.test(msisdn),
      `msisdn must be the local digits without ${config.callingCode}, got ${msisdn}`,
    );
  const requireId = (id: string) =>
    requireInput(
      /^[A-Za-z0-9_-]{4,64}$/.test(id),
      `transaction id must be 4 to 64 of A-Z a-z 0-9 _ -, got ${id}`,
    );

  /** One call with a bearer token; on an invalid token drops it and tries once more. */
  async function call(
    operation: string,
    method: 'GET' | 'POST',
    path: string,
    body?: Record<string, unknown>,
    sign = false,
  ): Promise<
    | { c: Exclude<Classified, { kind: 'invalid-token' }>; exchanges: ExchangeRecord[] }
    | { notSent: string; exchanges: ExchangeRecord[] }
  > {
    const exchanges: ExchangeRecord[] = [];
    for (let attempt = 1; ; attempt++) {
      const token = await tokens.get();
      exchanges.push(...token.exchanges);
      if (!token.ok) return { notSent: token.detail, exchanges };
      const headers: Record<string, string> = {
        authorization: `Bearer ${token.token}`,
        accept: '*/*',
        'x-country': config.country,
        'x-currency': config.currency,
      };
      // sendHttp sends JSON.stringify(body): the signature covers exactly those bytes.
      if (sign && body)
        Object.assign(
          headers,
          signMessage(JSON.stringify(body), publicKey!, config.signingKeyPadding ?? 'pkcs1'),
        );
      const { answer, record } = await sendHttp({
        provider: 'AIRTEL',
        operation,
        method,
        url: `${base}${path}`,
        headers,
        body,
        timeoutMs: requestMs,
        secretKeys: AIRTEL_SECRET_KEYS,
        fetch: options.fetch,
      });
      exchanges.push(record);
      const c = classify(answer);
      if (c.kind === 'invalid-token') {
        tokens.drop(token.token);
        if (attempt === 1) continue;
        return { notSent: `token refused twice: ${c.detail}`, exchanges };
      }
      return { c, exchanges };
    }
  }

  async function enquire(operation: string, path: string): Promise<CallOutcome<EnquiryAnswer>> {
    const r = await call(operation, 'GET', path);
    if ('notSent' in r) return { kind: 'not-sent', detail: r.notSent, exchanges: r.exchanges };
    const { c, exchanges } = r;
    if (c.kind === 'failure' && c.meaning === 'not-found')
      return { kind: 'accepted', value: { found: false, code: c.code, message: c.message }, exchanges };
    if (c.kind !== 'success') return notAccepted(c, exchanges);
    const data = enquiryData.safeParse(c.envelope.data);
    const status = data.success ? data.data.transaction.status.trim().toUpperCase() : undefined;
    if (!data.success || !isAirtelTransactionStatus(status)) {
      return {
        kind: 'ambiguous',
        reason: 'unparseable',
        detail: `enquiry without a known transaction status`,
        exchanges,
      };
    }
    const t = data.data.transaction;
    return {
      kind: 'accepted',
      value: {
        found: true,
        transactionStatus: status,
        ...mapTransactionStatus(status, t.message),
        message: t.message ?? '',
        ...(t.airtel_money_id ? { airtelMoneyId: t.airtel_money_id } : {}),
      },
      exchanges,
    };
  }

  /**
   * Airtel's RSA key: AIRTEL_RSA_PUBLIC_KEY, or else `GET /v1/rsa/encryption-keys` once (the same
   * key the portal shows). Undefined with why when it cannot be had: then nothing is sent.
   */
  async function ensurePublicKey(exchanges: ExchangeRecord[]): Promise<string | null> {
    if (publicKey) return null;
    const r = await call('encryption-key', 'GET', '/v1/rsa/encryption-keys');
    exchanges.push(...r.exchanges);
    if ('notSent' in r) return r.notSent;
    const key = r.c.kind === 'success' ? encryptionKeyData.safeParse(r.c.envelope.data) : null;
    if (!key?.success) return `no RSA key from /v1/rsa/encryption-keys (${r.c.kind})`;
    try {
      publicKey = airtelPublicKey(key.data.key);
      return null;
    } catch {
      return 'the RSA key from /v1/rsa/encryption-keys does not parse';
    }
  }

  const disbursementPath = () => {
    switch (config.disbursementApi ?? 'v1') {
      case 'v1':
        return '/standard/v1/disbursements/';
      case 'v2':
        return '/standard/v2/disbursements/';
      case 'v3':
        return '/standard/v3/disbursements';
    }
  };

  return {
    provider: 'AIRTEL',

    async ussdPush(input) {
      requireId(input.transactionId);
      requireMsisdn(input.msisdn);
      requireAmount(input.amount);
      requireInput(
        input.reference.length >= 4 && input.reference.length <= 64,
        'reference: 4 to 64 characters',
      );
      const v2 = config.collectionApi === 'v2';
      const keyExchanges: ExchangeRecord[] = [];
      const noKey = v2 ? await ensurePublicKey(keyExchanges) : null;
      if (noKey) return { kind: 'not-sent', detail: noKey, exchanges: keyExchanges };
      const r = await call(
        'ussd-push',
        'POST',
        v2 ? '/merchant/v2/payments/' : '/merchant/v1/payments/',
        {
          reference: input.reference,
          subscriber: { country: config.country, currency: config.currency, msisdn: input.msisdn },
          transaction: {
            amount: input.amount,
            country: config.country,
            currency: config.currency,
            id: input.transactionId,
          },
        },
        v2,
      );
      if ('notSent' in r)
        return { kind: 'not-sent', detail: r.notSent, exchanges: [...keyExchanges, ...r.exchanges] };
      const c = r.c;
      const exchanges = [...keyExchanges, ...r.exchanges];
      if (c.kind === 'failure' && c.meaning === 'duplicate')
        return { kind: 'duplicate', transactionId: input.transactionId, code: c.code, exchanges };
      if (c.kind !== 'success') return notAccepted(c, exchanges);
      if (c.meaning === 'ambiguous')
        return {
          kind: 'ambiguous',
          reason: 'server-error',
          detail: `Airtel ${c.code}: ${c.message}`,
          exchanges,
        };
      return {
        kind: 'accepted',
        value: { transactionId: input.transactionId, responseCode: c.code, message: c.message },
        exchanges,
      };
    },

    collectionEnquiry(transactionId) {
      requireId(transactionId);
      return enquire('collection-enquiry', `/standard/v1/payments/${encodeURIComponent(transactionId)}`);
    },

    async disburse(input) {
      requireId(input.transactionId);
      requireMsisdn(input.msisdn);
      requireAmount(input.amount);
      requireInput(
        /^[A-Za-z0-9 ]{4,64}$/.test(input.reference),
        'reference: 4 to 64 letters, digits or spaces',
      );
      requireInput(/^\d{4}$/.test(config.disbursementPin ?? ''), 'AIRTEL_DISBURSEMENT_PIN must be 4 digits');
      const api = config.disbursementApi ?? 'v1';
      const keyExchanges: ExchangeRecord[] = [];
      const noKey = await ensurePublicKey(keyExchanges);
      if (noKey) return { kind: 'not-sent', detail: noKey, exchanges: keyExchanges };
      const pin = encryptPin(config.disbursementPin!, publicKey!, config.pinPadding ?? 'pkcs1');
      const body =
        api === 'v1'
          ? {
              payee: { msisdn: input.msisdn },
              reference: input.reference,
              pin,
              transaction: { amount: input.amount, id: input.transactionId },
            }
          : {
              payee: {
                msisdn: input.msisdn,
                currency: config.currency,
                ...(input.payeeName ? { name: input.payeeName } : {}),
              },
              reference: input.reference,
              pin,
              transaction: {
                amount: input.amount,
                id: input.transactionId,
                type: config.disbursementType ?? 'B2C',
              },
            };
      const r = await call('disbursement', 'POST', disbursementPath(), body, api === 'v3');
      if ('notSent' in r)
        return { kind: 'not-sent', detail: r.notSent, exchanges: [...keyExchanges, ...r.exchanges] };
      const c = r.c;
      const exchanges = [...keyExchanges, ...r.exchanges];
      if (c.kind === 'failure' && c.meaning === 'duplicate')
        return { kind: 'duplicate', transactionId: input.transactionId, code: c.code, exchanges };
      // A fetched key Airtel no longer takes (rotated: `valid_upto`) is fetched again next time.
      if (c.kind === 'failure' && !config.rsaPublicKey && /ncorrect encrypted pin/i.test(c.message))
        publicKey = undefined;
      if (c.kind !== 'success') return notAccepted(c, exchanges);
      const data = disbursementData.safeParse(c.envelope.data);
      const t = data.success ? data.data.transaction : {};
      return {
        kind: 'accepted',
        value: {
          transactionId: input.transactionId,
          meaning: c.meaning,
          responseCode: c.code,
          message: c.message,
          ...(t.airtel_money_id ? { airtelMoneyId: t.airtel_money_id } : {}),
          ...(t.reference_id ? { referenceId: t.reference_id } : {}),
        },
        exchanges,
      };
    },

    disbursementEnquiry(transactionId) {
      requireId(transactionId);
      const id = encodeURIComponent(transactionId);
      // Airtel documents a status endpoint for v1 and v2 only: a v3 (signed) payout is asked about
      // at v2's, by the same id of ours (docs/payments-airtel.md, "v3 payouts").
      const path =
        (config.disbursementApi ?? 'v1') === 'v1'
          ? `/standard/v1/disbursements/${id}`
          : `/standard/v2/disbursements/${id}?transactionType=${config.disbursementType ?? 'B2C'}`;
      return enquire('disbursement-enquiry', path);
    },
  };
}
