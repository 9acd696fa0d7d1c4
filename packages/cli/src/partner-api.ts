#!/usr/bin/env -S npx tsx
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import dotenv from 'dotenv';
import { AdminCallError, createAdminClient } from './admin-client.ts';
import { printResult } from './output.ts';
import { parseStocksCsv } from './stock-csv.ts';

dotenv.config({ quiet: true });

const program = new Command('partner-api').description('Operator CLI of the partner API server');

/** Each admin command: call the admin API, print JSON with --json, else a readable summary. */
function adminAction<A extends unknown[]>(
  work: (call: ReturnType<typeof createAdminClient>, ...args: A) => Promise<unknown>,
) {
  return async (...args: A) => {
    const command = args[args.length - 1] as Command;
    const json = Boolean(command.optsWithGlobals().json);
    try {
      printResult(await work(createAdminClient(), ...args), json);
    } catch (error) {
      const message = error instanceof AdminCallError ? JSON.stringify(error.body) : (error as Error).message;
      process.stderr.write(`partner-api: ${message}\n`);
      process.exitCode = 1;
    }
  };
}

program.option('--json', 'print machine-readable JSON');

program
  .command('serve')
  .description('run the public API and the admin API')
  .action(async () => {
    const { serve } = await import('@partner-api/server');
    await serve();
  });

program
  .command('migrate')
  .description('apply database migrations and exit')
  .action(async () => {
    const { withStores } = await import('@partner-api/server');
    // Opening the stores applies the migrations.
    const store = await withStores(async (runtime) => runtime.database.kind);
    printResult({ migrated: true, store }, Boolean(program.opts().json));
  });

program
  .command('purge')
  .description(
    'delete expired idempotency records, revocations of expired tokens, old USSD sessions and webhook events past 30 days',
  )
  .action(async () => {
    const { purgeExpired, withStores } = await import('@partner-api/server');
    const deleted = await withStores((runtime) => purgeExpired(runtime.database.db));
    printResult({ deleted }, Boolean(program.opts().json));
  });

const org = program.command('org').description('organizations');
org
  .command('create')
  .requiredOption('--name <name>')
  .option('--description <text>')
  .option('--website <url>')
  .option('--email <email>')
  .option('--phone <phone>')
  .option('--address <text>')
  .option('--language <language>', "its customers' default language: en or sw (docs/languages.md)")
  .action(
    adminAction((call, options: Record<string, string>) => call('POST', '/admin/organizations', options)),
  );
org.command('list').action(adminAction((call) => call('GET', '/admin/organizations')));
org
  .command('update')
  .argument('<organizationId>')
  .option('--name <name>')
  .option('--language <language>', "its customers' default language: en or sw (docs/languages.md)")
  .option('--active <bool>', 'true or false')
  .action(
    adminAction((call, id: string, o: { name?: string; language?: string; active?: string }) =>
      call('PATCH', `/admin/organizations/${id}`, {
        name: o.name,
        language: o.language,
        isActive: o.active === undefined ? undefined : o.active === 'true',
      }),
    ),
  );
org
  .command('sms')
  .description("turn an organization's investor SMS on or off (docs/sms.md); off: its partner sends its own")
  .argument('<organizationId>')
  .argument('<switch>', 'on or off')
  .action(
    adminAction(async (call, id: string, value: string) => {
      if (value !== 'on' && value !== 'off') throw new Error('the switch must be on or off');
      return call('PATCH', `/admin/organizations/${encodeURIComponent(id)}`, { smsEnabled: value === 'on' });
    }),
  );

