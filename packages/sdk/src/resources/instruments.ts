import type { RequestOptions, RequestSender } from '../request-sender.ts';
import type {
  Instrument,
  InstrumentList,
  InstrumentListQuery,
  InstrumentPricesQuery,
  InstrumentPricesResponse,
  InstrumentResponse,
  InvestmentTypeListResponse,
} from '../types.ts';
import { everyPage } from './pages.ts';

const byId = (id: string) => `/instruments/${encodeURIComponent(id)}`;

/** Investment types (preview): every type the platform admits, with its count of active instruments. */
export class InvestmentTypesResource {
  constructor(private readonly sender: RequestSender) {}

  /** Not paginated. */
  async list(options?: RequestOptions): Promise<InvestmentTypeListResponse> {
    const spec = { method: 'GET', path: '/investment-types', auth: 'signed' } as const;
    return (await this.sender.request<InvestmentTypeListResponse>(spec, options)).body;
  }
}

/** Instruments (preview): the platform's catalogue with the latest price, and daily bars. */
export class InstrumentsResource {
  constructor(private readonly sender: RequestSender) {}

  /** One page, by symbol. */
  async list(query: InstrumentListQuery = {}, options?: RequestOptions): Promise<InstrumentList> {
    const spec = { method: 'GET', path: '/instruments', query, auth: 'signed' } as const;
    return (await this.sender.request<InstrumentList>(spec, options)).body;
  }

  /** Every matching instrument, page after page (`limit` sets the page size, default 100). */
  listAll(
    query: Omit<InstrumentListQuery, 'page'> = {},
    options?: RequestOptions,
  ): AsyncGenerator<Instrument> {
    return everyPage((q: InstrumentListQuery, o) => this.list(q, o), query, options);
  }

  async get(id: string, options?: RequestOptions): Promise<InstrumentResponse> {
    const spec = { method: 'GET', path: byId(id), auth: 'signed' } as const;
    return (await this.sender.request<InstrumentResponse>(spec, options)).body;
  }

  /** The latest price and the daily bars of `from`..`to` (default: the 30 days ending today). */
  async prices(
    id: string,
    query: InstrumentPricesQuery = {},
    options?: RequestOptions,
  ): Promise<InstrumentPricesResponse> {
    const spec = { method: 'GET', path: `${byId(id)}/prices`, query, auth: 'signed' } as const;
    return (await this.sender.request<InstrumentPricesResponse>(spec, options)).body;
  }
}
