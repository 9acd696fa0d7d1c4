#!/usr/bin/env -S npx tsx --conditions=@partner-api/source
import { writeFileSync } from 'node:fs';
import {
  IDENTIFICATION_TYPES,
  INVESTMENT_TYPES,
  LEDGER_TRANSACTION_TYPES,
  REPORT_TYPES,
  REQUEST_STATUSES,
  TRADING_STATUSES,
} from '@partner-api/contract';
import {
  type CustomerCreate,
  type CustomerUpdate,
  type IdentificationType,
  type InvestmentTypeId,
  type LedgerTransactionType,
  PartnerApiError,
  PartnerClient,
  type ReportType,
  type RequestCreate,
  type RequestStatus,
  type TradingStatus,
  WaitTimeoutError,
} from '@partner-api/sdk';
import { Command, InvalidArgumentError, Option } from 'commander';
import { eventRow, listen } from './partner/events.ts';
import { customerDetails, customerRow, errorText, paymentLines, printJson } from './partner/format.ts';
import { runHandset } from './partner/handset.ts';
import {
  accountOf,
  instrumentId,
  instrumentRow,
  portfolioLines,
  reportRow,
  requestDetails,
  requestRow,
  transactionRow,
} from './partner/investments.ts';
import { waitForPayment } from './partner/payments.ts';
import {
  clientForProfile,
  type LoginFlags,
  profilePath,
  resolveLogin,
  writeProfile,
} from './partner/profile.ts';

const program = new Command('partner')
  .description('Partner CLI of the partner API: sign in once, then customers, payments and a USSD handset')
  .option('--json', 'print the API answers as JSON')
  .option(
    '--profile <file>',
    'profile file (default $PARTNER_PROFILE or ~/.config/partner-api/profile.json)',
  );

type Globals = { json?: boolean; profile?: string };
const globals = (command: Command) => command.optsWithGlobals<Globals>();
const out = process.stdout;

/** Runs a command: API errors become one readable message on stderr (and the error body with --json), exit code 1. */
function action<A extends unknown[]>(work: (globals: Globals, ...args: A) => Promise<number | undefined>) {
  return async (...args: A) => {
    const command = args[args.length - 1] as Command;
    const opts = globals(command);
    try {
      process.exitCode = (await work(opts, ...args)) ?? 0;
    } catch (error) {
      if (error instanceof PartnerApiError) {
        if (opts.json && error.body && typeof error.body === 'object') printJson(out, error.body);
        process.stderr.write(`partner: ${errorText(error)}\n`);
      } else {
        process.stderr.write(`partner: ${(error as Error).message}\n`);
      }
      process.exitCode = 1;
    }
  };
}

const client = (opts: Globals) => clientForProfile(profilePath(opts.profile));

// ---- value parsers ----

function integer(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a whole number');
  return Number(value);
}
function bool(value: string): boolean {
  if (value !== 'true' && value !== 'false') throw new InvalidArgumentError("expected 'true' or 'false'");
  return value === 'true';
}
/** `null` clears a nullable field on update (converted here: commander turns a parsed null into ''). */
const nullable = (value: string | undefined): string | null | undefined => (value === 'null' ? null : value);
const idTypeOption = () =>
  new Option('--id-type <type>', 'identification type').choices([...IDENTIFICATION_TYPES, 'null']);

// ---- login ----

program
  .command('login')
  .description('check a credential with GET /oauth/me and save it as the profile (mode 0600)')
  .option('--base-url <url>', 'e.g. http://localhost:8080 (env PARTNER_BASE_URL)')
  .option('--client-id <id>', 'env PARTNER_CLIENT_ID')
  .option('--client-secret <secret>', 'env PARTNER_CLIENT_SECRET')
  .option(
    '--private-key <file>',
    'Ed25519 private key, PKCS#8 PEM (env PARTNER_PRIVATE_KEY: a file or the PEM)',
  )
  .option('--key-id <keyId>', 'the keyid the public key was registered under (env PARTNER_KEY_ID)')
  .option(
    '--sandbox-file <file>',
    'take missing fields from this sandbox credentials file (env PARTNER_SANDBOX_FILE)',
  )
  .addHelpText('after', '\nWith no flags, ./data/sandbox-credentials.json (written by `npm start`) is used.')
  .action(
    action(async (opts, flags: LoginFlags) => {
      const credential = resolveLogin(flags);
      const file = profilePath(opts.profile);
      let cachedToken: { token: string; tokenId?: string; expiresAt: number } | undefined;
      const fresh = new PartnerClient({
        ...credential,
        tokenStore: {
          load: () => undefined,
          save: (token) => {
            cachedToken = token;
          },
        },
      });
      const me = await fresh.oauth.me();
      const organization = { id: me.data.id, name: me.data.name };
      writeProfile(file, { ...credential, organization, ...(cachedToken ? { token: cachedToken } : {}) });
      if (opts.json) printJson(out, me);
      else
        out.write(
          `Logged in to ${credential.baseUrl} as ${organization.name} (${credential.clientId})\nProfile: ${file}\n`,
        );
      return 0;
    }),
  );