const credential = program.command('credential').description('API credentials of an organization');
credential
  .command('create')
  .requiredOption('--org <organizationId>')
  .requiredOption('--name <name>')
  .option('--public-key <file>', 'Ed25519 public key (SPKI PEM or JWK file)')
  .option('--key-id <keyId>')
  .option('--trusted-ip <ip...>', 'allowlisted address or CIDR range (repeatable)')
  .option('--expires-at <date>')
  .action(
    adminAction(
      (
        call,
        o: {
          org: string;
          name: string;
          publicKey?: string;
          keyId?: string;
          trustedIp?: string[];
          expiresAt?: string;
        },
      ) =>
        call('POST', `/admin/organizations/${o.org}/credentials`, {
          name: o.name,
          publicKey: o.publicKey ? readFileSync(o.publicKey, 'utf8') : undefined,
          keyId: o.keyId,
          trustedIps: o.trustedIp,
          expiresAt: o.expiresAt,
        }),
    ),
  );
credential
  .command('list')
  .option('--org <organizationId>')
  .action(
    adminAction((call, o: { org?: string }) =>
      call('GET', `/admin/credentials${o.org ? `?organizationId=${encodeURIComponent(o.org)}` : ''}`),
    ),
  );
credential
  .command('rotate-key')
  .argument('<credentialId>')
  .requiredOption('--public-key <file>')
  .requiredOption('--key-id <keyId>')
  .action(
    adminAction((call, id: string, o: { publicKey: string; keyId: string }) =>
      call('PUT', `/admin/credentials/${id}/signing-key`, {
        publicKey: readFileSync(o.publicKey, 'utf8'),
        keyId: o.keyId,
      }),
    ),
  );
credential
  .command('update')
  .argument('<credentialId>')
  .option('--trusted-ip <ip...>')
  .option('--active <bool>', 'true or false')
  .option('--expires-at <date>')
  .action(
    adminAction((call, id: string, o: { trustedIp?: string[]; active?: string; expiresAt?: string }) =>
      call('PATCH', `/admin/credentials/${id}`, {
        trustedIps: o.trustedIp,
        isActive: o.active === undefined ? undefined : o.active === 'true',
        expiresAt: o.expiresAt,
      }),
    ),
  );

const stocks = program.command('stocks').description('the listed stocks catalog');
stocks
  .command('import')
  .description('upsert stocks by symbol from a CSV with columns symbol,name,price[,currency]')
  .argument('<file>')
  .action(
    adminAction((call, file: string) =>
      call('POST', '/admin/stocks', parseStocksCsv(readFileSync(file, 'utf8'))),
    ),
  );

const market = program
  .command('market')
  .description("a market's sessions and holidays (default the NSE, XNAI)");
const marketPath = (o: { market?: string }) => `/admin/markets/${encodeURIComponent(o.market ?? 'XNAI')}`;
market
  .command('session')
  .description('whether the market trades now, the local date and the next open')
  .option('--market <mic>', 'default XNAI')
  .action(adminAction((call, o: { market?: string }) => call('GET', `${marketPath(o)}/session`)));
const holidays = program.command('holidays').description('days a market does not trade besides weekends');
holidays
  .command('list')
  .option('--market <mic>', 'default XNAI')
  .action(
    adminAction(async (call, o: { market?: string }) => {
      const listed = await call<{ data: unknown[] }>('GET', `${marketPath(o)}/holidays`);
      return listed.data;
    }),
  );
holidays
  .command('add')
  .argument('<date>', "YYYY-MM-DD, in the market's time zone")
  .requiredOption('--name <name>', 'e.g. Jamhuri Day')
  .option('--market <mic>', 'default XNAI')
  .action(
    adminAction((call, date: string, o: { name: string; market?: string }) =>
      call('PUT', `${marketPath(o)}/holidays/${encodeURIComponent(date)}`, { name: o.name }),
    ),
  );
holidays
  .command('remove')
  .argument('<date>')
  .option('--market <mic>', 'default XNAI')
  .action(
    adminAction((call, date: string, o: { market?: string }) =>
      call('DELETE', `${marketPath(o)}/holidays/${encodeURIComponent(date)}`),
    ),
  );
