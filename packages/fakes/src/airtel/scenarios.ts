/** An Airtel transaction's status: success, failed, expired, in progress, ambiguous. */
export type FakeAirtelStatus = 'TS' | 'TF' | 'TE' | 'TIP' | 'TA';

/**
 * What the fake does with one request. A scenario comes from the control queue (per operation) or,
 * when none is queued, from the request's amount (magic amounts, below); else `success`.
 */
export type FakeAirtelScenario =
  /** TS, callback sent once. */
  | 'success'
  /** TF "Transaction declined by the user" (the customer cancelled the prompt). */
  | 'cancelled'
  /** TF "Insufficient funds"; a payout answers DP00900001007 with `success: false` at once. */
  | 'insufficient'
  /** TF "Subscriber not reachable". */
  | 'unreachable'
  /** TF "Incorrect PIN entered". */
  | 'wrong-pin'
  /** TE: the customer never answered the prompt. */
  | 'expired'
  /** HTTP 200 with `status.success: false` (DP00800001005 "Msisdn Not Found"): nothing done. */
  | 'refused-200'
  /** TIP for `tipMs` (minutes by default), then TS and the callback. */
  | 'long-tip'
  /** TA for `tipMs`, then TS. */
  | 'ambiguous-ta'
  /** The callback carries the third-party extras (`amount`, `currency`, `msisdn`); by default it has none. */
  | 'with-amount'
  /** The callback's `hash` is made with a wrong key. */
  | 'wrong-hash'
  /** The outcome is reached (the enquiry tells it) but no callback is ever sent. */
  | 'no-callback'
  /** The callback is sent twice, same body. */
  | 'duplicate-callback'
  /** The outcome is reached at once; the callback comes `lateCallbackMs` later. */
  | 'late-callback'
  /** The callback says TS while the enquiry says TF. */
  | 'contradicting-callback'
  /** HTTP 500; nothing done. */
  | 'http-500'
  /** Processed, but the answer comes `slowResponseMs` later (past the client's timeout). */
  | 'slow'
  /** Processed, then the connection is destroyed without an answer. */
  | 'reset'
  /** Token requests only: the token is refused (403 invalid_token) from its second use on. */
  | 'expires-early';

/** Magic amounts (push and payout alike). Every other amount is `success`. */
export const AIRTEL_MAGIC_AMOUNTS: Readonly<Record<number, FakeAirtelScenario>> = {
  1032: 'cancelled',
  1037: 'unreachable',
  1019: 'expired',
  1111: 'insufficient',
  2002: 'wrong-pin',
  4000: 'refused-200',
  4001: 'long-tip',
  4002: 'ambiguous-ta',
  4003: 'with-amount',
  4004: 'wrong-hash',
  5000: 'http-500',
  5001: 'slow',
  5002: 'reset',
  6001: 'no-callback',
  6002: 'duplicate-callback',
  6003: 'late-callback',
  6004: 'contradicting-callback',
};

/** The final status and message each scenario ends with (Airtel-like texts). */
export function finalOf(scenario: FakeAirtelScenario): { status: FakeAirtelStatus; message: string } {
  switch (scenario) {
    case 'cancelled':
      return { status: 'TF', message: 'Transaction declined by the user' };
    case 'insufficient':
      return { status: 'TF', message: 'Insufficient funds' };
    case 'unreachable':
      return { status: 'TF', message: 'Subscriber not reachable' };
    case 'wrong-pin':
      return { status: 'TF', message: 'Incorrect PIN entered' };
    case 'expired':
      return { status: 'TE', message: 'Transaction expired' };
    case 'contradicting-callback':
      return { status: 'TF', message: 'Transaction failed' };
    default:
      return { status: 'TS', message: 'success' };
  }
}
