/** Everything the Daraja adapter needs; config.ts fills it from environment variables (`MpesaSettings`). */
export type MpesaConfig = {
  /** `https://sandbox.safaricom.co.ke`, `https://api.safaricom.co.ke`, or the fake's URL. */
  baseUrl: string;
  consumerKey: string;
  consumerSecret: string;
  /** The STK (Lipa na M-Pesa Online) shortcode: paybill, or the till's head-office number. */
  shortcode: string;
  passkey: string;
  /** `CustomerPayBillOnline` (paybill, the default) or `CustomerBuyGoodsOnline` (till). */
  transactionType?: 'CustomerPayBillOnline' | 'CustomerBuyGoodsOnline';
  /** STK PartyB: the till number for BuyGoods; defaults to `shortcode`. */
  partyB?: string;
  /** B2C (and Transaction Status) PartyA. */
  b2cShortcode: string;
  initiatorName: string;
  /** The initiator password encrypted with Safaricom's certificate (RSA PKCS#1 v1.5, base64). */
  securityCredential: string;
  /**
   * Public base of our callback routes, without the token, e.g.
   * `https://api.example.com/v1/payments/callbacks/daraja`. Daraja reportedly rejects callback URLs
   * containing the word "mpesa" (docs/payments.md), so keep that word out of it.
   */
  callbackBaseUrl: string;
  /** The unguessable per-deployment path token. */
  callbackToken: string;
  timeouts?: {
    /** OAuth token request; default 10 s. */
    tokenMs?: number;
    /** Every other call; default 15 s. */
    requestMs?: number;
  };
  /** Refresh this long before `expires_in` runs out; default 300 s (at most half the lifetime). */
  tokenRefreshMarginSeconds?: number;
};

/** The callback routes the adapter hands to Daraja: one per kind of body, all under the token. */
export type MpesaCallbackKind = 'stk' | 'b2c-result' | 'b2c-timeout' | 'status-result' | 'status-timeout';

export function callbackUrl(config: MpesaConfig, kind: MpesaCallbackKind): string {
  return `${config.callbackBaseUrl.replace(/\/+$/, '')}/${encodeURIComponent(config.callbackToken)}/${kind}`;
}
