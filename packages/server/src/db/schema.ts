import { sql } from 'drizzle-orm';
import {
  boolean,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

const timestamps = {
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
};

export const organizations = pgTable('organizations', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  description: text('description'),
  website: text('website'),
  email: text('email'),
  phone: text('phone'),
  address: text('address'),
  isActive: boolean('is_active').notNull().default(true),
  /** The default language of its customers' screens and SMS (src/i18n, docs/languages.md). */
  language: text('language').notNull().default('en'),
  /** Investor SMS (docs/sms.md): on by default; the operator turns them off when the partner sends its own. */
  smsEnabled: boolean('sms_enabled').notNull().default(true),
  ...timestamps,
});

export const credentials = pgTable(
  'credentials',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id),
    name: text('name').notNull(),
    clientId: text('client_id').notNull(),
    /** scrypt hash of the client secret; the secret itself is never stored. */
    secretHash: text('secret_hash').notNull(),
    keyId: text('key_id'),
    /** SPKI PEM of the partner's request-signing key. */
    publicKey: text('public_key'),
    trustedIps: text('trusted_ips').array().notNull().default(sql`'{}'::text[]`),
    isActive: boolean('is_active').notNull().default(true),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, mode: 'date' }),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('credentials_client_id_key').on(t.clientId),
    index('credentials_org_idx').on(t.organizationId),
  ],
);

/** Revoked token ids; kept until the token would have expired anyway. */
export const revokedTokens = pgTable('revoked_tokens', {
  jti: text('jti').primaryKey(),
  expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});

/** One row per (credential, key): the in-progress lock and, once done, the stored response. */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    credentialId: text('credential_id').notNull(),
    key: text('key').notNull(),
    fingerprint: text('fingerprint').notNull(),
    lockedUntil: timestamp('locked_until', { withTimezone: true, mode: 'date' }),
    responseStatus: integer('response_status'),
    responseBody: text('response_body'),
    responseHeaders: jsonb('response_headers').$type<Record<string, string>>(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.credentialId, t.key] }), index('idempotency_expires_idx').on(t.expiresAt)],
);

export const customers = pgTable(
  'customers',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id),
    firstName: text('first_name').notNull(),
    lastName: text('last_name').notNull(),
    msisdn: text('msisdn'),
    isActive: boolean('is_active').notNull().default(true),
    identificationNumber: text('identification_number'),
    identificationType: text('identification_type'),
    referenceId: text('reference_id'),
    /** The customer's own language (docs/languages.md); null: the organization's. */
    language: text('language'),
    ...timestamps,
  },
  (t) => [
    index('customers_org_created_idx').on(t.organizationId, t.createdAt.desc(), t.id.desc()),
    index('customers_org_msisdn_idx').on(t.organizationId, t.msisdn),
  ],
);

/**
 * The instruments catalog (the table keeps its first name, `stocks`): seeded in sandbox, imported by
 * the operator (upsert by symbol). `price` is the latest applied price of `prices`, kept here for the
 * screens; `investment_type` is free text checked by the code (`STOCK` today), so a new type such as
 * `MONEY_MARKET_FUND` needs no migration.
 */
export const stocks = pgTable(
  'stocks',
  {
    id: text('id').primaryKey(),
    symbol: text('symbol').notNull(),
    name: text('name').notNull(),
    price: numeric('price', { precision: 18, scale: 4 }).notNull(),
    currency: text('currency').notNull().default('KES'),
    isActive: boolean('is_active').notNull().default(true),
    investmentType: text('investment_type').notNull().default('STOCK'),
    isin: text('isin'),
    /** ISO 10383 MIC of the market it trades on: XNAI, the Nairobi Securities Exchange. */
    market: text('market').notNull().default('XNAI'),
    minOrderAmount: numeric('min_order_amount', { precision: 18, scale: 2 }),
    fractional: boolean('fractional').notNull().default(true),
    /** When `price` was true (the as-of time of the price row it was taken from). */
    priceAsOf: timestamp('price_as_of', { withTimezone: true, mode: 'date' }),
    ...timestamps,
  },
  (t) => [uniqueIndex('stocks_symbol_key').on(t.symbol)],
);