program
  .command('whoami')
  .description('the organization of the saved profile (GET /oauth/me)')
  .action(
    action(async (opts) => {
      const me = await client(opts).oauth.me();
      if (opts.json) printJson(out, me);
      else
        out.write(
          `${me.data.name} (${me.data.id})\n${me.data.credentials.map((c) => `  ${c.clientId}  ${c.name}`).join('\n')}\n`,
        );
      return 0;
    }),
  );

// ---- customers ----

const customers = program.command('customers').description('customers of your organization');

customers
  .command('list')
  .option('--page <n>', 'page, from 1', integer)
  .option('--limit <n>', 'page size, at most 100', integer)
  .option('--search <text>', 'matches names, identification number or reference id')
  .option('--active <bool>', 'true or false', bool)
  .addOption(new Option('--id-type <type>', 'identification type').choices(IDENTIFICATION_TYPES))
  .option('--msisdn <digits>', 'exact phone number')
  .action(
    action(
      async (
        opts,
        o: {
          page?: number;
          limit?: number;
          search?: string;
          active?: boolean;
          idType?: IdentificationType;
          msisdn?: string;
        },
      ) => {
        const list = await client(opts).customers.list({
          page: o.page,
          limit: o.limit,
          search: o.search,
          isActive: o.active,
          identificationType: o.idType,
          msisdn: o.msisdn,
        });
        if (opts.json) printJson(out, list);
        else {
          for (const c of list.data) out.write(`${customerRow(c)}\n`);
          const { page, totalPages, total } = list.pagination;
          out.write(`page ${page}/${totalPages}, ${total} customer${total === 1 ? '' : 's'}\n`);
        }
        return 0;
      },
    ),
  );

customers
  .command('get')
  .argument('<id>')
  .action(
    action(async (opts, id: string) => {
      const customer = await client(opts).customers.get(id);
      if (opts.json) printJson(out, customer);
      else out.write(customerDetails(customer.data));
      return 0;
    }),
  );

type CustomerFlags = {
  firstName?: string;
  lastName?: string;
  msisdn?: string;
  idType?: string;
  idNumber?: string;
  referenceId?: string;
  active?: boolean;
  idempotencyKey?: string;
};

function customerBody(o: CustomerFlags): CustomerUpdate {
  const body: CustomerUpdate = {};
  if (o.firstName !== undefined) body.firstName = o.firstName;
  if (o.lastName !== undefined) body.lastName = o.lastName;
  if (o.msisdn !== undefined) body.msisdn = nullable(o.msisdn);
  if (o.idType !== undefined) body.identificationType = nullable(o.idType) as IdentificationType | null;
  if (o.idNumber !== undefined) body.identificationNumber = nullable(o.idNumber);
  if (o.referenceId !== undefined) body.referenceId = nullable(o.referenceId);
  if (o.active !== undefined) body.isActive = o.active;
  return body;
}

const withCustomerFields = (command: Command, create: boolean) =>
  command
    .option('--msisdn <digits>', `7 to 15 digits${create ? '' : " ('null' clears)"}`)
    .addOption(idTypeOption())
    .option('--id-number <value>', 'identification number')
    .option('--reference-id <value>', 'your own reference')
    .option('--active <bool>', 'true or false', bool)
    .option('--idempotency-key <uuid>', 'reuse a key to make a retry safe (default: a new one)');

withCustomerFields(
  customers.command('create').requiredOption('--first-name <name>').requiredOption('--last-name <name>'),
  true,
).action(
  action(async (opts, o: CustomerFlags) => {
    const body = customerBody(o) as CustomerCreate;
    const created = await client(opts).customers.create(body, { idempotencyKey: o.idempotencyKey });
    if (opts.json) printJson(out, created);
    else out.write(`${created.message}\n${customerDetails(created.data)}`);
    return 0;
  }),
);

