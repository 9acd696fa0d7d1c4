/**
 * What the fake does with one request. A scenario comes from the control queue (per operation) or,
 * when none is queued, from the request's Amount (magic amounts, below); else `success`.
 */
export type FakeScenario =
  /** Outcome 0, callback sent once. */
  | 'success'
  /** ResultCode 1032 (STK: cancelled by the customer). */
  | 'cancelled'
  /** ResultCode 1037 (STK: DS timeout, phone unreachable). */
  | 'unreachable'
  /** ResultCode 1019 (STK: transaction expired). */
  | 'expired'
  /** ResultCode 1 (insufficient balance). */
  | 'insufficient'
  /** ResultCode 2001 (STK: wrong PIN; B2C: initiator information invalid). */
  | 'initiator-invalid'
  /** ResultCode "SFC_IC0003" as a string (the operator does not exist). */
  | 'string-code'
  /** ResultCode 2 (declined by a limit rule: below the minimum; B2C's minimum is KES 10). */
  | 'below-minimum'
  /** The outcome is reached (the query tells it) but no callback is ever sent. */
  | 'no-callback'
  /** The callback is sent twice, same body. */
  | 'duplicate-callback'
  /** The outcome is reached at once (the query tells it); the callback comes `lateCallbackMs` later. */
  | 'late-callback'
  /** The callback says 0 (paid) while the query (STK Query / Transaction Status) says 1032 / 2001. */
  | 'contradicting-callback'
  /**
   * STK only: the customer paid (the callback says 0 with the receipt, Transaction Status by that
   * receipt says Completed) but STK Query says 1032: the sources disagree.
   */
  | 'query-contradicts-paid'
  /** STK only: the customer never answers; the query says "being processed" for ever, no callback. */
  | 'never-answered'
  /** STK only: the customer declines at once (the query says 1032 from the start); no callback is ever sent. */
  | 'declined-no-callback'
  /** B2C only: the request-echo goes to QueueTimeOutURL and no Result follows; the payout did complete. */
  | 'queue-timeout'
  /**
   * Transaction Status only: the query succeeds (ResultCode 0) with TransactionStatus "Reversed",
   * a word Daraja does not document (what we do with a word we do not read).
   */
  | 'unread-status'
  /** HTTP 500 500.003.1001 Internal Server Error; nothing done. */
  | 'http-500'
  /** Processed, but the answer comes `slowResponseMs` later (past the client's timeout). */
  | 'slow'
  /** Processed, then the connection is destroyed without an answer. */
  | 'reset'
  /** Token requests only: the token is refused (404.001.03) from its second use on. (`http-500`, `slow`
   * and `reset` apply to token requests too.) */
  | 'expires-early';

/** Magic amounts (whole shillings, STK Push and B2C alike). Every other amount is `success`. */
export const MAGIC_AMOUNTS: Readonly<Record<number, FakeScenario>> = {
  1032: 'cancelled',
  1037: 'unreachable',
  1019: 'expired',
  1111: 'insufficient',
  2001: 'initiator-invalid',
  3003: 'string-code',
  5000: 'http-500',
  5001: 'slow',
  5002: 'reset',
  6001: 'no-callback',
  6002: 'duplicate-callback',
  6003: 'late-callback',
  6004: 'contradicting-callback',
  6005: 'never-answered',
  6006: 'queue-timeout',
  6007: 'query-contradicts-paid',
};

/** The ResultCode and ResultDesc each outcome scenario ends with (Daraja's texts). */
export const SCENARIO_RESULTS: Readonly<
  Partial<Record<FakeScenario, { code: number | string; desc: string }>>
> = {
  cancelled: { code: 1032, desc: 'Request cancelled by user' },
  'declined-no-callback': { code: 1032, desc: 'Request cancelled by user' },
  unreachable: { code: 1037, desc: 'DS timeout user cannot be reached' },
  expired: { code: 1019, desc: 'Transaction has expired' },
  insufficient: { code: 1, desc: 'The balance is insufficient for the transaction.' },
  'initiator-invalid': { code: 2001, desc: 'The initiator information is invalid.' },
  'string-code': { code: 'SFC_IC0003', desc: 'The operator does not exist.' },
  'below-minimum': {
    code: 2,
    desc: 'Declined due to limit rule: less than the minimum transaction amount.',
  },
};

export const SUCCESS_RESULT = { code: 0, desc: 'The service request is processed successfully.' } as const;
