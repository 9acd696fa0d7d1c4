/** RSA padding for the encrypted PIN and for `x-key` (the sources disagree: docs/payments-airtel.md). */
export type RsaPadding = 'pkcs1' | 'oaep-sha1' | 'oaep-sha256';

/** How the callback `hash` is computed (the canonical input is not documented; docs/payments-airtel.md). */
export type CallbackHashInput = 'transaction' | 'body';

/** Everything the Airtel adapter needs; settings.ts fills it from the AIRTEL_ variables. */
export type AirtelConfig = {
  /** `https://openapiuat.airtel.africa`, `https://openapi.airtel.africa`, a country host, or the fake. */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** ISO 3166 alpha-2 of the wallet (`X-Country`), e.g. `KE`. */
  country: string;
  /** ISO 4217 of the wallet (`X-Currency`), e.g. `KES`. */
  currency: string;
  /** The country's calling code without `+` (`254`): stripped from the msisdn, which Airtel takes without it. */
  callingCode: string;
  /** Decimals Airtel takes in an amount for this wallet: 0 (KES, UGX, …) or 2 (ZMW, …). */
  amountDecimals: 0 | 2;
  /**
   * Public base of our callback route, without the token, e.g.
   * `https://api.example.com/v1/payments/callbacks/airtel`. Airtel takes the callback URL in its
   * portal, not per request: register `{callbackBaseUrl}/{callbackToken}` there.
   */
  callbackBaseUrl: string;
  callbackToken: string;
  /** The portal's callback private key when "Callback with authentication" is on; unset: no `hash` check. */
  callbackHmacKey?: string;
  /** What the `hash` covers; default `transaction` (HMAC over JSON of the `transaction` object). */
  callbackHashInput?: CallbackHashInput;
  /** USSD push path version: `v1` (unsigned, the default) or `v2` (message signing). */
  collectionApi?: 'v1' | 'v2';
  /** Disbursement path version: `v1` (the default), `v2`, or `v3` (message signing). */
  disbursementApi?: 'v1' | 'v2' | 'v3';
  /** The disbursement wallet's 4-digit PIN (encrypted with `rsaPublicKey` before it is sent). */
  disbursementPin?: string;
  /**
   * Airtel's RSA public key (PEM, or the portal's bare base64 SPKI): PIN encryption and `x-key`.
   * Unset: fetched once from `GET /v1/rsa/encryption-keys`.
   */
  rsaPublicKey?: string;
  /** PIN encryption padding; default `pkcs1` (docs/payments-airtel.md, "Decisions"). */
  pinPadding?: RsaPadding;
  /** `x-key` padding; default `pkcs1`. */
  signingKeyPadding?: RsaPadding;
  /** Disbursement `transaction.type` for v2/v3: `B2C` (the default) for subscribers. */
  disbursementType?: 'B2C' | 'B2B';
  /** How long after acceptance the sweep waits before it enquires; default 180 s (Airtel: ≥ 3 minutes). */
  reconcileAfterMs?: number;
  timeouts?: {
    /** Token request; default 10 s. */
    tokenMs?: number;
    /** Every other call; default 15 s. */
    requestMs?: number;
  };
  /** Refresh this long before `expires_in` runs out; default 5 s (at most half the lifetime). */
  tokenRefreshMarginSeconds?: number;
};

/** The URL to register in Airtel's portal (one per application; collections and payouts alike). */
export function callbackUrl(config: Pick<AirtelConfig, 'callbackBaseUrl' | 'callbackToken'>): string {
  return `${config.callbackBaseUrl.replace(/\/+$/, '')}/${encodeURIComponent(config.callbackToken)}`;
}

/** Calling codes of the countries Airtel Money serves. */
export const AIRTEL_CALLING_CODES: Readonly<Record<string, string>> = {
  KE: '254',
  UG: '256',
  TZ: '255',
  RW: '250',
  ZM: '260',
  MW: '265',
  NG: '234',
  CD: '243',
  CG: '242',
  GA: '241',
  TD: '235',
  NE: '227',
  MG: '261',
  SC: '248',
};

/** Currencies taken with two decimals by default (the rest: whole units). */
export const TWO_DECIMAL_CURRENCIES: ReadonlySet<string> = new Set(['ZMW', 'USD', 'SCR', 'MWK', 'NGN']);
