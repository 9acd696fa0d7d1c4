/** What `partner instruments`, `orders`, `portfolio` and `transactions` print (the investments preview). */
import { CUID_PATTERN } from '@partner-api/contract';
import type {
  Instrument,
  InvestmentRequest,
  PartnerClient,
  Portfolio,
  Report,
  Transaction,
} from '@partner-api/sdk';

const dash = (value: string | null | undefined) => (value === null || value === undefined ? '-' : value);

/** One line per instrument: id, symbol, name, type, status, latest price and its as-of time. */
export function instrumentRow(i: Instrument): string {
  const price = `${i.currency} ${i.latestPrice.value}${i.latestPrice.fresh ? '' : ' (stale)'}`;
  return [
    i.id,
    i.symbol.padEnd(8),
    i.name.slice(0, 28).padEnd(28),
    i.investmentType.padEnd(6),
    i.tradingStatus.padEnd(8),
    price.padEnd(20),
    dash(i.latestPrice.asOf),
  ].join('  ');
}

/** One line per request: id, side, status, amount, units at price, created. */
export function requestRow(r: InvestmentRequest): string {
  const units = r.quantity === null ? '-' : `${r.quantity} @ ${dash(r.price)}`;
  return [
    r.id,
    r.side.padEnd(4),
    r.status.padEnd(15),
    `${r.currency} ${r.amount}`.padEnd(16),
    units.padEnd(22),
    r.customerId,
    r.createdAt,
  ].join('  ');
}

export function requestDetails(r: InvestmentRequest): string {
  const rows: Array<[string, string]> = [
    ['id', r.id],
    ['side', r.side],
    ['status', r.status],
    ['customer', r.customerId],
    ['instrument', r.instrumentId],
    ['amount', `${r.currency} ${r.amount}`],
    ['units', dash(r.quantity)],
    ['price', dash(r.price)],
    [
      'execution',
      r.execution
        ? `${r.execution.status} ${r.execution.units} @ ${r.execution.price}, settles ${r.execution.settlementDate}`
        : '-',
    ],
    ...r.transactions.map((t): [string, string] => [
      'payment',
      `${t.type} ${t.status} ${t.currency} ${t.amount}  ${t.id}`,
    ]),
    ['created', r.createdAt],
    ['updated', r.updatedAt],
  ];
  return `${rows.map(([k, v]) => `${k.padEnd(15)}${v}`).join('\n')}\n`;
}

/** One line per movement: id, date, type, status, amount or units, the request it belongs to. */
export function transactionRow(t: Transaction): string {
  const moved = t.ledger === 'MONEY' ? `${dash(t.currency)} ${dash(t.amount)}` : `${dash(t.units)} units`;
  const request = t.references.find((r) => r.type === 'REQUEST')?.id;
  return [t.id, t.createdAt, t.type.padEnd(10), t.status.padEnd(9), moved.padEnd(18), dash(request)].join(
    '  ',
  );
}

/** One line per report: id, type, customer, what it is of (order or month), created. */
export function reportRow(r: Report): string {
  const data = r.data as { orderId?: string; period?: { month: string } };
  const of = data.period ? data.period.month : dash(data.orderId);
  return [
    r.id,
    r.type.padEnd(18),
    r.customerId,
    of.padEnd(25),
    r.createdAt,
    r.replaces ? `replaces ${r.replaces}` : '',
  ]
    .join('  ')
    .trimEnd();
}

export function portfolioLines(p: Portfolio): string {
  const lines = [
    `account ${p.accountId}  customer ${p.customerId}  ${p.date ? `as of ${p.date}` : `valued at ${p.valuedAt}`}`,
    `value ${p.currency} ${p.value}  cost ${p.cost}  unrealised ${p.unrealisedGain}`,
  ];
  for (const position of p.positions)
    lines.push(
      `  ${position.symbol.padEnd(8)}  ${position.units.padStart(14)} units  @ ${dash(position.price).padStart(10)}  = ${dash(position.value).padStart(12)}  (price of ${dash(position.priceAsOf)})`,
    );
  if (p.positions.length === 0) lines.push('  no positions');
  return `${lines.join('\n')}\n`;
}

/** An instrument by id, or by its symbol (exact, any case) through the catalogue's search. */
export async function instrumentId(client: PartnerClient, idOrSymbol: string): Promise<string> {
  if (CUID_PATTERN.test(idOrSymbol)) return idOrSymbol;
  const symbol = idOrSymbol.toUpperCase();
  for await (const instrument of client.instruments.listAll({ search: idOrSymbol }))
    if (instrument.symbol.toUpperCase() === symbol) return instrument.id;
  throw new Error(`no instrument has the symbol ${idOrSymbol}`);
}

/** The customer's account: the one they have, else opened now (POST /accounts). */
export async function accountOf(client: PartnerClient, customerId: string): Promise<string> {
  const existing = await client.accounts.list({ customerId, limit: 1 });
  if (existing.data[0]) return existing.data[0].id;
  return (await client.accounts.create({ customerId })).data.id;
}