const prices = program.command('prices').description('instrument prices: edits, held prices, history');
prices
  .command('set')
  .description("the operator's price of an instrument, applied at once")
  .argument('<symbol>')
  .argument('<price>')
  .option('--as-of <iso-time>', 'default now')
  .action(
    adminAction((call, symbol: string, price: string, o: { asOf?: string }) =>
      call('POST', '/admin/prices', { symbol, price, ...(o.asOf ? { asOf: o.asOf } : {}) }),
    ),
  );
prices
  .command('held')
  .description('feed prices beyond the daily band, waiting for the operator')
  .action(
    adminAction(async (call) => {
      const held = await call<{ data: unknown[] }>('GET', '/admin/prices/held');
      return held.data;
    }),
  );
for (const action of ['confirm', 'reject'] as const) {
  prices
    .command(action)
    .description(action === 'confirm' ? 'apply a held price' : 'reject a held price')
    .argument('<priceId>')
    .action(
      adminAction((call, id: string) => call('POST', `/admin/prices/${encodeURIComponent(id)}/${action}`)),
    );
}
/** A daily bar as one line: `2026-12-01  open 100.0000  high … low … close …  3 prices`. */
type DailyBar = { date: string; open: string; high: string; low: string; close: string; count: number };
const barLine = (b: DailyBar) =>
  `${b.date}  open ${b.open}  high ${b.high}  low ${b.low}  close ${b.close}  ${b.count} price${b.count === 1 ? '' : 's'}`;
prices
  .command('history')
  .description("an instrument's prices, oldest first; --daily: its open, high, low and close per day")
  .argument('<symbol>')
  .option(
    '--from <time>',
    'ISO time; with --daily, YYYY-MM-DD in the market time zone (default: the 30 days ending on --to)',
  )
  .option('--to <time>', 'ISO time, excluded; with --daily, YYYY-MM-DD, included (default today)')
  .option('--daily', 'applied prices only, one bar per market-local day')
  .action(
    adminAction(
      async (call, symbol: string, o: { from?: string; to?: string; daily?: boolean }, command: Command) => {
        const query = new URLSearchParams();
        if (o.from) query.set('from', o.from);
        if (o.to) query.set('to', o.to);
        const path = `/admin/instruments/${encodeURIComponent(symbol)}/prices${o.daily ? '/daily' : ''}`;
        const found = await call<{ data: unknown }>('GET', `${path}${query.size > 0 ? `?${query}` : ''}`);
        if (!o.daily || command.optsWithGlobals().json) return found.data;
        const daily = found.data as { from: string; to: string; timeZone: string; bars: DailyBar[] };
        return [
          `${symbol.toUpperCase()} ${daily.from} to ${daily.to} (${daily.timeZone})`,
          ...daily.bars.map(barLine),
        ];
      },
    ),
  );

const book = program
  .command('book')
  .description("a trading day's book: customers' claims per instrument against the broker's pooled position")
  .option('--date <date>', 'YYYY-MM-DD in the market time zone (default today)')
  .action(
    adminAction(async (call, o: { date?: string }) => {
      const found = await call<{ data: { lines: unknown[] } }>(
        'GET',
        `/admin/book${o.date ? `?date=${encodeURIComponent(o.date)}` : ''}`,
      );
      return found.data.lines;
    }),
  );
book
  .command('position')
  .description("record the broker's pooled position of an instrument (from its daily statement)")
  .argument('<symbol>')
  .argument('<units>', 'whole shares held in the pooled account')
  .requiredOption('--on <date>', 'YYYY-MM-DD the statement is true at')
  .action(
    adminAction((call, symbol: string, units: string, o: { on: string }) =>
      call('PUT', `/admin/book/positions/${encodeURIComponent(symbol)}/${encodeURIComponent(o.on)}`, {
        units,
      }),
    ),
  );

