import type { FastifyInstance } from 'fastify';
import type { RouteHistory } from '../../lib/request-history.ts';
import {
  type ProviderPayments,
  providerPayments,
  successRate,
} from '../../services/payments/provider-stats.ts';
import { type ChartOption, figure, type Layout, PALETTE, responsiveChart } from '../chart.ts';
import type { ConsoleKit } from '../kit.ts';
import { esc, layout, table, when } from '../pages.ts';

const HOUR = 3_600_000;
/** The busiest routes drawn and listed (by responses over the window). */
const TOP_ROUTES = 8;

/** The 24 UTC hours of the window: the current hour and the 23 before it. */
export function windowHours(now: Date): Date[] {
  const current = Math.floor(now.getTime() / HOUR) * HOUR;
  return Array.from({ length: 24 }, (_, i) => new Date(current - (23 - i) * HOUR));
}

const hourLabel = (hour: Date) => `${hour.toISOString().slice(11, 13)}:00`;
const hourCell = (hour: Date) => esc(`${hour.toISOString().slice(0, 13).replace('T', ' ')}:00Z`);
const percent = (rate: number | null) => (rate === null ? '—' : `${(rate * 100).toFixed(1)}%`);
const ms = (seconds: number | null) => (seconds === null ? '—' : `${Math.round(seconds * 1000)}`);

/**
 * The hour axis and the legend: on a laptop the legend is one row above the plot (or a column
 * when `column`, for long route names); on a phone always a column.
 */
const axes = (hours: Date[], { narrow }: Layout, entries: number, column = false) => ({
  grid: {
    left: narrow ? 40 : 56,
    right: narrow ? 44 : 56,
    top: narrow || column ? 36 + entries * 20 : 56,
    bottom: 28,
  },
  xAxis: {
    type: 'category' as const,
    data: hours.map(hourLabel),
    axisLabel: { interval: narrow ? 5 : 2, color: '#1a1a1a' },
    axisLine: { lineStyle: { color: '#4a4a4a' } },
  },
  legend:
    narrow || column
      ? { orient: 'vertical' as const, left: 4, top: 4, itemGap: 6, textStyle: { color: '#1a1a1a' } }
      : { top: 4, itemGap: 28, textStyle: { color: '#1a1a1a' } },
});

/** One provider's hours: stacked bars (succeeded, failed, not finished) and the success rate. */
async function providerFigure(
  adapter: string,
  hours: Date[],
  found: ProviderPayments[],
  index: number,
): Promise<string> {
  const byHour = new Map(found.map((p) => [p.hour.getTime(), p]));
  const at = (hour: Date) => byHour.get(hour.getTime());
  const totals = found.reduce(
    (sum, p) => ({
      count: sum.count + p.count,
      succeeded: sum.succeeded + p.succeeded,
      failed: sum.failed + p.failed,
    }),
    { count: 0, succeeded: 0, failed: 0 },
  );
  const option = (layout: Layout): ChartOption => ({
    ...axes(hours, layout, 4),
    color: ['#1b6e35', '#b3261e', '#8c8c8c', '#1f5fa8'],
    yAxis: [
      { type: 'value', name: 'payments', minInterval: 1, axisLabel: { color: '#1a1a1a' } },
      {
        type: 'value',
        name: 'success',
        min: 0,
        max: 100,
        axisLabel: { formatter: '{value}%', color: '#1a1a1a' },
      },
    ],
    series: [
      { name: 'Succeeded', type: 'bar', stack: 'p', data: hours.map((h) => at(h)?.succeeded ?? 0) },
      { name: 'Failed', type: 'bar', stack: 'p', data: hours.map((h) => at(h)?.failed ?? 0) },
      {
        name: 'Not finished',
        type: 'bar',
        stack: 'p',
        data: hours.map((h) => {
          const p = at(h);
          return p ? p.count - p.succeeded - p.failed : 0;
        }),
      },
      {
        name: 'Success rate',
        type: 'line',
        yAxisIndex: 1,
        connectNulls: false,
        symbolSize: 5,
        lineStyle: { width: 2 },
        data: hours.map((h) => {
          const p = at(h);
          const rate = p ? successRate(p) : null;
          return rate === null ? null : Math.round(rate * 1000) / 10;
        }),
      },
    ],
  });
  const label = `Payments per hour through ${adapter} over the last 24 hours: ${totals.count} payments, ${totals.succeeded} succeeded, ${totals.failed} failed, success rate ${percent(successRate(totals))}.`;
  return figure({
    caption: `${adapter}: payments per hour and success rate`,
    svg: await responsiveChart(`pay${index}`, label, option),
    table: table({
      caption: `Payments through ${adapter} per hour (UTC)`,
      columns: ['Hour (UTC)', 'Payments', 'Succeeded', 'Failed', 'Not finished', 'Success rate'],
      rows: found.map((p) => [
        hourCell(p.hour),
        String(p.count),
        String(p.succeeded),
        String(p.failed),
        String(p.count - p.succeeded - p.failed),
        percent(successRate(p)),
      ]),
    }),
  });
}