/**
 * Every price an instrument had, append-only: its value, as-of time and source. APPLIED prices are
 * the series; a feed price beyond the daily band is HELD until the operator confirms (APPLIED) or
 * rejects it (REJECTED).
 */
export const prices = pgTable(
  'prices',
  {
    id: text('id').primaryKey(),
    stockId: text('stock_id')
      .notNull()
      .references(() => stocks.id),
    price: numeric('price', { precision: 18, scale: 4 }).notNull(),
    asOf: timestamp('as_of', { withTimezone: true, mode: 'date' }).notNull(),
    source: text('source').$type<'FEED' | 'IMPORT' | 'EDIT'>().notNull(),
    status: text('status').$type<'APPLIED' | 'HELD' | 'REJECTED'>().notNull(),
    /** The previous close the band was measured from, when it was. */
    reference: numeric('reference', { precision: 18, scale: 4 }),
    decidedAt: timestamp('decided_at', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    index('prices_stock_as_of_idx').on(t.stockId, t.asOf.desc()),
    index('prices_held_idx').on(t.status).where(sql`status = 'HELD'`),
  ],
);

/** Days a market does not trade besides its weekends, set by the operator. */
export const marketHolidays = pgTable(
  'market_holidays',
  {
    market: text('market').notNull(),
    /** YYYY-MM-DD in the market's time zone. */
    date: text('date').notNull(),
    name: text('name').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.market, t.date] })],
);

export const holdings = pgTable(
  'holdings',
  {
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id),
    customerId: text('customer_id')
      .notNull()
      .references(() => customers.id),
    stockId: text('stock_id')
      .notNull()
      .references(() => stocks.id),
    units: numeric('units', { precision: 20, scale: 4 }).notNull().default('0'),
    /**
     * Of `units`, those bought by executions not yet SETTLED: not available to sell (a T+3 market's
     * sell reads the available figure, units − pending; docs/market.md, "Positions").
     */
    pendingUnits: numeric('pending_units', { precision: 20, scale: 4 }).notNull().default('0'),
    ...timestamps,
  },
  (t) => [primaryKey({ columns: [t.customerId, t.stockId] })],
);

/** BUY: PENDING_PAYMENT → PAID → EXECUTED, or FAILED / CANCELLED. SELL: EXECUTED at once, proceeds paid out. */
export const orders = pgTable(
  'orders',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id),
    customerId: text('customer_id')
      .notNull()
      .references(() => customers.id),
    stockId: text('stock_id')
      .notNull()
      .references(() => stocks.id),
    side: text('side').$type<'BUY' | 'SELL'>().notNull(),
    status: text('status')
      .$type<'PENDING_PAYMENT' | 'PAID' | 'EXECUTED' | 'FAILED' | 'CANCELLED'>()
      .notNull(),
    /** BUY: the amount paid in; SELL: the proceeds paid out. */
    amount: numeric('amount', { precision: 18, scale: 2 }).notNull(),
    currency: text('currency').notNull().default('KES'),
    quantity: numeric('quantity', { precision: 20, scale: 4 }),
    price: numeric('price', { precision: 18, scale: 4 }),
    ...timestamps,
  },
  (t) => [
    index('orders_org_customer_idx').on(t.organizationId, t.customerId, t.createdAt.desc()),
    // GET /v1/requests across an organization, newest first (docs/investments.md).
    index('orders_org_created_idx').on(
      t.organizationId,
      t.createdAt.desc().nullsFirst(),
      t.id.desc().nullsFirst(),
    ),
    // The waiting buys each instance sweeps every 30 s (orders/life.ts, executeWaitingBuys): few rows.
    index('orders_paid_idx').on(t.updatedAt, t.id).where(sql`status = 'PAID'`),
  ],
);