const ledger = program.command('ledger').description('the units ledger');
ledger
  .command('check')
  .description(
    'every holding equals its ledger entries, every executed buy has its collection and sell its payout; exits 1 on a difference',
  )
  .option('--org <organizationId>')
  .action(
    adminAction(async (call, o: { org?: string }) => {
      const checked = await call<{ data: { balanced: boolean; differences: unknown[] } }>(
        'GET',
        `/admin/ledger/check${o.org ? `?organizationId=${encodeURIComponent(o.org)}` : ''}`,
      );
      if (!checked.data.balanced) process.exitCode = 1;
      return checked.data;
    }),
  );

const orders = program.command('orders').description('orders and their payment transactions');
orders
  .command('list')
  .option('--org <organizationId>')
  .option('--limit <n>', 'newest first, at most this many (default 100)')
  .action(
    adminAction((call, o: { org?: string; limit?: string }) => {
      const query = new URLSearchParams();
      if (o.org) query.set('organizationId', o.org);
      if (o.limit) query.set('limit', o.limit);
      return call('GET', `/admin/orders${query.size > 0 ? `?${query}` : ''}`);
    }),
  );

const payments = program
  .command('payments')
  .description('the payment pipeline: provider records, stuck work, reconciliation');
payments
  .command('show')
  .description('a transaction, its provider request and every exchange (request, callback, query, decision)')
  .argument('<transactionId>')
  .action(adminAction((call, id: string) => call('GET', `/admin/transactions/${encodeURIComponent(id)}`)));
payments
  .command('stuck')
  .description('requests with the operator, uncertain ones, and any other not done after --older-than')
  .option('--older-than <seconds>', 'age of a request not done yet to list (default 300)')
  .option('--limit <n>', 'oldest first, at most this many (default 100)')
  .action(
    adminAction(async (call, o: { olderThan?: string; limit?: string }) => {
      const query = new URLSearchParams();
      if (o.olderThan) query.set('olderThanSeconds', o.olderThan);
      if (o.limit) query.set('limit', o.limit);
      const stuck = await call<{ data: unknown[] }>(
        'GET',
        `/admin/payments/stuck${query.size > 0 ? `?${query}` : ''}`,
      );
      return stuck.data;
    }),
  );
payments
  .command('reconcile')
  .description('query the provider now about one transaction, or every request not done')
  .argument('[transactionId]')
  .action(
    adminAction((call, id: string | undefined) =>
      call('POST', '/admin/payments/reconcile', id ? { transactionId: id } : {}),
    ),
  );
payments
  .command('resolve')
  .description(
    "decide a payment the pipeline left to the operator, after checking the provider's records (audited)",
  )
  .argument('<transactionId>')
  .requiredOption('--action <action>', 'paid | not-paid | retry-payout | paid-another-way')
  .requiredOption('--reason <text>', 'why: kept in the payment record')
  .option('--receipt <reference>', "the provider's receipt (paid, paid-another-way)")
  .option('--operator <name>', 'who decides (default: the admin token)')
  .action(
    adminAction(
      (call, id: string, o: { action: string; reason: string; receipt?: string; operator?: string }) =>
        call('POST', `/admin/payments/${encodeURIComponent(id)}/resolve`, {
          action: o.action,
          reason: o.reason,
          ...(o.receipt ? { receipt: o.receipt } : {}),
          ...(o.operator ? { operator: o.operator } : {}),
        }),
    ),
  );

const reports = program.command('reports').description("investors' reports (docs/investments.md, Reports)");
reports
  .command('generate')
  .description("write a past month's missing monthly statements (those already written are kept)")
  .requiredOption('--month <YYYY-MM>', 'a month that has ended, in the market time zone (EAT)')
  .action(
    adminAction((call, o: { month: string }) =>
      call('POST', '/admin/reports/statements', { month: o.month }),
    ),
  );
reports
  .command('correct')
  .description('write a correction of a report: a new report with the whole new data, naming it')
  .argument('<reportId>')
  .requiredOption('--data <file>', "a JSON file with the report's corrected data")
  .action(
    adminAction((call, id: string, o: { data: string }) =>
      call('POST', `/admin/reports/${encodeURIComponent(id)}/corrections`, {
        data: JSON.parse(readFileSync(o.data, 'utf8')),
      }),
    ),
  );

