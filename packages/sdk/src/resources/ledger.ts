import type { RequestOptions, RequestSender } from '../request-sender.ts';
import type {
  Report,
  ReportList,
  ReportListQuery,
  ReportResponse,
  Transaction,
  TransactionList,
  TransactionListQuery,
  TransactionResponse,
} from '../types.ts';
import { everyPage } from './pages.ts';

/** Transactions (preview): a customer's money and unit movements, append-only, newest first. */
export class TransactionsResource {
  constructor(private readonly sender: RequestSender) {}

  /** One page, newest first. */
  async list(query: TransactionListQuery = {}, options?: RequestOptions): Promise<TransactionList> {
    const spec = { method: 'GET', path: '/transactions', query, auth: 'signed' } as const;
    return (await this.sender.request<TransactionList>(spec, options)).body;
  }

  /** Every matching movement, page after page (`limit` sets the page size, default 100). */
  listAll(
    query: Omit<TransactionListQuery, 'page'> = {},
    options?: RequestOptions,
  ): AsyncGenerator<Transaction> {
    return everyPage((q: TransactionListQuery, o) => this.list(q, o), query, options);
  }

  /** A payment transaction's id (a TRANSACTION.* event's transactionId) or a units entry's. */
  async get(id: string, options?: RequestOptions): Promise<TransactionResponse> {
    const spec = { method: 'GET', path: `/transactions/${encodeURIComponent(id)}`, auth: 'signed' } as const;
    return (await this.sender.request<TransactionResponse>(spec, options)).body;
  }
}

/** Reports (preview): typed, immutable records of a customer. */
export class ReportsResource {
  constructor(private readonly sender: RequestSender) {}

  /** One page, newest first. */
  async list(query: ReportListQuery = {}, options?: RequestOptions): Promise<ReportList> {
    const spec = { method: 'GET', path: '/reports', query, auth: 'signed' } as const;
    return (await this.sender.request<ReportList>(spec, options)).body;
  }

  /** Every matching report, page after page (`limit` sets the page size, default 100). */
  listAll(query: Omit<ReportListQuery, 'page'> = {}, options?: RequestOptions): AsyncGenerator<Report> {
    return everyPage((q: ReportListQuery, o) => this.list(q, o), query, options);
  }

  async get(id: string, options?: RequestOptions): Promise<ReportResponse> {
    const spec = { method: 'GET', path: `/reports/${encodeURIComponent(id)}`, auth: 'signed' } as const;
    return (await this.sender.request<ReportResponse>(spec, options)).body;
  }

  /**
   * The report as a PDF (`Accept: application/pdf`), its bytes. One attempt, as a download: an error
   * answer (404 Report not found, ...) is thrown as its typed error.
   */
  async getPdf(id: string, options: { signal?: AbortSignal } = {}): Promise<Uint8Array> {
    const path = `/reports/${encodeURIComponent(id)}`;
    const spec = { method: 'GET', path, auth: 'signed', accept: 'application/pdf' } as const;
    const response = await this.sender.open(spec, options);
    return new Uint8Array(await response.arrayBuffer());
  }
}