/**
 * What was executed for an order: units, the price and that price's as-of time, when, and the
 * settlement date (T+N trading days of the instrument's market). FILLED, then SETTLED on that date.
 */
export const executions = pgTable(
  'executions',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id),
    orderId: text('order_id')
      .notNull()
      .references(() => orders.id),
    stockId: text('stock_id')
      .notNull()
      .references(() => stocks.id),
    side: text('side').$type<'BUY' | 'SELL'>().notNull(),
    units: numeric('units', { precision: 20, scale: 4 }).notNull(),
    price: numeric('price', { precision: 18, scale: 4 }).notNull(),
    priceAsOf: timestamp('price_as_of', { withTimezone: true, mode: 'date' }),
    executedAt: timestamp('executed_at', { withTimezone: true, mode: 'date' }).notNull(),
    /** YYYY-MM-DD in the market's time zone. */
    settlementDate: text('settlement_date').notNull(),
    status: text('status').$type<'FILLED' | 'SETTLED'>().notNull(),
    settledAt: timestamp('settled_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    uniqueIndex('executions_order_key').on(t.orderId),
    index('executions_filled_idx').on(t.settlementDate).where(sql`status = 'FILLED'`),
  ],
);

/**
 * The whole shares the platform's broker holds per instrument in its pooled account, as the operator
 * records them (from the broker's daily statement), by the date they are true at.
 */
export const pooledPositions = pgTable(
  'pooled_positions',
  {
    stockId: text('stock_id')
      .notNull()
      .references(() => stocks.id),
    /** YYYY-MM-DD in the market's time zone. */
    date: text('date').notNull(),
    units: numeric('units', { precision: 20, scale: 4 }).notNull(),
    recordedAt: timestamp('recorded_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.stockId, t.date] })],
);

/**
 * The units ledger: every movement of a customer's units, append-only (a correction is a reversing
 * entry, never an edit). A holding equals the sum of its entries (`partner-api ledger check`).
 */
export const ledgerEntries = pgTable(
  'ledger_entries',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id),
    customerId: text('customer_id')
      .notNull()
      .references(() => customers.id),
    stockId: text('stock_id')
      .notNull()
      .references(() => stocks.id),
    orderId: text('order_id').references(() => orders.id),
    /** BUY (units in), SELL (units out), OPENING (units held before the ledger began), REVERSAL. */
    kind: text('kind').$type<'BUY' | 'SELL' | 'OPENING' | 'REVERSAL'>().notNull(),
    /** Signed: positive in, negative out. */
    units: numeric('units', { precision: 20, scale: 4 }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    index('ledger_entries_holding_idx').on(t.customerId, t.stockId),
    // GET /v1/transactions across an organization, newest first (docs/investments.md).
    index('ledger_entries_org_created_idx').on(
      t.organizationId,
      t.createdAt.desc().nullsFirst(),
      t.id.desc().nullsFirst(),
    ),
  ],
);

/** Mobile-money movements: INCOMING = C2B collection, OUTGOING = B2C disbursement (proceeds or refund). */
export const transactions = pgTable(
  'transactions',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id),
    orderId: text('order_id')
      .notNull()
      .references(() => orders.id),
    type: text('type').$type<'INCOMING' | 'OUTGOING'>().notNull(),
    amount: numeric('amount', { precision: 18, scale: 2 }).notNull(),
    currency: text('currency').notNull().default('KES'),
    status: text('status').$type<'PENDING' | 'SUCCESS' | 'FAILED' | 'CANCELLED'>().notNull(),
    provider: text('provider').$type<'MPESA' | 'AIRTEL_MONEY' | 'MTN_MOMO'>().notNull(),
    msisdn: text('msisdn').notNull(),
    providerReference: text('provider_reference'),
    failureReason: text('failure_reason'),
    settledAt: timestamp('settled_at', { withTimezone: true, mode: 'date' }),
    ...timestamps,
  },
  (t) => [
    index('transactions_order_idx').on(t.orderId, t.type, t.createdAt.desc()),
    // GET /v1/transactions across an organization, newest first (docs/investments.md).
    index('transactions_org_created_idx').on(
      t.organizationId,
      t.createdAt.desc().nullsFirst(),
      t.id.desc().nullsFirst(),
    ),
  ],
);

