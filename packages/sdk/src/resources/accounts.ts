import type { RequestOptions, RequestSender } from '../request-sender.ts';
import type {
  Account,
  AccountCreate,
  AccountCreateResponse,
  AccountList,
  AccountListQuery,
  AccountResponse,
  AccountUpdate,
  AccountUpdateResponse,
  AssetListResponse,
  PortfolioQuery,
  PortfolioResponse,
} from '../types.ts';
import { everyPage } from './pages.ts';

const byId = (id: string) => `/accounts/${encodeURIComponent(id)}`;

/** Investment accounts (preview): one per customer, opened by `create` or by its first order. */
export class AccountsResource {
  constructor(private readonly sender: RequestSender) {}

  /** 201 with the new account, or 200 `Account already exists` with the customer's. */
  async create(body: AccountCreate, options?: RequestOptions): Promise<AccountCreateResponse> {
    const spec = { method: 'POST', path: '/accounts', body, auth: 'signed', idempotent: true } as const;
    return (await this.sender.request<AccountCreateResponse>(spec, options)).body;
  }

  /** One page, newest first. */
  async list(query: AccountListQuery = {}, options?: RequestOptions): Promise<AccountList> {
    const spec = { method: 'GET', path: '/accounts', query, auth: 'signed' } as const;
    return (await this.sender.request<AccountList>(spec, options)).body;
  }

  /** Every matching account, page after page (`limit` sets the page size, default 100). */
  listAll(query: Omit<AccountListQuery, 'page'> = {}, options?: RequestOptions): AsyncGenerator<Account> {
    return everyPage((q: AccountListQuery, o) => this.list(q, o), query, options);
  }

  async get(id: string, options?: RequestOptions): Promise<AccountResponse> {
    const spec = { method: 'GET', path: byId(id), auth: 'signed' } as const;
    return (await this.sender.request<AccountResponse>(spec, options)).body;
  }

  /** Sets the customer's language (USSD screens and SMS); `null`: the organization's default. */
  async update(id: string, body: AccountUpdate, options?: RequestOptions): Promise<AccountUpdateResponse> {
    const spec = { method: 'PATCH', path: byId(id), body, auth: 'signed', idempotent: true } as const;
    return (await this.sender.request<AccountUpdateResponse>(spec, options)).body;
  }

  /** The positions: units available, locked and pending settlement, cost and value. Not paginated. */
  async assets(id: string, options?: RequestOptions): Promise<AssetListResponse> {
    const spec = { method: 'GET', path: `${byId(id)}/assets`, auth: 'signed' } as const;
    return (await this.sender.request<AssetListResponse>(spec, options)).body;
  }

  /** The valuation now, or at the end of `asOf` (YYYY-MM-DD, Africa/Nairobi). */
  async portfolio(
    id: string,
    query: PortfolioQuery = {},
    options?: RequestOptions,
  ): Promise<PortfolioResponse> {
    const spec = { method: 'GET', path: `${byId(id)}/portfolio`, query, auth: 'signed' } as const;
    return (await this.sender.request<PortfolioResponse>(spec, options)).body;
  }
}