const sandbox = program.command('sandbox').description('sandbox-only operations');
sandbox
  .command('settle')
  .description('settle a PENDING payment or disbursement by hand, as the provider would')
  .argument('<transactionId>')
  .option('--status <status>', 'SUCCESS or FAILED', 'SUCCESS')
  .option('--reason <text>', 'failure reason (with --status FAILED)')
  .action(
    adminAction((call, id: string, o: { status: string; reason?: string }) =>
      call('POST', `/admin/transactions/${encodeURIComponent(id)}/settle`, {
        status: o.status.toUpperCase(),
        reason: o.reason,
      }),
    ),
  );

const sms = program.command('sms').description('investor SMS (docs/sms.md)');
sms
  .command('list')
  .description('investor SMS, newest first; refused, failed and undelivered ones are marked !')
  .option('--state <state>', 'QUEUED, SENDING, SENT, DELIVERED, UNDELIVERED, REFUSED or FAILED')
  .option('--org <organizationId>')
  .option('--customer <customerId>')
  .option('--limit <n>', 'at most this many', '100')
  .action(async (o: { state?: string; org?: string; customer?: string; limit: string }, command: Command) => {
    const query = new URLSearchParams({
      ...(o.state ? { state: o.state.toUpperCase() } : {}),
      ...(o.org ? { organizationId: o.org } : {}),
      ...(o.customer ? { customerId: o.customer } : {}),
      limit: o.limit,
    });
    await adminAction(async (call, _command: Command) => {
      const listed = await call<{ data: SmsLine[] }>('GET', `/admin/sms?${query}`);
      if (command.optsWithGlobals().json) return listed;
      return listed.data.map(smsLine).join('\n') || 'no SMS';
    })(command);
  });

type SmsLine = {
  id: string;
  state: string;
  attention: boolean;
  kind: string;
  msisdn: string;
  createdAt: string;
  statusCode: number | null;
  gatewayStatus: string | null;
  deliveryStatus: string | null;
  lastError: string | null;
};

/** One SMS as a line; what needs the operator starts with `!` (refused, failed, undelivered). */
function smsLine(s: SmsLine): string {
  const why = [s.statusCode, s.gatewayStatus, s.deliveryStatus, s.lastError]
    .filter((x) => x !== null)
    .join(' ');
  return `${s.attention ? '!' : ' '} ${s.createdAt}  ${s.state.padEnd(11)} ${s.kind.padEnd(14)} ${s.msisdn}  ${s.id}${why ? `  ${why}` : ''}`;
}

const operator = program
  .command('operator')
  .description('named operator accounts of the console (docs/console.md)');
operator
  .command('add')
  .argument('<name>')
  .requiredOption('--role <role>', 'viewer (reads) or operator (reads and changes)')
  .description('create an operator; its credential is printed this once and never again')
  .action(
    adminAction(async (call, name: string, o: { role: string }) => {
      const created = await call<{ id: string; name: string; role: string; credential: string }>(
        'POST',
        '/admin/operators',
        { name, role: o.role },
      );
      return created;
    }),
  );
operator.command('list').action(adminAction((call) => call('GET', '/admin/operators')));
operator
  .command('deactivate')
  .argument('<operatorId>')
  .description('deactivate an operator: it can no longer sign in, and its console sessions end')
  .action(
    adminAction((call, id: string) => call('POST', `/admin/operators/${encodeURIComponent(id)}/deactivate`)),
  );

program
  .command('audit')
  .description('the audit log of changes made through the admin API and the console')
  .command('list')
  .option('--actor <actor>', 'admin-token, or an operator id or name')
  .option('--route <route>', 'a route pattern, e.g. /admin/operators/:id/deactivate')
  .option('--from <date>')
  .option('--to <date>')
  .option('--limit <n>', 'at most this many', '100')
  .action(
    adminAction(
      async (call, o: { actor?: string; route?: string; from?: string; to?: string; limit: string }) => {
        const query = new URLSearchParams(
          Object.entries(o).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
        );
        return call('GET', `/admin/audit?${query}`);
      },
    ),
  );