export const ussdSessions = pgTable(
  'ussd_sessions',
  {
    /** `ussd_` followed by hex (spec). */
    id: text('id').primaryKey(),
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id),
    customerId: text('customer_id')
      .notNull()
      .references(() => customers.id),
    state: text('state').notNull(),
    context: jsonb('context').$type<Record<string, unknown>>().notNull(),
    isActive: boolean('is_active').notNull().default(true),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    ...timestamps,
  },
  (t) => [index('ussd_sessions_customer_idx').on(t.customerId)],
);

/**
 * One durable ask to a mobile-money provider per transaction (docs/payments.md, Pipeline): inserted
 * QUEUED with its transaction, then claimed by a worker. `id` is ours and stable across retries (the
 * provider's idempotency reference where it takes one).
 */
export const providerRequests = pgTable(
  'provider_requests',
  {
    id: text('id').primaryKey(),
    transactionId: text('transaction_id')
      .notNull()
      .references(() => transactions.id),
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id),
    adapter: text('adapter').notNull(),
    operation: text('operation').$type<'COLLECT' | 'DISBURSE'>().notNull(),
    state: text('state')
      .$type<'QUEUED' | 'SENDING' | 'AWAITING' | 'UNCERTAIN' | 'OPERATOR' | 'DONE'>()
      .notNull(),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    lockedUntil: timestamp('locked_until', { withTimezone: true, mode: 'date' }),
    providerIds: jsonb('provider_ids').$type<Record<string, string>>().notNull().default({}),
    /** The latest callback claim the provider's own answer confirmed; never overwritten once DONE. */
    claimed: jsonb('claimed').$type<Record<string, unknown>>(),
    lastError: text('last_error'),
    /**
     * Set just before the call that could move money leaves us (after any token call), cleared when
     * the request is queued again: a SENDING request without it was never sent (a crash between the
     * claim and the call), so sending it is safe.
     */
    dispatchedAt: timestamp('dispatched_at', { withTimezone: true, mode: 'date' }),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('provider_requests_transaction_key').on(t.transactionId),
    index('provider_requests_due_idx').on(t.state, t.nextAttemptAt),
    // Callbacks find their request by the provider's ids (`provider_ids @> {"key": "value"}`).
    index('provider_requests_ids_idx').using('gin', sql`${t.providerIds} jsonb_path_ops`),
    // The console's Charts and Overview count the last hour and day of requests by time.
    index('provider_requests_created_idx').on(t.createdAt),
  ],
);

