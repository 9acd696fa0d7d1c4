import { FakeCore, type Listening, type LoggedRequest, serveFake } from '../kit/index.ts';

/**
 * A price feed as docs/market.md ("The price feed") describes the one the server pulls: `GET
 * /prices.json` (`{"prices":[{"symbol","price","asOf"}]}`) or `GET /prices.csv`
 * (`symbol,price,as_of`). Scenarios: `normal` (every price moves a little, as of now), `stale` (the
 * as-of time stops moving), `missing` (the first instrument is left out), `jump` (the first
 * instrument 25% up), `outage` (a 503), `malformed` (bad rows beside good ones), `slow`, `reset`.
 */
export type FakePricesScenario =
  | 'normal'
  | 'stale'
  | 'missing'
  | 'jump'
  | 'outage'
  | 'malformed'
  | 'slow'
  | 'reset';
const SCENARIOS: readonly FakePricesScenario[] = [
  'normal',
  'stale',
  'missing',
  'jump',
  'outage',
  'malformed',
  'slow',
  'reset',
];

export type FakePricesOptions = {
  host?: string;
  port?: number;
  /** The instruments and their opening prices; default a few NSE shares. */
  instruments?: ReadonlyArray<{ symbol: string; price: string }>;
  /** The scenario of every pull nothing is queued for; default `normal`. */
  scenario?: FakePricesScenario;
  /** The fake's clock (the as-of times it gives). */
  now?: () => Date;
  slowResponseMs?: number;
};

export type FakePricesRequest = LoggedRequest & { format: 'json' | 'csv' };

export type FakePrices = {
  url: string;
  /** The JSON and CSV URLs, as PRICE_FEED_URL takes them. */
  jsonUrl: string;
  csvUrl: string;
  requests: FakePricesRequest[];
  /** Pulls answered with prices. */
  processed(): number;
  /** The next pull plays `scenario`. */
  queue(scenario: FakePricesScenario): void;
  /** Every later pull plays `scenario` (until set again). */
  setScenario(scenario: FakePricesScenario): void;
  /** The current price of each instrument. */
  prices(): Record<string, string>;
  close(): Promise<void>;
};

export const FAKE_PRICES_INSTRUMENTS = [
  { symbol: 'SCOM', price: '28.5500' },
  { symbol: 'EQTY', price: '46.2000' },
  { symbol: 'KCB', price: '39.9000' },
  { symbol: 'EABL', price: '165.0000' },
] as const;

/** What a server needs to pull this fake. */
export function FAKE_PRICES_ENV(fake: Pick<FakePrices, 'jsonUrl'>): Record<string, string> {
  return { PRICE_FEED_URL: fake.jsonUrl, PRICE_FEED_FORMAT: 'json' };
}

const fourPlaces = (cents: bigint) => {
  const text = cents.toString().padStart(5, '0');
  return `${text.slice(0, -4)}.${text.slice(-4)}`;
};
/** A price in ten-thousandths, exact (no float ever reaches the wire). */
const toUnits = (price: string) => {
  const [whole, fraction = ''] = price.split('.');
  return BigInt(whole!) * 10_000n + BigInt(fraction.padEnd(4, '0').slice(0, 4));
};