const fakeProvider = program
  .command('fake-provider')
  .description(
    'run a local fake of an outside provider (mobile money, the price feed, SMS), to rehearse go-live (docs/payments.md, docs/market.md, docs/sms.md)',
  );
/** Prints what the server needs to talk to a fake, then serves until SIGINT or SIGTERM. */
async function serveFake(
  name: string,
  fake: { url: string; close(): Promise<void> },
  settings: Record<string, string>,
) {
  if (program.opts().json) printResult({ url: fake.url, settings }, true);
  else {
    process.stdout.write(`fake ${name} listening on ${fake.url}\n`);
    process.stdout.write(`control: GET ${fake.url}/__fake/state, POST ${fake.url}/__fake/queue\n`);
    process.stdout.write('server settings for this fake:\n');
    for (const [key, value] of Object.entries(settings)) process.stdout.write(`${key}=${value}\n`);
  }
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await fake.close();
}

const portOf = (value: string): number | undefined => {
  const port = Number(value);
  return Number.isInteger(port) && port >= 0 && port <= 65535 ? port : undefined;
};

/** --port and --scenario of a fake, checked: the port, or undefined (exit 2, one line said why). */
function portWithScenario(o: { port: string; scenario: string }, scenarios: readonly string[]) {
  const port = portOf(o.port);
  if (port !== undefined && scenarios.includes(o.scenario)) return port;
  process.stderr.write(`partner-api: --port must be 0-65535; --scenario one of ${scenarios.join(', ')}\n`);
  process.exitCode = 2;
  return undefined;
}

fakeProvider
  .command('prices')
  .description(
    'a fake price feed: GET /prices.json or /prices.csv, with stale, missing, jump, outage and malformed scenarios',
  )
  .option('--port <port>', 'port to listen on (0: any free port)', '9004')
  .option('--host <address>', 'address to listen on', '127.0.0.1')
  .option('--scenario <name>', 'normal | stale | missing | jump | outage | malformed', 'normal')
  .action(async (o: { port: string; host: string; scenario: string }) => {
    const { FAKE_PRICES_ENV, startFakePrices } = await import('@partner-api/fakes');
    const port = portWithScenario(o, ['normal', 'stale', 'missing', 'jump', 'outage', 'malformed']);
    if (port === undefined) return;
    const fake = await startFakePrices({ port, host: o.host, scenario: o.scenario as 'normal' });
    await serveFake('price feed', fake, FAKE_PRICES_ENV(fake));
  });

fakeProvider
  .command('sms')
  .description(
    "a fake Africa's Talking SMS API: POST /version1/messaging, delivery reports, refusals (405, 403, 406, 409), 5xx, missing or late reports",
  )
  .option('--port <port>', 'port to listen on (0: any free port)', '9005')
  .option('--host <address>', 'address to listen on', '127.0.0.1')
  .option(
    '--callback-url <url>',
    "where it posts delivery reports (Africa's Talking's dashboard setting): the server's route",
  )
  .option('--scenario <name>', 'the scenario of every send (POST /__fake/queue for one)', 'normal')
  .action(async (o: { port: string; host: string; callbackUrl?: string; scenario: string }) => {
    const { FAKE_AT_SMS_ENV, FAKE_AT_SMS_SCENARIOS, startFakeAtSms } = await import('@partner-api/fakes');
    const port = portWithScenario(o, FAKE_AT_SMS_SCENARIOS);
    if (port === undefined) return;
    const fake = await startFakeAtSms({
      port,
      host: o.host,
      callbackUrl: o.callbackUrl,
      scenario: o.scenario as 'normal',
    });
    await serveFake("Africa's Talking SMS", fake, FAKE_AT_SMS_ENV(fake));
  });