/** Every exchange with a provider about a transaction: request, callback, query, and our decision. */
export const providerExchanges = pgTable(
  'provider_exchanges',
  {
    id: text('id').primaryKey(),
    /** Null: a callback that names no request of ours (kept for the operator, recordUnmatched). */
    providerRequestId: text('provider_request_id').references(() => providerRequests.id),
    transactionId: text('transaction_id'),
    kind: text('kind').$type<'request' | 'callback' | 'query' | 'decision'>().notNull(),
    operation: text('operation').notNull(),
    at: timestamp('at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    latencyMs: integer('latency_ms'),
    httpStatus: integer('http_status'),
    providerIds: jsonb('provider_ids').$type<Record<string, string>>(),
    requestBody: jsonb('request_body'),
    responseBody: jsonb('response_body'),
    note: text('note'),
    /** A callback's source address (after TRUST_PROXY), as the route saw it. */
    sourceAddress: text('source_address'),
    /** A callback's standing: null not (yet) checked, true confirmed by the provider, false not. */
    confirmed: boolean('confirmed'),
    /** What a callback claimed (status, reason, receipt), as it came: a claim, not a fact. */
    claim: jsonb('claim').$type<Record<string, unknown>>(),
  },
  (t) => [
    index('provider_exchanges_transaction_idx').on(t.transactionId, t.at),
    // The console's Overview and Charts read the calls' latencies of the last hour and day.
    index('provider_exchanges_at_idx').on(t.at),
  ],
);

/**
 * Outbound webhooks (docs/webhooks.md), behind WEBHOOKS_PREVIEW. One webhook per
 * organization: the spec's paths carry no id.
 */
export const webhooks = pgTable(
  'webhooks',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id),
    url: text('url').notNull(),
    /** As stored by normalizeSubscriptions: the names given, WEBHOOK.CREATED always among them. */
    subscriptions: text('subscriptions').array().notNull(),
    /** The spec's spelling. */
    status: text('status').$type<'ACTIVE' | 'DEACTIVED'>().notNull(),
    /** Why delivery stopped: a 410 from the receiver, or 5 days of failure. Null while ACTIVE. */
    disabledReason: text('disabled_reason'),
    disabledAt: timestamp('disabled_at', { withTimezone: true, mode: 'date' }),
    /** First failed attempt of the current failing streak; cleared by any success. */
    failingSince: timestamp('failing_since', { withTimezone: true, mode: 'date' }),
    ...timestamps,
  },
  (t) => [uniqueIndex('webhooks_organization_key').on(t.organizationId)],
);

/**
 * The transactional outbox: one row per event, written in the transaction of the change that
 * causes it. Kept 30 days (history, resend, `partner listen`).
 */
export const webhookEvents = pgTable(
  'webhook_events',
  {
    /** The envelope's eventId (UUID). */
    id: text('id').primaryKey(),
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id),
    event: text('event').notNull(),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('webhook_events_org_idx').on(t.organizationId, t.createdAt.desc())],
);

/**
 * One delivery of an event to the organization's webhook, claimed by one worker at a time
 * (`FOR UPDATE SKIP LOCKED`). Written with the event when the webhook was subscribed; a resend adds
 * another row for the same event.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    eventId: text('event_id')
      .notNull()
      .references(() => webhookEvents.id),
    webhookId: text('webhook_id')
      .notNull()
      .references(() => webhooks.id),
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id),
    /** PENDING until a 2xx (DELIVERED) or until it is given up (FAILED: retries exhausted, or disabled). */
    state: text('state').$type<'PENDING' | 'DELIVERED' | 'FAILED'>().notNull(),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    /** Set while a worker holds it; a worker that died lets it lapse and another takes it. */
    lockedUntil: timestamp('locked_until', { withTimezone: true, mode: 'date' }),
    deliveredAt: timestamp('delivered_at', { withTimezone: true, mode: 'date' }),
    lastError: text('last_error'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    index('webhook_deliveries_due_idx').on(t.state, t.nextAttemptAt),
    index('webhook_deliveries_event_idx').on(t.eventId),
  ],
);

/** Every attempt of a delivery: when, the receiver's status, the latency, and what went wrong. */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: text('id').primaryKey(),
    deliveryId: text('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id),
    eventId: text('event_id').notNull(),
    at: timestamp('at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    httpStatus: integer('http_status'),
    latencyMs: integer('latency_ms').notNull(),
    /** Null on success; a short reason otherwise (timeout, refused address, redirect, HTTP 500...). */
    error: text('error'),
  },
  (t) => [index('webhook_attempts_event_idx').on(t.eventId, t.at)],
);

/**
 * The money ledger: append-only, one entry per transaction that moved money, signed from the
 * customer's side of the platform (+ collected from the customer, − paid out to them). An order's
 * entries sum to what the platform holds for it (docs/market.md, "The ledger").
 */
