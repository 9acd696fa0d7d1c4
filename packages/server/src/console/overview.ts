import { sql } from 'drizzle-orm';
import type { AppContext } from '../context.ts';
import { one } from '../db/query.ts';
import { paymentHealth, storeChecks } from '../routes/health.ts';
import { listHeldPrices } from '../services/market/prices.ts';
import { listStuck } from '../services/payments/pipeline/operator.ts';
import { providerCallP95, providerPayments, successRate } from '../services/payments/provider-stats.ts';

/** One line of the Overview: `attention` when it needs a person (shown red, with a text label). */
export type OverviewItem = { label: string; value: string; attention: boolean; detail?: string };
export type OverviewSection = { title: string; items: OverviewItem[] };

/** A request waiting this long in the payment queue is stuck (as `GET /admin/payments/stuck` counts). */
const STUCK_SECONDS = 600;
/** A webhook delivery or SMS still waiting after this long needs a look. */
const BACKLOG_MINUTES = 15;

/**
 * A provider needs a person when fewer than this share of its payments finished in the last hour
 * succeeded, once at least PROVIDER_MIN_FINISHED finished (a handful of failures is not a trend).
 */
export const PROVIDER_SUCCESS_THRESHOLD = 0.9;
export const PROVIDER_MIN_FINISHED = 10;

type Counts = { waiting: number; old: number; failed: number };

/**
 * What the Overview shows, read live: the same checks /healthz makes, the payment and operator
 * queues, the price feed and held prices, the book check, and the webhook and SMS backlogs.
 */
export async function readOverview(ctx: AppContext): Promise<OverviewSection[]> {
  const db = ctx.database.db;
  const now = ctx.clock();
  const oldBefore = new Date(now.getTime() - BACKLOG_MINUTES * 60_000).toISOString();
  const lastHour = { from: new Date(now.getTime() - 3_600_000), to: now };
  const [checks, stuck, held, queue, webhooks, sms, providerHour, providerP95] = await Promise.all([
    storeChecks(ctx),
    listStuck(db, { olderThanSeconds: STUCK_SECONDS, limit: 1000, now }),
    listHeldPrices(db),
    one<{ waiting: number }>(
      db,
      sql`select count(*)::int as waiting from provider_requests where state in ('QUEUED', 'SENDING', 'AWAITING')`,
    ),
    one<Counts>(
      db,
      sql`select count(*) filter (where state = 'PENDING')::int as waiting,
  count(*) filter (where state = 'PENDING' and created_at < ${oldBefore}::timestamptz)::int as old,
  count(*) filter (where state = 'FAILED')::int as failed from webhook_deliveries`,
    ),
    one<Counts>(
      db,
      sql`select count(*) filter (where state in ('QUEUED', 'SENDING'))::int as waiting,
  count(*) filter (where state in ('QUEUED', 'SENDING') and created_at < ${oldBefore}::timestamptz)::int as old,
  count(*) filter (where state in ('REFUSED', 'FAILED', 'UNDELIVERED'))::int as failed from sms_messages`,
    ),
    providerPayments(db, lastHour),
    providerCallP95(db, lastHour),
  ]);
  const payments = paymentHealth(ctx);
  const operatorQueue = stuck.filter((r) => r.state === 'OPERATOR' || r.state === 'UNCERTAIN').length;
  const feed = ctx.config.priceFeed ? (ctx.feedWorker?.health() ?? { state: 'stopped' as const }) : undefined;
  const book = ctx.bookCheck;
  return [
    {
      title: 'Health',
      items: [
        {
          label: `Store (${ctx.database.kind})`,
          value: checks.database,
          attention: checks.database !== 'ok',
        },
        { label: 'Redis', value: checks.redis, attention: checks.redis === 'unavailable' },
        {
          label: 'Payment worker',
          value: payments.worker,
          attention: payments.worker !== 'running',
        },
        ...Object.entries(payments.breakers).map(([provider, state]) => ({
          label: `Provider ${provider}: breaker`,
          value: state,
          attention: state !== 'closed',
        })),
        ...providerLastHour(Object.keys(payments.breakers), providerHour, providerP95),
      ],
    },
    {
      title: 'Payments',
      items: [
        {
          label: 'Payment queue (waiting on a provider)',
          value: String(queue?.waiting ?? 0),
          attention: false,
        },
        {
          label: `Stuck over ${STUCK_SECONDS / 60} minutes or with the operator`,
          value: String(stuck.length),
          attention: stuck.length > 0,
        },
        {
          label: 'Operator queue (a person decides)',
          value: String(operatorQueue),
          attention: operatorQueue > 0,
        },
      ],
    },
    {
      title: 'Market',
      items: [
        feed
          ? {
              label: 'Price feed',
              value: feed.state,
              attention: feed.state !== 'ok' && feed.state !== 'starting',
              detail:
                'lastSuccessAt' in feed && feed.lastSuccessAt
                  ? `last success ${feed.lastSuccessAt.toISOString()}`
                  : undefined,
            }
          : { label: 'Price feed', value: 'not configured', attention: false },
        {
          label: 'Held prices (to confirm or reject)',
          value: String(held.length),
          attention: held.length > 0,
        },
        book
          ? {
              label: 'Book: customer claims beyond the pooled position',
              value: book.shortfall.length === 0 ? 'none' : book.shortfall.join(', '),
              attention: book.shortfall.length > 0,
              detail: `checked ${book.checkedAt.toISOString()} for ${book.date}`,
            }
          : {
              label: 'Book: customer claims beyond the pooled position',
              value: 'not checked yet',
              attention: false,
            },
      ],
    },
    {
      title: 'Backlogs',
      items: [
        backlog('Webhook deliveries', webhooks, 'given up'),
        backlog('Investor SMS', sms, 'refused, failed or undelivered'),
      ],
    },
  ];
}

/** Each provider's success rate and p95 call latency over the last hour (docs/console.md, Overview). */
function providerLastHour(
  configured: string[],
  found: Awaited<ReturnType<typeof providerPayments>>,
  p95: Map<string, number>,
): OverviewItem[] {
  const adapters = [...new Set([...configured, ...found.map((p) => p.adapter), ...p95.keys()])].sort();
  return adapters.map((adapter) => {
    const counts = found.find((p) => p.adapter === adapter) ?? { count: 0, succeeded: 0, failed: 0 };
    const rate = successRate(counts);
    const finished = counts.succeeded + counts.failed;
    const latency = p95.get(adapter);
    return {
      label: `Provider ${adapter}: last hour`,
      value: `success ${rate === null ? '—' : `${(rate * 100).toFixed(1)}%`}, p95 ${latency === undefined ? '—' : `${Math.round(latency)} ms`}`,
      attention: rate !== null && finished >= PROVIDER_MIN_FINISHED && rate < PROVIDER_SUCCESS_THRESHOLD,
      detail: `${counts.count} payments, ${counts.succeeded} succeeded, ${counts.failed} failed`,
    };
  });
}

function backlog(label: string, counts: Counts | undefined, failedLabel: string): OverviewItem {
  const { waiting = 0, old = 0, failed = 0 } = counts ?? {};
  return {
    label,
    value: `${waiting} waiting, ${failed} ${failedLabel}`,
    attention: old > 0 || failed > 0,
    detail: old > 0 ? `${old} waiting for over ${BACKLOG_MINUTES} minutes` : undefined,
  };
}
