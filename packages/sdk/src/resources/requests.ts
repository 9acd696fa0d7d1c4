import type { RequestOptions, RequestSender } from '../request-sender.ts';
import type {
  InvestmentRequest,
  RequestCreate,
  RequestGetResponse,
  RequestList,
  RequestListQuery,
  RequestResponse,
} from '../types.ts';
import { everyPage } from './pages.ts';

const byId = (id: string) => `/requests/${encodeURIComponent(id)}`;

/**
 * Requests (preview): orders. A buy sends the customer the mobile-money prompt; a sell executes at
 * once and pays out. A request's id is the orderId of `paymentStatus.get`. Mutations carry one
 * idempotency key per call, reused on its retries.
 */
export class RequestsResource {
  constructor(private readonly sender: RequestSender) {}

  /** A buy by amount (`{ side: 'BUY', amount: '1000' }`) or a sell by units (`{ side: 'SELL', units: '3' }`). */
  async create(body: RequestCreate, options?: RequestOptions): Promise<RequestResponse> {
    const spec = { method: 'POST', path: '/requests', body, auth: 'signed', idempotent: true } as const;
    return (await this.sender.request<RequestResponse>(spec, options)).body;
  }

  /** One page, newest first. */
  async list(query: RequestListQuery = {}, options?: RequestOptions): Promise<RequestList> {
    const spec = { method: 'GET', path: '/requests', query, auth: 'signed' } as const;
    return (await this.sender.request<RequestList>(spec, options)).body;
  }

  /** Every matching request, page after page (`limit` sets the page size, default 100). */
  listAll(
    query: Omit<RequestListQuery, 'page'> = {},
    options?: RequestOptions,
  ): AsyncGenerator<InvestmentRequest> {
    return everyPage((q: RequestListQuery, o) => this.list(q, o), query, options);
  }

  async get(id: string, options?: RequestOptions): Promise<RequestGetResponse> {
    const spec = { method: 'GET', path: byId(id), auth: 'signed' } as const;
    return (await this.sender.request<RequestGetResponse>(spec, options)).body;
  }

  /** PENDING_PAYMENT or PAID only (a PAID request's amount is refunded); otherwise a 409. */
  async cancel(id: string, options?: RequestOptions): Promise<RequestResponse> {
    const spec = { method: 'POST', path: `${byId(id)}/cancel`, auth: 'signed', idempotent: true } as const;
    return (await this.sender.request<RequestResponse>(spec, options)).body;
  }
}