export const moneyEntries = pgTable(
  'money_entries',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id),
    customerId: text('customer_id')
      .notNull()
      .references(() => customers.id),
    orderId: text('order_id')
      .notNull()
      .references(() => orders.id),
    transactionId: text('transaction_id')
      .notNull()
      .unique()
      .references(() => transactions.id),
    /** COLLECTION (in), PAYOUT (a sell's proceeds out), REFUND (a buy's money back out), REVERSAL. */
    kind: text('kind').$type<'COLLECTION' | 'PAYOUT' | 'REFUND' | 'REVERSAL'>().notNull(),
    /** Signed: positive collected, negative paid out. */
    amount: numeric('amount', { precision: 18, scale: 2 }).notNull(),
    currency: text('currency').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('money_entries_order_idx').on(t.orderId)],
);

/**
 * A customer's investment account (docs/investments.md): one per customer, opened by
 * POST /v1/accounts or by the customer's first order. `ACTIVE` today; `CLOSED` is reserved.
 */
export const accounts = pgTable(
  'accounts',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id),
    customerId: text('customer_id')
      .notNull()
      .unique()
      .references(() => customers.id),
    status: text('status').$type<'ACTIVE' | 'CLOSED'>().notNull().default('ACTIVE'),
    ...timestamps,
  },
  (t) => [index('accounts_org_created_idx').on(t.organizationId, t.createdAt.desc(), t.id.desc())],
);

/**
 * Reports (docs/investments.md): immutable typed records (a trade confirmation, a monthly
 * statement); a correction is a new report naming the one it `replaces`.
 */
export const reports = pgTable(
  'reports',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id),
    customerId: text('customer_id')
      .notNull()
      .references(() => customers.id),
    type: text('type').notNull(),
    /** The report's content as served in JSON. */
    data: jsonb('data').notNull(),
    replaces: text('replaces'),
    /**
     * What the report is of, one original each (services/reports): a confirmation's execution id, a
     * statement's month (YYYY-MM). Null for reports written before producers existed.
     */
    subject: text('subject'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    index('reports_org_created_idx').on(t.organizationId, t.createdAt.desc(), t.id.desc()),
    // One original per subject: the instance that writes it first wins, the others write nothing.
    uniqueIndex('reports_subject_idx')
      .on(t.customerId, t.type, t.subject)
      .where(sql`replaces is null and subject is not null`),
    // A report is corrected once; a later correction replaces the correction.
    uniqueIndex('reports_replaces_idx').on(t.replaces).where(sql`replaces is not null`),
  ],
);

/**
 * The investor SMS outbox (docs/sms.md): one row per causing event (`event_key` unique: an execution,
 * a failed payment, a refund or a payout), written in the transaction of the change that causes it,
 * sent by the SMS worker through the gateway and followed to its delivery report.
 */
