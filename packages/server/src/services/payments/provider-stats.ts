import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { rows } from '../../db/query.ts';

/**
 * A provider's payments asked in a span: every provider request created in it, by the outcome its
 * transaction has now (SUCCESS succeeded; FAILED or CANCELLED failed; the rest not finished).
 */
export type ProviderPayments = {
  adapter: string;
  /** The hour's start (UTC) with `byHour`; the span's start otherwise. */
  hour: Date;
  count: number;
  succeeded: number;
  failed: number;
};

/** Succeeded over finished, or null when none finished. */
export const successRate = (p: { succeeded: number; failed: number }) =>
  p.succeeded + p.failed === 0 ? null : p.succeeded / (p.succeeded + p.failed);

/**
 * Provider requests created in [from, to) per adapter, and per UTC hour of their creation with
 * `byHour` (docs/console.md, Charts and Overview).
 */
export async function providerPayments(
  q: Queryable,
  span: { from: Date; to: Date; byHour?: boolean },
): Promise<ProviderPayments[]> {
  const hour = span.byHour ? sql`floor(extract(epoch from pr.created_at) / 3600)::int` : sql`0`;
  const found = await rows<{
    adapter: string;
    hour: number;
    count: number;
    succeeded: number;
    failed: number;
  }>(
    q,
    sql`select pr.adapter, ${hour} as hour, count(*)::int as count,
  count(*) filter (where t.status = 'SUCCESS')::int as succeeded,
  count(*) filter (where t.status in ('FAILED', 'CANCELLED'))::int as failed
from provider_requests pr join transactions t on t.id = pr.transaction_id
where pr.created_at >= ${span.from.toISOString()}::timestamptz and pr.created_at < ${span.to.toISOString()}::timestamptz
group by 1, 2 order by 1, 2`,
  );
  return found.map((r) => ({
    ...r,
    hour: span.byHour ? new Date(Number(r.hour) * 3_600_000) : span.from,
  }));
}

/**
 * The 95th percentile (milliseconds) of our calls to each provider (send and query exchanges, as
 * recorded in provider_exchanges) made in [from, to); adapters without a call are absent.
 */
export async function providerCallP95(
  q: Queryable,
  span: { from: Date; to: Date },
): Promise<Map<string, number>> {
  const found = await rows<{ adapter: string; p95: number | string }>(
    q,
    sql`select pr.adapter, percentile_cont(0.95) within group (order by e.latency_ms) as p95
from provider_exchanges e join provider_requests pr on pr.id = e.provider_request_id
where e.kind in ('request', 'query') and e.latency_ms is not null
  and e.at >= ${span.from.toISOString()}::timestamptz and e.at < ${span.to.toISOString()}::timestamptz
group by pr.adapter`,
  );
  return new Map(found.map((r) => [r.adapter, Number(r.p95)]));
}