/** The busiest routes' request rate, and their p95 latency, per hour; the table adds p50 and p99. */
async function routeFigures(hours: Date[], routes: RouteHistory[]): Promise<string> {
  const series = (value: (h: RouteHistory['hours'][number]) => number) =>
    routes.map((r, i) => {
      const byHour = new Map(r.hours.map((h) => [h.hour.getTime(), h]));
      return {
        name: r.route,
        type: 'line' as const,
        symbolSize: 4,
        lineStyle: { width: 2, color: PALETTE[i % PALETTE.length] },
        itemStyle: { color: PALETTE[i % PALETTE.length] },
        data: hours.map((h) => {
          const found = byHour.get(h.getTime());
          return found ? Math.round(value(found) * 100) / 100 : null;
        }),
      };
    });
  const base = (layout: Layout) => {
    const drawn = axes(hours, layout, routes.length, true);
    return { ...drawn, grid: { ...drawn.grid, right: 24 } };
  };
  const rate = (layout: Layout): ChartOption => ({
    ...base(layout),
    yAxis: { type: 'value', name: 'per minute', axisLabel: { color: '#1a1a1a' } },
    series: series((h) => h.perMinute),
  });
  const p95 = (layout: Layout): ChartOption => ({
    ...base(layout),
    yAxis: { type: 'value', name: 'p95 ms', axisLabel: { color: '#1a1a1a' } },
    series: series((h) => (h.p95 ?? 0) * 1000),
  });
  const height = 260 + routes.length * 20;
  const busiest = routes[0]!;
  const each = (cells: (r: RouteHistory, h: RouteHistory['hours'][number]) => string[]) =>
    routes.flatMap((r) => r.hours.map((h) => [esc(r.route), hourCell(h.hour), ...cells(r, h)]));
  const rateTable = table({
    caption: 'Responses per route and hour (UTC)',
    columns: ['Route', 'Hour (UTC)', 'Responses', 'Per minute'],
    rows: each((_, h) => [String(h.count), h.perMinute.toFixed(2)]),
  });
  const latencyTable = table({
    caption: 'Latency percentiles per route and hour (UTC)',
    columns: ['Route', 'Hour (UTC)', 'p50 ms', 'p95 ms', 'p99 ms'],
    rows: each((_, h) => [ms(h.p50), ms(h.p95), ms(h.p99)]),
  });
  return `${figure({
    caption: `Requests per minute, the ${routes.length} busiest routes`,
    svg: await responsiveChart(
      'rate',
      `Requests per minute per hour for the ${routes.length} busiest routes over the last 24 hours; the busiest, ${busiest.route}, answered ${busiest.count}.`,
      rate,
      height,
    ),
    table: rateTable,
  })}
${figure({
  caption: `95th percentile latency, the ${routes.length} busiest routes`,
  svg: await responsiveChart(
    'p95',
    `The 95th percentile latency in milliseconds per hour for the ${routes.length} busiest routes over the last 24 hours.`,
    p95,
    height,
  ),
  table: latencyTable,
})}`;
}

/** The Charts page (docs/console.md, Charts). */
export function registerChartsPage(app: FastifyInstance, kit: ConsoleKit): void {
  app.get('/console/charts', { config: kit.config }, async (request, reply) => {
    const found = await kit.session(request, reply);
    if (!found) return reply;
    const now = kit.ctx.clock();
    const hours = windowHours(now);
    const from = hours[0]!;
    const payments = await providerPayments(kit.ctx.database.db, { from, to: now, byHour: true });
    const adapters = [...new Set(payments.map((p) => p.adapter))].sort();
    const routes = kit.ctx.metrics.history.routes(from, now, TOP_ROUTES);
    const providerSection =
      adapters.length === 0
        ? '<p class="empty">No payments in the last 24 hours.</p>'
        : (
            await Promise.all(
              adapters.map((adapter, i) =>
                providerFigure(
                  adapter,
                  hours,
                  payments.filter((p) => p.adapter === adapter),
                  i,
                ),
              ),
            )
          ).join('\n');
    const routeSection =
      routes.length === 0
        ? '<p class="empty">No requests sampled in the last 24 hours.</p>'
        : await routeFigures(hours, routes);
    const main = `<h1>Charts</h1>
<p>The last 24 hours, by UTC hour, up to ${when(now)}. Each chart's figures are in the table beneath it.</p>
<section aria-labelledby="s-payments"><h2 id="s-payments">Payments per provider per hour</h2>
<p class="hint">Every provider request created in the hour, by what its transaction is now: the success rate is succeeded over finished (succeeded and failed). From the store.</p>
${providerSection}</section>
<section aria-labelledby="s-routes"><h2 id="s-routes">Requests and latency per route</h2>
<p class="hint">The public API's responses as this instance counted them (<code>http_requests_total</code>, <code>http_request_duration_seconds</code>), sampled every ${kit.ctx.config.METRICS_SAMPLE_SECONDS} s since it started; another instance's requests are not here, and a restart starts the history afresh. Percentiles are estimated from the latency buckets, as Prometheus's histogram_quantile does.</p>
${routeSection}
</section>`;
    return kit.html(reply, 200, layout('Charts', main, kit.who(found), '/console/charts'));
  });
}
