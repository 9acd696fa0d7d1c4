import {
  type MonthlyStatementData,
  monthlyStatementDataSchema,
  type Report,
  type TradeConfirmationData,
  tradeConfirmationDataSchema,
} from '@partner-api/contract';
import PDFDocument from 'pdfkit';

/**
 * A report as a PDF (docs/investments.md, Reports; pdfkit: docs/decisions.md). Every figure of the
 * JSON `data` is printed as the JSON has it (decimal strings, ISO times, YYYY-MM-DD dates), so the
 * two never disagree; a test reads the text back. The document's dates are the report's own, so the
 * same report always renders to the same bytes.
 */
export async function renderReportPdf(report: Report): Promise<Buffer> {
  const title = report.type === 'TRADE_CONFIRMATION' ? 'Trade confirmation' : 'Monthly statement';
  const created = new Date(report.createdAt);
  const doc = new PDFDocument({
    size: 'A4',
    margin: 50,
    info: { Title: `${title} ${report.id}`, CreationDate: created, ModDate: created },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<void>((resolve, reject) => {
    doc.on('end', resolve);
    doc.on('error', reject);
  });
  const page = new Page(doc);
  const confirmationData = tradeConfirmationDataSchema.safeParse(report.data);
  const statementData = monthlyStatementDataSchema.safeParse(report.data);
  const platform = confirmationData.data?.platform ?? statementData.data?.platform;
  if (platform) {
    doc.font('Helvetica-Bold').fontSize(16).text(platform.name);
    doc.font('Helvetica').fontSize(9).text(platform.licence).moveDown();
  }
  doc.font('Helvetica-Bold').fontSize(14).text(title).moveDown(0.5);
  page.field('Report', report.id);
  page.field('Issued', report.createdAt);
  if (report.replaces) page.field('Corrects report', report.replaces);
  if (report.type === 'TRADE_CONFIRMATION' && confirmationData.success)
    confirmation(page, confirmationData.data);
  else if (report.type === 'MONTHLY_STATEMENT' && statementData.success) statement(page, statementData.data);
  // A report whose data is not its type's shape (written by hand, before the producers): every field as stored.
  else for (const [path, value] of leaves(report.data)) page.field(path, value);
  doc.end();
  await ended;
  return Buffer.concat(chunks);
}

/** Labelled lines and sections, in one font family (the standard Helvetica: no font file to ship). */
class Page {
  constructor(readonly doc: PDFKit.PDFDocument) {}
  field(label: string, value: string) {
    this.doc.font('Helvetica-Bold').fontSize(10).text(`${label}: `, { continued: true });
    this.doc.font('Helvetica').text(value);
  }
  section(title: string) {
    this.doc.moveDown(0.6).font('Helvetica-Bold').fontSize(12).text(title).moveDown(0.2);
  }
  line(text: string, size = 10) {
    this.doc.font('Helvetica').fontSize(size).text(text);
  }
  note(text: string) {
    this.doc.font('Helvetica').fontSize(8).fillColor('#555555').text(text).fillColor('black');
  }
}

function confirmation(page: Page, data: TradeConfirmationData) {
  page.section('Customer');
  page.field('Name', `${data.customer.firstName} ${data.customer.lastName}`);
  page.field('Customer ID', data.customer.id);
  page.section('Trade');
  page.field('Side', data.side);
  page.field('Instrument', `${data.instrument.symbol} ${data.instrument.name}`);
  page.field('Instrument ID', data.instrument.id);
  page.field('Units', data.units);
  page.field('Price', `${data.price} ${data.instrument.currency}`);
  page.field('Price as of', data.priceAsOf ?? 'not given');
  page.field('Amount', `${data.amount} ${data.currency}`);
  page.field('Fees', `${data.feesTotal} ${data.currency}`);
  for (const fee of data.fees) page.field(fee.type, `${fee.amount} ${data.currency}`);
  page.note(data.feesNote);
  page.field('Executed at', data.executedAt);
  page.field('Settlement date', data.settlementDate);
  page.field('Order ID', data.orderId);
  page.field('Execution ID', data.executionId);
}

type Position = MonthlyStatementData['opening']['positions'][number];

function positions(page: Page, title: string, at: MonthlyStatementData['opening']) {
  page.section(title);
  if (at.positions.length === 0) page.line('No holdings.');
  for (const p of at.positions) {
    page.line(positionLine(p));
    page.note(`Instrument ${p.instrument.id}`);
  }
  for (const v of at.values) page.field(`Total value (${v.currency})`, v.value);
}

const positionLine = (p: Position) =>
  `${p.instrument.symbol} ${p.instrument.name}: ${p.units} units at ${p.price ?? 'no price'}` +
  `${p.priceAsOf ? ` (as of ${p.priceAsOf})` : ''} = ${p.value ?? 'not valued'} ${p.instrument.currency}`;

function statement(page: Page, data: MonthlyStatementData) {
  page.field(
    'Period',
    `${data.period.from} to ${data.period.to} (${data.period.month}, ${data.period.timeZone})`,
  );
  page.section('Customer');
  page.field('Name', `${data.customer.firstName} ${data.customer.lastName}`);
  page.field('Customer ID', data.customer.id);
  if (data.accountId) page.field('Account ID', data.accountId);
  positions(page, `Opening positions (${data.period.from})`, data.opening);
  page.section(`Transactions (${data.totals.transactions})`);
  if (data.transactions.length === 0) page.line('No transactions this month.');
  for (const t of data.transactions) {
    const figure = t.ledger === 'MONEY' ? `${t.amount} ${t.currency}` : `${t.units} units at ${t.price}`;
    page.line(`${t.bookingDate} ${t.ledger} ${t.type} ${t.symbol} ${figure}`);
    page.note(`Transaction ${t.id}${t.orderId ? `, order ${t.orderId}` : ''}, instrument ${t.instrumentId}`);
  }
  positions(page, `Closing positions (${data.period.to})`, data.closing);
  page.section('Totals');
  for (const m of data.totals.money) {
    page.line(
      `${m.currency}: collected ${m.collected}, paid out ${m.paidOut}, refunded ${m.refunded}, net ${m.net}`,
    );
  }
  for (const u of data.totals.units) {
    page.line(`${u.symbol} (${u.instrumentId}): bought ${u.bought}, sold ${u.sold}, net ${u.net} units`);
  }
}

/** Every leaf of a JSON value with its path (`a.b[0]`), for data of no known shape. */
function leaves(value: unknown, path = ''): [string, string][] {
  if (value === null || value === undefined) return [[path || 'data', 'null']];
  if (Array.isArray(value)) return value.flatMap((item, i) => leaves(item, `${path}[${i}]`));
  if (typeof value === 'object')
    return Object.entries(value).flatMap(([key, item]) => leaves(item, path ? `${path}.${key}` : key));
  return [[path || 'data', String(value)]];
}