withCustomerFields(
  customers.command('update').argument('<id>').option('--first-name <name>').option('--last-name <name>'),
  false,
).action(
  action(async (opts, id: string, o: CustomerFlags) => {
    const updated = await client(opts).customers.update(id, customerBody(o), {
      idempotencyKey: o.idempotencyKey,
    });
    if (opts.json) printJson(out, updated);
    else out.write(`${updated.message}\n${customerDetails(updated.data)}`);
    return 0;
  }),
);

// ---- payments ----

const payments = program.command('payments').description('mobile-money payments of your orders');

payments
  .command('status')
  .description("an order's payment and payout")
  .argument('<orderId>', 'the order id: the Ref on the USSD confirmation')
  .option('--wait', 'poll with backoff until every transaction is final')
  .option('--timeout <seconds>', 'give up waiting after this long', integer, 120)
  .action(
    action(async (opts, orderId: string, o: { wait?: boolean; timeout: number }) => {
      const partner = client(opts);
      if (!o.wait) {
        const status = await partner.paymentStatus.get(orderId);
        if (opts.json) printJson(out, status);
        else out.write(`${paymentLines(status.data)}\n`);
        return 0;
      }
      try {
        await waitForPayment(partner, orderId, {
          out,
          json: Boolean(opts.json),
          timeoutMs: o.timeout * 1000,
        });
        return 0;
      } catch (error) {
        if (!(error instanceof WaitTimeoutError)) throw error;
        if (opts.json) printJson(out, error.lastStatus);
        else out.write(`${paymentLines(error.lastStatus.data)}\n`);
        process.stderr.write(`partner: ${error.message}\n`);
        return 2;
      }
    }),
  );

// ---- investments (preview: a server with INVESTMENTS_PREVIEW=true) ----

const PREVIEW = ' (investments preview)';
type Page<T> = { data: T[]; pagination: { page: number; totalPages: number; total: number } };
/** A page: the API's answer with --json, else one row per item and `page 1/3, 25 orders`. */
function printPage<T>(opts: Globals, list: Page<T>, row: (item: T) => string, noun: string): number {
  if (opts.json) printJson(out, list);
  else {
    for (const item of list.data) out.write(`${row(item)}\n`);
    const { page, totalPages, total } = list.pagination;
    out.write(`page ${page}/${totalPages}, ${total} ${noun}${total === 1 ? '' : 's'}\n`);
  }
  return 0;
}
/** The flags of the orders and transactions lists. */
type ListFlags = { customer?: string; from?: string; to?: string; page?: number; limit?: number };
const paging = (command: Command) =>
  command
    .option('--page <n>', 'page, from 1', integer)
    .option('--limit <n>', 'page size, at most 100', integer);

paging(
  program
    .command('instruments')
    .description(`the instruments you can order, with their latest price${PREVIEW}`)
    .option('--search <text>', 'part of the symbol or the name')
    .addOption(new Option('--type <type>', 'investment type').choices(INVESTMENT_TYPES))
    .addOption(new Option('--status <status>', 'trading status').choices(TRADING_STATUSES)),
).action(
  action(
    async (
      opts,
      o: { search?: string; type?: InvestmentTypeId; status?: TradingStatus; page?: number; limit?: number },
    ) => {
      const list = await client(opts).instruments.list({
        search: o.search,
        investmentType: o.type,
        tradingStatus: o.status,
        page: o.page,
        limit: o.limit,
      });
      return printPage(opts, list, instrumentRow, 'instrument');
    },
  ),
);

const orders = program.command('orders').description(`buy and sell orders (requests)${PREVIEW}`);