export const smsMessages = pgTable(
  'sms_messages',
  {
    id: text('id').primaryKey(),
    organizationId: text('organization_id')
      .notNull()
      .references(() => organizations.id),
    customerId: text('customer_id')
      .notNull()
      .references(() => customers.id),
    msisdn: text('msisdn').notNull(),
    /** TRADE_BUY, TRADE_SELL, PAYMENT_FAILED, REFUND, PAYOUT. */
    kind: text('kind').notNull(),
    /** `execution:<orderId>`, `payment-failed:<transactionId>`, …: one SMS per cause. */
    eventKey: text('event_key').notNull(),
    language: text('language').notNull(),
    text: text('text').notNull(),
    /** QUEUED, SENDING (being handed to the gateway), SENT, DELIVERED, UNDELIVERED, REFUSED, FAILED. */
    state: text('state').notNull().default('QUEUED'),
    attempts: integer('attempts').notNull().default(0),
    /**
     * Hand-overs whose answer never came (a timeout, or a worker that died while SENDING): the
     * gateway may have taken them. At 2 the SMS is not sent again (docs/sms.md, "At most twice").
     */
    unconfirmedSends: integer('unconfirmed_sends').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    /** Set while a worker holds it; a worker that died lets it lapse and another takes it. */
    lockedUntil: timestamp('locked_until', { withTimezone: true, mode: 'date' }),
    gatewayMessageId: text('gateway_message_id'),
    /** The gateway's per-recipient statusCode (101 Sent, 403 InvalidPhoneNumber, …). */
    statusCode: integer('status_code'),
    gatewayStatus: text('gateway_status'),
    cost: text('cost'),
    /** The delivery report's status (Success, Failed, Rejected, …) and failure reason. */
    deliveryStatus: text('delivery_status'),
    failureReason: text('failure_reason'),
    lastError: text('last_error'),
    sentAt: timestamp('sent_at', { withTimezone: true, mode: 'date' }),
    deliveredAt: timestamp('delivered_at', { withTimezone: true, mode: 'date' }),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('sms_messages_event_key_idx').on(t.eventKey),
    index('sms_messages_due_idx').on(t.state, t.nextAttemptAt),
    index('sms_messages_gateway_id_idx').on(t.gatewayMessageId),
    index('sms_messages_org_created_idx').on(t.organizationId, t.createdAt.desc(), t.id.desc()),
    index('sms_messages_msisdn_idx').on(t.msisdn, t.createdAt.desc()),
  ],
);

/** The console's named accounts (docs/console.md): a viewer reads, an operator also changes. */
export const operators = pgTable(
  'operators',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    /** viewer | operator. */
    role: text('role').notNull(),
    /** `scrypt$<salt b64url>$<hash b64url>` of the credential (src/services/operators/credential.ts). */
    credentialHash: text('credential_hash').notNull(),
    isActive: boolean('is_active').notNull().default(true),
    lastSignInAt: timestamp('last_sign_in_at', { withTimezone: true, mode: 'date' }),
    ...timestamps,
  },
  (t) => [uniqueIndex('operators_name_unique').on(t.name)],
);

/** Every change made through the admin API or the console; append-only (a trigger refuses the rest). */
export const auditLog = pgTable(
  'audit_log',
  {
    id: text('id').primaryKey(),
    /** `admin-token`, or `operator`. */
    actorType: text('actor_type').notNull(),
    operatorId: text('operator_id'),
    operatorName: text('operator_name'),
    method: text('method').notNull(),
    /** The route pattern (`/admin/organizations/:id`), not the URL. */
    route: text('route').notNull(),
    /** The `:id`-like parameter of the route, when it has one. */
    targetId: text('target_id'),
    /** The request body, secrets redacted; null when there was none or it was not JSON. */
    body: jsonb('body'),
    /** The changed thing as it was, read in the change's own transaction (console changes); null otherwise. */
    before: jsonb('before'),
    /** The changed thing as it became, in the same transaction. */
    after: jsonb('after'),
    status: integer('status').notNull(),
    ip: text('ip').notNull(),
    requestId: text('request_id'),
    at: timestamp('at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('audit_log_at_idx').on(t.at), index('audit_log_route_at_idx').on(t.route, t.at)],
);

/** Signed-in console sessions (docs/console.md): shared by every instance through the store. */
export const consoleSessions = pgTable(
  'console_sessions',
  {
    id: text('id').primaryKey(),
    /** sha256 (hex) of the cookie's token: the token itself is never stored. */
    tokenHash: text('token_hash').notNull(),
    operatorId: text('operator_id')
      .notNull()
      .references(() => operators.id),
    /** The synchronizer token every console form carries (CSRF). */
    csrfToken: text('csrf_token').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    /** The last request: the idle timeout counts from here. */
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [
    uniqueIndex('console_sessions_token_unique').on(t.tokenHash),
    index('console_sessions_operator_idx').on(t.operatorId),
  ],
);
