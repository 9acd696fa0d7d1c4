import type { RequestOptions, RequestSender } from '../request-sender.ts';
import type {
  Customer,
  CustomerCreate,
  CustomerGetResponse,
  CustomerList,
  CustomerListQuery,
  CustomerResponse,
  CustomerUpdate,
} from '../types.ts';
import { everyPage } from './pages.ts';

const byId = (id: string) => `/customers/${encodeURIComponent(id)}`;

/** The Customers resource. Mutations carry one idempotency key per call, reused on its retries. */
export class CustomersResource {
  constructor(private readonly sender: RequestSender) {}

  async create(body: CustomerCreate, options?: RequestOptions): Promise<CustomerResponse> {
    const spec = { method: 'POST', path: '/customers', body, auth: 'signed', idempotent: true } as const;
    return (await this.sender.request<CustomerResponse>(spec, options)).body;
  }

  /** One page, newest first. */
  async list(query: CustomerListQuery = {}, options?: RequestOptions): Promise<CustomerList> {
    const spec = { method: 'GET', path: '/customers', query, auth: 'signed' } as const;
    return (await this.sender.request<CustomerList>(spec, options)).body;
  }

  /** Every matching customer, page after page (`limit` sets the page size, default 100). */
  listAll(query: Omit<CustomerListQuery, 'page'> = {}, options?: RequestOptions): AsyncGenerator<Customer> {
    return everyPage((q: CustomerListQuery, o) => this.list(q, o), query, options);
  }

  async get(id: string, options?: RequestOptions): Promise<CustomerGetResponse> {
    const spec = { method: 'GET', path: byId(id), auth: 'signed' } as const;
    return (await this.sender.request<CustomerGetResponse>(spec, options)).body;
  }

  /** Partial update; `null` clears msisdn, identificationNumber, identificationType or referenceId. */
  async update(id: string, body: CustomerUpdate, options?: RequestOptions): Promise<CustomerResponse> {
    const spec = { method: 'PATCH', path: byId(id), body, auth: 'signed', idempotent: true } as const;
    return (await this.sender.request<CustomerResponse>(spec, options)).body;
  }
}