fakeProvider
  .command('mtn')
  .description('a fake MTN MoMo Open API: tokens, RequestToPay, transfers, their status, callbacks')
  .option('--port <port>', 'port to listen on (0: any free port)', '9002')
  .option('--host <address>', 'address to listen on', '127.0.0.1')
  .option('--target-environment <name>', 'X-Target-Environment (sandbox takes EUR only)', 'sandbox')
  .option('--currency <code>', 'the currency of the target environment', 'EUR')
  .action(async (o: { port: string; host: string; targetEnvironment: string; currency: string }) => {
    const { FAKE_MTN_ENV, startFakeMtn } = await import('@partner-api/fakes');
    const port = portOf(o.port);
    if (port === undefined) {
      process.stderr.write('partner-api: --port must be 0-65535\n');
      process.exitCode = 2;
      return;
    }
    const fake = await startFakeMtn({
      port,
      host: o.host,
      targetEnvironment: o.targetEnvironment,
      currency: o.currency,
    });
    await serveFake(
      'MTN MoMo',
      fake,
      FAKE_MTN_ENV(fake.url, { targetEnvironment: o.targetEnvironment, currency: o.currency }),
    );
  });

fakeProvider
  .command('airtel')
  .description('a fake Airtel Africa Open API: token, USSD push, enquiry, disbursement, callbacks')
  .option('--port <port>', 'port to listen on (0: any free port)', '9003')
  .option('--host <address>', 'address to listen on', '127.0.0.1')
  .option('--callback-url <url>', "where it posts callbacks (Airtel's portal setting): the server's route")
  .action(async (o: { port: string; host: string; callbackUrl?: string }) => {
    const { FAKE_AIRTEL_ENV, startFakeAirtel } = await import('@partner-api/fakes');
    const port = portOf(o.port);
    if (port === undefined) {
      process.stderr.write('partner-api: --port must be 0-65535\n');
      process.exitCode = 2;
      return;
    }
    const fake = await startFakeAirtel({ port, host: o.host, callbackUrl: o.callbackUrl });
    await serveFake('Airtel Money', fake, FAKE_AIRTEL_ENV(fake.url));
  });

fakeProvider
  .command('mpesa')
  .description('a fake Safaricom Daraja: OAuth, STK Push and Query, B2C, Transaction Status, callbacks')
  .option('--port <port>', 'port to listen on (0: any free port)', '9001')
  .option('--host <address>', 'address to listen on', '127.0.0.1')
  .option('--callback-delay-ms <ms>', 'from an accepted request to its outcome and callback', '2000')
  .action(async (o: { port: string; host: string; callbackDelayMs: string }) => {
    const { SANDBOX_PASSKEY, SANDBOX_SHORTCODE, startFakeDaraja } = await import('@partner-api/fakes');
    const port = Number(o.port);
    const delay = Number(o.callbackDelayMs);
    if (!Number.isInteger(port) || port < 0 || port > 65535 || !Number.isInteger(delay) || delay < 0) {
      process.stderr.write('partner-api: --port must be 0-65535 and --callback-delay-ms a whole number\n');
      process.exitCode = 2;
      return;
    }
    const fake = await startFakeDaraja({ port, host: o.host, callbackDelayMs: delay });
    // What the server must be given to talk to this fake (its defaults; see docs/payments.md).
    await serveFake('Daraja', fake, {
      MPESA_BASE_URL: fake.url,
      MPESA_CONSUMER_KEY: 'fake-consumer-key',
      MPESA_CONSUMER_SECRET: 'fake-consumer-secret',
      MPESA_SHORTCODE: SANDBOX_SHORTCODE,
      MPESA_PASSKEY: SANDBOX_PASSKEY,
      MPESA_B2C_SHORTCODE: '600000',
      MPESA_INITIATOR_NAME: 'testapi',
      MPESA_SECURITY_CREDENTIAL: 'fake-security-credential',
    });
  });

await program.parseAsync(process.argv);