export async function startFakePrices(options: FakePricesOptions = {}): Promise<FakePrices> {
  const now = options.now ?? (() => new Date());
  const core = new FakeCore<'pull', FakePricesScenario, FakePricesRequest, never>('fake price feed');
  const current = new Map(
    (options.instruments ?? FAKE_PRICES_INSTRUMENTS).map((i) => [i.symbol, toUnits(i.price)]),
  );
  let sticky: FakePricesScenario = options.scenario ?? 'normal';
  let frozenAt: Date | undefined;

  /** The rows of one pull, after the scenario acted on them. */
  const rows = (scenario: FakePricesScenario) => {
    // Stale: the as-of time of the last pull, again (or now, if nothing was pulled yet).
    const at = scenario === 'stale' && frozenAt ? frozenAt : now();
    frozenAt = at;
    const list = [...current].map(([symbol, units], i) => {
      // A little movement: up to ±0.5% a pull, kept as the instrument's price.
      let next =
        scenario === 'stale'
          ? units
          : units + (units * BigInt(Math.round((Math.random() - 0.5) * 100))) / 10_000n;
      if (next <= 0n) next = units;
      if (scenario === 'jump' && i === 0) next = (units * 125n) / 100n;
      current.set(symbol, next);
      return { symbol, price: fourPlaces(next), asOf: at.toISOString() };
    });
    return scenario === 'missing' ? list.slice(1) : list;
  };

  const server = await serveFake<FakePricesRequest>(
    { requests: core.requests, sleep: (ms) => core.sleep(ms), stop: () => core.stop() },
    { host: options.host, port: options.port, slowResponseMs: options.slowResponseMs ?? 15_000 },
    {
      describe: (received) => ({
        scenario: null,
        status: null,
        format: received.url.pathname.endsWith('.csv') ? 'csv' : 'json',
      }),
      answer: (received, request) => {
        if (received.method !== 'GET' || !/^\/prices\.(json|csv)$/.test(received.url.pathname))
          return { status: 404, body: { error: 'not found' } };
        const scenario = core.takeQueued('pull') ?? sticky;
        request.scenario = scenario;
        if (scenario === 'outage') return { status: 503, body: { error: 'service unavailable' } };
        const list = rows(scenario);
        core.markProcessed('pull');
        const bad =
          scenario === 'malformed'
            ? [
                { symbol: 'ZZBAD', price: 'abc', asOf: list[0]?.asOf },
                { symbol: 'ZZNOTIME', price: '10.0000' },
              ]
            : [];
        if (request.format === 'json') return { status: 200, body: { prices: [...list, ...bad] } };
        const csv = [
          'symbol,price,as_of',
          ...[...list, ...bad].map((r) => `${r.symbol},${r.price},${r.asOf ?? ''}`),
        ];
        if (scenario === 'malformed') csv.push('ZZSHORT,1');
        return { status: 200, body: `${csv.join('\n')}\n`, contentType: 'text/csv' };
      },
      control: {
        'POST /__fake/queue': ({ scenario }) => {
          if (!SCENARIOS.includes(scenario as FakePricesScenario))
            return { status: 400, body: { error: `scenario must be one of ${SCENARIOS.join(', ')}` } };
          core.queue('pull', scenario as FakePricesScenario);
          return { status: 200, body: { queued: { operation: 'pull', scenario } } };
        },
        'POST /__fake/scenario': ({ scenario }) => {
          if (!SCENARIOS.includes(scenario as FakePricesScenario))
            return { status: 400, body: { error: `scenario must be one of ${SCENARIOS.join(', ')}` } };
          sticky = scenario as FakePricesScenario;
          return { status: 200, body: { scenario } };
        },
        'GET /__fake/state': () => ({
          status: 200,
          body: {
            scenario: sticky,
            prices: Object.fromEntries([...current].map(([s, u]) => [s, fourPlaces(u)])),
            requests: core.requests,
            processed: core.processedCounts(),
          },
        }),
      },
      controlNotFound: () => ({ status: 404, body: { error: 'no such control route' } }),
      crashBody: () => ({ error: 'internal error' }),
    },
  );
  return fakePricesApi(server, core, {
    setScenario: (scenario) => (sticky = scenario),
    prices: () => Object.fromEntries([...current].map(([s, u]) => [s, fourPlaces(u)])),
  });
}

function fakePricesApi(
  server: Listening,
  core: FakeCore<'pull', FakePricesScenario, FakePricesRequest, never>,
  more: Pick<FakePrices, 'setScenario' | 'prices'>,
): FakePrices {
  return {
    url: server.url,
    jsonUrl: `${server.url}/prices.json`,
    csvUrl: `${server.url}/prices.csv`,
    requests: core.requests,
    processed: () => core.processed('pull'),
    queue: (scenario) => core.queue('pull', scenario),
    ...more,
    close: () => server.close(),
  };
}