orders
  .command('create')
  .description("a buy by amount (the customer's mobile-money prompt follows) or a sell by units")
  .requiredOption('--customer <id>', 'customer id')
  .requiredOption('--instrument <idOrSymbol>', 'instrument id or symbol')
  .addOption(new Option('--buy <amount>', 'whole amount to pay, e.g. 1000').conflicts('sell'))
  .addOption(new Option('--sell <units>', 'whole units to sell').conflicts('buy'))
  .option('--idempotency-key <uuid>', 'reuse a key to make a retry safe (default: a new one)')
  .action(
    action(
      async (
        opts,
        o: { customer: string; instrument: string; buy?: string; sell?: string; idempotencyKey?: string },
      ) => {
        if ((o.buy === undefined) === (o.sell === undefined))
          throw new Error('give either --buy <amount> or --sell <units>');
        const partner = client(opts);
        const base = { customerId: o.customer, instrumentId: await instrumentId(partner, o.instrument) };
        const body: RequestCreate =
          o.buy !== undefined
            ? { ...base, side: 'BUY', amount: o.buy }
            : { ...base, side: 'SELL', units: o.sell! };
        const created = await partner.requests.create(body, { idempotencyKey: o.idempotencyKey });
        if (opts.json) printJson(out, created);
        else out.write(`${created.message}\n${requestDetails(created.data)}`);
        return 0;
      },
    ),
  );

paging(
  orders
    .command('list')
    .description('newest first')
    .option('--customer <id>', 'customer id')
    .option('--instrument <idOrSymbol>', 'instrument id or symbol')
    .addOption(new Option('--status <status>').choices(REQUEST_STATUSES))
    .option('--from <date>', 'created on or after this UTC day (YYYY-MM-DD)')
    .option('--to <date>', 'created on or before this UTC day (YYYY-MM-DD)'),
).action(
  action(async (opts, o: ListFlags & { instrument?: string; status?: RequestStatus }) => {
    const partner = client(opts);
    const list = await partner.requests.list({
      customerId: o.customer,
      instrumentId: o.instrument === undefined ? undefined : await instrumentId(partner, o.instrument),
      status: o.status,
      createdFrom: o.from,
      createdTo: o.to,
      page: o.page,
      limit: o.limit,
    });
    return printPage(opts, list, requestRow, 'order');
  }),
);

orders
  .command('get')
  .argument('<id>', 'the order (request) id: the Ref on the USSD confirmation')
  .action(
    action(async (opts, id: string) => {
      const request = await client(opts).requests.get(id);
      if (opts.json) printJson(out, request);
      else out.write(requestDetails(request.data));
      return 0;
    }),
  );

orders
  .command('cancel')
  .description('a PENDING_PAYMENT or PAID order (a paid one is refunded)')
  .argument('<id>')
  .option('--idempotency-key <uuid>', 'reuse a key to make a retry safe (default: a new one)')
  .action(
    action(async (opts, id: string, o: { idempotencyKey?: string }) => {
      const cancelled = await client(opts).requests.cancel(id, { idempotencyKey: o.idempotencyKey });
      if (opts.json) printJson(out, cancelled);
      else out.write(`${cancelled.message}\n${requestDetails(cancelled.data)}`);
      return 0;
    }),
  );

program
  .command('portfolio')
  .description(`a customer's portfolio; opens their investment account if they have none${PREVIEW}`)
  .argument('<customerId>')
  .option('--as-of <date>', 'valued at the end of this day (YYYY-MM-DD, Africa/Nairobi)')
  .action(
    action(async (opts, customerId: string, o: { asOf?: string }) => {
      const partner = client(opts);
      const accountId = await accountOf(partner, customerId);
      const portfolio = await partner.accounts.portfolio(accountId, { asOf: o.asOf });
      if (opts.json) printJson(out, portfolio);
      else out.write(portfolioLines(portfolio.data));
      return 0;
    }),
  );

paging(
  program
    .command('transactions')
    .description(`money and unit movements of your customers, newest first${PREVIEW}`)
    .option('--customer <id>', 'customer id')
    .option('--order <id>', 'an order (request) id')
    .addOption(new Option('--type <type>').choices(LEDGER_TRANSACTION_TYPES))
    .option('--from <date>', 'on or after this day (YYYY-MM-DD, EAT)')
    .option('--to <date>', 'on or before this day (YYYY-MM-DD, EAT)'),
).action(
  action(async (opts, o: ListFlags & { order?: string; type?: LedgerTransactionType }) => {
    const list = await client(opts).transactions.list({
      customerId: o.customer,
      requestId: o.order,
      type: o.type,
      from: o.from,
      to: o.to,
      page: o.page,
      limit: o.limit,
    });
    return printPage(opts, list, transactionRow, 'transaction');
  }),
);

const reports = program
  .command('reports')
  .description(`trade confirmations and monthly statements of your customers${PREVIEW}`);

