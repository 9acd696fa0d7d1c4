import { LATENCY_BUCKETS, type RequestTally } from './metrics.ts';

/** At most a day of one-minute samples per process (docs/console.md, Charts). */
export const HISTORY_LIMIT = 1440;

/** One sample: per `METHOD route`, the cumulative responses and latency bucket counts. */
type Sample = { at: number; cells: Map<string, { count: number; buckets: number[] }> };

/** A route's figures over one hour of the window. */
export type RouteHour = {
  /** The hour's start (UTC). */
  hour: Date;
  count: number;
  /** Responses per minute over the part of the hour the samples cover. */
  perMinute: number;
  /** Seconds, from the hour's bucket deltas as histogram_quantile estimates them; null without responses. */
  p50: number | null;
  p95: number | null;
  p99: number | null;
};
export type RouteHistory = { route: string; count: number; hours: RouteHour[] };

/**
 * The quantile `q` (0..1) of a histogram with upper bounds `bounds` and non-cumulative `counts`
 * (one more than `bounds`: the last counts what lies above the last bound), as Prometheus's
 * histogram_quantile estimates it: find the bucket holding the rank `q × total` and interpolate
 * linearly inside it (the first bucket starts at 0). A rank in the +Inf bucket answers the last
 * finite bound. Null when the histogram is empty.
 */
export function histogramQuantile(
  q: number,
  bounds: readonly number[],
  counts: readonly number[],
): number | null {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total <= 0) return null;
  const rank = q * total;
  let below = 0;
  for (let i = 0; i < counts.length; i++) {
    const inBucket = counts[i]!;
    if (below + inBucket >= rank && inBucket > 0) {
      if (i >= bounds.length) return bounds[bounds.length - 1]!;
      const lower = i === 0 ? 0 : bounds[i - 1]!;
      const upper = bounds[i]!;
      return lower + ((upper - lower) * (rank - below)) / inBucket;
    }
    below += inBucket;
  }
  return bounds[bounds.length - 1]!;
}

/**
 * A bounded in-memory history of the request tally (`http_requests_total`,
 * `http_request_duration_seconds`): one sample per interval, the last HISTORY_LIMIT kept. Per
 * process: it starts empty at every start and sees only this instance's requests.
 */
export class RequestHistory {
  readonly #samples: Sample[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly tally: RequestTally) {}

  /** Takes a sample now, then one every `intervalMs` (unref'd); a second start does nothing. */
  start(intervalMs: number, clock: () => Date): void {
    if (this.#timer) return;
    this.sample(clock());
    this.#timer = setInterval(() => this.sample(clock()), intervalMs).unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Records the tally as it stands at `at` (samples are kept in time order; an older one is dropped). */
  sample(at: Date): void {
    const last = this.#samples.at(-1);
    if (last && at.getTime() <= last.at) return;
    const cells = new Map<string, { count: number; buckets: number[] }>();
    for (const cell of this.tally.snapshot()) {
      cells.set(`${cell.method} ${cell.route}`, { count: cell.count, buckets: cell.buckets });
    }
    this.#samples.push({ at: at.getTime(), cells });
    if (this.#samples.length > HISTORY_LIMIT) this.#samples.splice(0, this.#samples.length - HISTORY_LIMIT);
  }

  get size(): number {
    return this.#samples.length;
  }

  /**
   * Per route (`METHOD /pattern`), the busiest `top` by responses in [from, to), each with its
   * hours: the responses between consecutive samples inside the window, summed per hour of the
   * later sample, their rate per minute and the p50/p95/p99 of the summed bucket deltas.
   */
  routes(from: Date, to: Date, top = 8): RouteHistory[] {
    const inside = this.#samples.filter((s) => s.at >= from.getTime() && s.at < to.getTime());
    type Acc = { count: number; buckets: number[]; seconds: number };
    const perRoute = new Map<string, Map<number, Acc>>();
    const covered = new Map<number, number>();
    for (let i = 1; i < inside.length; i++) {
      const before = inside[i - 1]!;
      const after = inside[i]!;
      const hour = Math.floor(after.at / 3_600_000) * 3_600_000;
      const seconds = (after.at - before.at) / 1000;
      covered.set(hour, (covered.get(hour) ?? 0) + seconds);
      for (const [key, now] of after.cells) {
        const then = before.cells.get(key);
        const count = now.count - (then?.count ?? 0);
        if (count <= 0) continue;
        let hours = perRoute.get(key);
        if (!hours) {
          hours = new Map();
          perRoute.set(key, hours);
        }
        let acc = hours.get(hour);
        if (!acc) {
          acc = { count: 0, buckets: now.buckets.map(() => 0), seconds: 0 };
          hours.set(hour, acc);
        }
        acc.count += count;
        now.buckets.forEach((n, b) => {
          acc.buckets[b]! += n - (then?.buckets[b] ?? 0);
        });
      }
    }
    const found: RouteHistory[] = [...perRoute].map(([route, hours]) => {
      const list = [...hours].sort(([a], [b]) => a - b);
      return {
        route,
        count: list.reduce((n, [, acc]) => n + acc.count, 0),
        hours: list.map(([hour, acc]) => ({
          hour: new Date(hour),
          count: acc.count,
          perMinute: acc.count / Math.max((covered.get(hour) ?? 0) / 60, 1 / 60),
          p50: histogramQuantile(0.5, LATENCY_BUCKETS, acc.buckets),
          p95: histogramQuantile(0.95, LATENCY_BUCKETS, acc.buckets),
          p99: histogramQuantile(0.99, LATENCY_BUCKETS, acc.buckets),
        })),
      };
    });
    return found.sort((a, b) => b.count - a.count || a.route.localeCompare(b.route)).slice(0, top);
  }
}
