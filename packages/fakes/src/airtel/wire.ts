import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { type Answer, digits, upper } from '../kit/index.ts';
import type { FakeAirtelScenario, FakeAirtelStatus } from './scenarios.ts';

/** Airtel's shapes: its answer envelope, amounts, identifiers, status codes and its RSA key. */

export type TxRecord = {
  kind: 'collection' | 'disbursement';
  id: string;
  amount: number;
  msisdn: string;
  scenario: FakeAirtelScenario;
  status: FakeAirtelStatus;
  message: string;
  airtelMoneyId: string;
  referenceId: string;
  settle: (() => void) | null;
};

type Codes = { result_code?: string; response_code?: string };

/** Airtel's answer envelope; `success: false` under HTTP 200 is how most failures come. */
export const envelope = (
  success: boolean,
  code: string,
  message: string,
  codes: Codes,
  data?: unknown,
  httpStatus = 200,
): Answer => ({
  status: httpStatus,
  body: { ...(data === undefined ? {} : { data }), status: { code, message, ...codes, success } },
});
export const refused = (message: string, codes: Codes) => envelope(false, '400', message, codes);
export const serverError = (): Answer =>
  envelope(false, '500', 'Internal Server Error', { result_code: 'ESB000001' }, undefined, 500);

export const COLLECTION_CODES: Record<FakeAirtelStatus, string> = {
  TS: 'DP00800001001',
  TF: 'DP00800001005',
  TA: 'DP00800001000',
  TIP: 'DP00800001006',
  TE: 'DP00800001029',
};
export const DISBURSEMENT_CODES: Record<FakeAirtelStatus, string> = {
  TS: 'DP00900001001',
  TF: 'DP00900001005',
  TA: 'DP00900001000',
  TIP: 'DP00900001006',
  TE: 'DP00900001014',
};

/** An amount as Airtel reads it: a JSON number > 0 with at most 2 decimals (or a numeric string). */
export function airtelAmount(value: unknown): number | null {
  const n =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\d+(\.\d{1,2})?$/.test(value)
        ? Number(value)
        : Number.NaN;
  return Number.isFinite(n) && n > 0 && Math.round(n * 100) === n * 100 ? n : null;
}

export const yymmdd = () => new Date().toISOString().slice(2, 10).replaceAll('-', '');
/** Like `MP210603.1234.L06941`. */
export const moneyIdLike = () => `MP${yymmdd()}.${digits(4)}.${upper(1)}${digits(5)}`;

/** The fake's RSA key: the PEM given, or one generated; the public half as the portal shows it. */
export function keyPair(pem?: string): { privateKey: KeyObject | string; publicKey: string } {
  if (pem) {
    const privateKey = createPrivateKey(pem);
    return {
      privateKey,
      publicKey: createPublicKey(privateKey).export({ type: 'spki', format: 'der' }).toString('base64'),
    };
  }
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    privateKey: pair.privateKey,
    publicKey: pair.publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
  };
}

/** The fake's default credentials (not secrets: they open nothing but a local fake). */
export const FAKE_AIRTEL_CLIENT_ID = 'fake-airtel-client-id';
export const FAKE_AIRTEL_CLIENT_SECRET = 'fake-airtel-client-secret';
export const FAKE_AIRTEL_PIN = '1234';

/**
 * What a server needs to talk to a fake started with its defaults. The RSA key is not among them:
 * the adapter fetches it from the fake's `/v1/rsa/encryption-keys`. The fake must be told our
 * callback URL (`--callback-url`, `POST /__fake/callback-url` or `setCallbackUrl`), as Airtel's portal is.
 */
export function FAKE_AIRTEL_ENV(fakeUrl: string): Record<string, string> {
  return {
    AIRTEL_BASE_URL: fakeUrl,
    AIRTEL_CLIENT_ID: FAKE_AIRTEL_CLIENT_ID,
    AIRTEL_CLIENT_SECRET: FAKE_AIRTEL_CLIENT_SECRET,
    AIRTEL_COUNTRY: 'KE',
    AIRTEL_CURRENCY: 'KES',
    AIRTEL_DISBURSEMENT_PIN: FAKE_AIRTEL_PIN,
  };
}