paging(
  reports
    .command('list')
    .description('newest first')
    .option('--customer <id>', 'customer id')
    .addOption(new Option('--type <type>').choices(REPORT_TYPES)),
).action(
  action(async (opts, o: { customer?: string; type?: ReportType; page?: number; limit?: number }) => {
    const list = await client(opts).reports.list({
      customerId: o.customer,
      type: o.type,
      page: o.page,
      limit: o.limit,
    });
    return printPage(opts, list, reportRow, 'report');
  }),
);

reports
  .command('get')
  .description('the report as JSON, or saved as a PDF with --pdf')
  .argument('<id>')
  .option('--pdf <file>', 'write the report as a PDF to this file')
  .action(
    action(async (opts, id: string, o: { pdf?: string }) => {
      const partner = client(opts);
      if (o.pdf) {
        const bytes = await partner.reports.getPdf(id);
        writeFileSync(o.pdf, bytes);
        out.write(`${o.pdf}: ${bytes.length} bytes\n`);
        return 0;
      }
      printJson(out, await partner.reports.get(id));
      return 0;
    }),
  );

// ---- USSD handset ----

program
  .command('ussd')
  .description(
    'an interactive USSD handset: opens a session for the customer, then reads one choice per line',
  )
  .argument('<customerId>')
  .addHelpText(
    'after',
    '\nType the key of an option (or a search term, or an amount) and Enter; Ctrl-D hangs up.',
  )
  .action(
    action(async (opts, customerId: string) =>
      runHandset(client(opts), customerId, {
        input: process.stdin,
        output: process.stdout,
        json: Boolean(opts.json),
      }),
    ),
  );

// ---- webhooks ----

program
  .command('webhook-key')
  .description('the public key outbound webhooks are signed with (GET /webhooks/key)')
  .action(
    action(async (opts) => {
      const key = await client(opts).webhooks.key();
      if (opts.json) printJson(out, key);
      else out.write(`keyId      ${key.keyId}\nalgorithm  ${key.algorithm}\n${key.publicKey.trimEnd()}\n`);
      return 0;
    }),
  );

// ---- webhook events (servers with WEBHOOKS_PREVIEW=true) ----

const events = program
  .command('events')
  .description('webhook events of your organization, last 30 days (GET /webhooks/events)');

events
  .command('list')
  .option('--failed', 'only events whose latest delivery failed')
  .option('--page <n>', 'page, from 1', integer)
  .option('--limit <n>', 'page size', integer)
  .action(
    action(async (opts, o: { failed?: boolean; page?: number; limit?: number }) => {
      const list = await client(opts).webhooks.events.list({
        page: o.page,
        limit: o.limit,
        status: o.failed ? 'FAILED' : undefined,
      });
      if (opts.json) printJson(out, list);
      else {
        for (const e of list.data) out.write(`${eventRow(e)}\n`);
        const { page, totalPages, total } = list.pagination;
        out.write(`page ${page}/${totalPages}, ${total} event${total === 1 ? '' : 's'}\n`);
      }
      return 0;
    }),
  );

events
  .command('resend')
  .description('deliver one event again, with the same eventId')
  .argument('<eventId>')
  .option('--idempotency-key <uuid>', 'reuse a key to make a retry safe (default: a new one)')
  .action(
    action(async (opts, eventId: string, o: { idempotencyKey?: string }) => {
      const resent = await client(opts).webhooks.events.resend(eventId, { idempotencyKey: o.idempotencyKey });
      if (opts.json) printJson(out, resent);
      else out.write(`Resending ${resent.data.eventId} (delivery ${resent.data.deliveryId})\n`);
      return 0;
    }),
  );

program
  .command('listen')
  .description(
    "forward your organization's events, signed by the service, to a local receiver (no tunnel needed)",
  )
  .requiredOption('--forward-to <url>', 'e.g. http://localhost:3000/hooks (a local URL)')
  .addHelpText('after', "\nOne line per event: event, eventId, your receiver's HTTP status. Ctrl-C stops.")
  .action(
    action(async (opts, o: { forwardTo: string }) => {
      const stop = new AbortController();
      process.once('SIGINT', () => stop.abort());
      process.once('SIGTERM', () => stop.abort());
      return listen(client(opts), o.forwardTo, {
        out,
        err: process.stderr,
        json: Boolean(opts.json),
        signal: stop.signal,
      });
    }),
  );

await program.parseAsync(process.argv);
// A closed handset leaves stdin open in some terminals; nothing else is pending by now.
process.stdin.unref?.();
