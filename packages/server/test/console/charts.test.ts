import { randomBytes } from 'node:crypto';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { adminInject } from '@partner-api/testkit/helpers.ts';
import { sql } from 'drizzle-orm';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rows } from '../../src/db/query.ts';
import { LATENCY_BUCKETS, RequestTally } from '../../src/lib/metrics.ts';
import { HISTORY_LIMIT, histogramQuantile, RequestHistory } from '../../src/lib/request-history.ts';
import { seedPayments } from './charts-seed.ts';
import { type Browser, consoleClient } from './client.ts';

/** A fixed "now" far from the wall clock: other suites' rows on the shared PostgreSQL fall outside the window. */
const NOW = new Date('2030-01-15T12:30:00Z');

describe('the request history', () => {
  it('estimates quantiles from bucket counts as histogram_quantile does', () => {
    const bounds = [0.1, 0.5, 1];
    // 10 in (0, 0.1], 30 in (0.1, 0.5], 0 in (0.5, 1], 10 above 1.
    const counts = [10, 30, 0, 10];
    expect(histogramQuantile(0.1, bounds, counts)).toBeCloseTo(0.1 * (5 / 10), 12);
    expect(histogramQuantile(0.5, bounds, counts)).toBeCloseTo(0.1 + 0.4 * (15 / 30), 12);
    // Rank 40 is the end of the second bucket; rank 45 lies above the last bound: its bound.
    expect(histogramQuantile(0.8, bounds, counts)).toBeCloseTo(0.5, 12);
    expect(histogramQuantile(0.9, bounds, counts)).toBe(1);
    expect(histogramQuantile(0.5, bounds, [0, 0, 0, 0])).toBeNull();
  });

  it('derives per-hour counts, rate and p50/p95/p99 from the sampled tally', () => {
    const tally = new RequestTally(new Registry());
    const history = new RequestHistory(tally);
    const start = new Date('2030-01-15T10:00:00Z');
    history.sample(start);
    // 100 responses of GET /v1/known in the first minute: 50 at 4 ms, 40 at 20 ms, 9 at 200 ms, 1 at 3 s.
    for (const [seconds, n] of [
      [0.004, 50],
      [0.02, 40],
      [0.2, 9],
      [3, 1],
    ] as const)
      for (let i = 0; i < n; i++) tally.record('/v1/known', 'GET', 200, seconds);
    tally.record('/v1/other', 'POST', 201, 0.03);
    history.sample(new Date(start.getTime() + 60_000));
    // Nothing in the second minute: the rate halves over the two minutes covered.
    history.sample(new Date(start.getTime() + 120_000));
    const [known, other] = history.routes(start, new Date(start.getTime() + 3_600_000));
    expect(known!.route).toBe('GET /v1/known');
    expect(known!.count).toBe(100);
    const [hour] = known!.hours;
    expect(hour!.hour).toEqual(start);
    expect(hour!.count).toBe(100);
    expect(hour!.perMinute).toBe(50);
    // Bounds: 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, ... p50: rank 50 ends the (0.002, 0.005] bucket.
    expect(LATENCY_BUCKETS.slice(0, 7)).toEqual([0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25]);
    expect(hour!.p50).toBeCloseTo(0.005, 12);
    // p95: rank 95, 5 into the 9 of (0.1, 0.25]; p99: rank 99, the end of that bucket.
    expect(hour!.p95).toBeCloseTo(0.1 + 0.15 * (5 / 9), 12);
    expect(hour!.p99).toBeCloseTo(0.25, 12);
    expect(other).toMatchObject({ route: 'POST /v1/other', count: 1 });
    expect(other!.hours[0]!.p50).toBeCloseTo(0.025 + 0.025 * 0.5, 12);
    // Only the busiest `top` are answered.
    expect(history.routes(start, new Date(start.getTime() + 3_600_000), 1)).toHaveLength(1);
  });

  it('keeps at most a day of samples, in time order, and samples on its timer until stopped', async () => {
    const history = new RequestHistory(new RequestTally(new Registry()));
    const base = Date.UTC(2030, 0, 1);
    for (let i = 0; i < HISTORY_LIMIT + 60; i++) history.sample(new Date(base + i * 60_000));
    expect(history.size).toBe(HISTORY_LIMIT);
    history.sample(new Date(base));
    expect(history.size).toBe(HISTORY_LIMIT);

    const timed = new RequestHistory(new RequestTally(new Registry()));
    let ticks = 0;
    const clock = () => {
      ticks += 1;
      return new Date(base + ticks * 1000);
    };
    timed.start(5, clock);
    timed.start(5, clock);
    await new Promise((resolve) => setTimeout(resolve, 60));
    timed.stop();
    const taken = timed.size;
    expect(taken).toBeGreaterThan(2);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(timed.size).toBe(taken);
  });
});

describeStores('the console Charts page on %s', (store) => {
  let t: TestApp;
  const suffix = randomBytes(4).toString('hex');
  const steady = `steady-${suffix}`;
  const shaky = `shaky-${suffix}`;
  const accounts: Record<'viewer' | 'operator', { name: string; credential: string }> = {} as never;

  beforeAll(async () => {
    t = await buildTestApp(store);
    for (const role of ['viewer', 'operator'] as const) {
      const name = `${role}-${suffix}`;
      const res = await adminInject(t, 'POST', '/admin/operators', { name, role });
      accounts[role] = { name, credential: (res.json() as { credential: string }).credential };
    }
    // The sampler started with the admin app (its first sample at once).
    expect(t.ctx.metrics.history.size).toBeGreaterThanOrEqual(1);
    t.ctx.clock = () => NOW;
    await seedPayments(t, NOW, [
      // The current hour (12:00): 3 succeeded, 1 failed, with send latencies.
      { adapter: steady, minutesAgo: 5, status: 'SUCCESS', latencyMs: 100 },
      { adapter: steady, minutesAgo: 10, status: 'SUCCESS', latencyMs: 200 },
      { adapter: steady, minutesAgo: 15, status: 'SUCCESS', latencyMs: 300 },
      { adapter: steady, minutesAgo: 20, status: 'FAILED', latencyMs: 400 },
      // 10:00: 2 succeeded, 1 still waiting.
      { adapter: steady, minutesAgo: 145, status: 'SUCCESS' },
      { adapter: steady, minutesAgo: 140, status: 'SUCCESS' },
      { adapter: steady, minutesAgo: 135, status: 'PENDING' },
      // 13:00 yesterday, the window's first hour: one cancelled; 11:00 yesterday is outside.
      { adapter: steady, minutesAgo: 23 * 60 + 20, status: 'CANCELLED' },
      { adapter: steady, minutesAgo: 25 * 60, status: 'SUCCESS' },
      // The other provider, 11:44 to 12:28: 9 of 12 succeeded (75%, under the 90% threshold).
      ...Array.from({ length: 12 }, (_, i) => ({
        adapter: shaky,
        minutesAgo: 2 + i * 4,
        status: i < 9 ? ('SUCCESS' as const) : ('FAILED' as const),
        latencyMs: 1000 + i * 100,
      })),
    ]);
  });
  afterAll(() => t?.close());

  const client = consoleClient(() => t);
  const { visit } = client;
  async function signIn(role: 'viewer' | 'operator'): Promise<Browser> {
    const { browser, res } = await client.signIn(accounts[role].name, accounts[role].credential);
    expect(res.statusCode).toBe(303);
    return browser;
  }

  /** The rows of the table with this caption, each cell's text. */
  function tableRows(body: string, caption: string): string[][] {
    const at = body.indexOf(`<caption>${caption}</caption>`);
    if (at < 0) return [];
    const tbody = body.slice(at, body.indexOf('</tbody>', at));
    return [...tbody.matchAll(/<tr>([\s\S]*?)<\/tr>/g)]
      .slice(1)
      .map(([, row]) => [...row!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map(([, cell]) => cell!));
  }

  it('payments per provider per hour: the figures equal SQL over the store', async () => {
    const res = await visit(await signIn('viewer'), 'GET', '/console/charts');
    expect(res.statusCode).toBe(200);
    const expected = await rows<{ hour: string; count: number; succeeded: number; failed: number }>(
      t.ctx.database.db,
      sql`select to_char(pr.created_at at time zone 'UTC', 'YYYY-MM-DD HH24') || ':00Z' as hour, count(*)::int as count,
  sum(case when t.status = 'SUCCESS' then 1 else 0 end)::int as succeeded,
  sum(case when t.status in ('FAILED', 'CANCELLED') then 1 else 0 end)::int as failed
from provider_requests pr, transactions t
where t.id = pr.transaction_id and pr.adapter = ${steady}
  and pr.created_at >= '2030-01-14T13:00:00Z' and pr.created_at < '2030-01-15T12:30:00Z'
group by 1 order by 1`,
    );
    const rate = (s: number, f: number) => (s + f === 0 ? '—' : `${((s / (s + f)) * 100).toFixed(1)}%`);
    expect(tableRows(res.body, `Payments through ${steady} per hour (UTC)`)).toEqual(
      expected.map((r) => [
        r.hour,
        String(r.count),
        String(r.succeeded),
        String(r.failed),
        String(r.count - r.succeeded - r.failed),
        rate(r.succeeded, r.failed),
      ]),
    );
    // And the literal figures seeded.
    expect(expected.map((r) => [r.hour, r.count, r.succeeded, r.failed])).toEqual([
      ['2030-01-14 13:00Z', 1, 0, 1],
      ['2030-01-15 10:00Z', 3, 2, 0],
      ['2030-01-15 12:00Z', 4, 3, 1],
    ]);
    expect(tableRows(res.body, `Payments through ${shaky} per hour (UTC)`)).toEqual([
      ['2030-01-15 11:00Z', '4', '1', '3', '0', '25.0%'],
      ['2030-01-15 12:00Z', '8', '8', '0', '0', '100.0%'],
    ]);
    // Each chart is a figure with a caption, an SVG image with a summary, and its table in <details>.
    expect(res.body).toContain(`<figcaption>${steady}: payments per hour and success rate</figcaption>`);
    expect(res.body).toContain(
      `aria-label="Payments per hour through ${steady} over the last 24 hours: 8 payments, 5 succeeded, 2 failed, success rate 71.4%."`,
    );
    expect(res.body).toMatch(/<details><summary>The figures<\/summary>/);
  });

  it('requests per route: rate and percentiles from the sampled tally', async () => {
    const history = t.ctx.metrics.history;
    history.sample(new Date('2030-01-15T11:00:00Z'));
    for (let i = 0; i < 30; i++) t.ctx.metrics.requests.record(`/v1/charts-${suffix}`, 'GET', 200, 0.02);
    history.sample(new Date('2030-01-15T11:01:00Z'));
    const res = await visit(await signIn('viewer'), 'GET', '/console/charts');
    expect(tableRows(res.body, 'Responses per route and hour (UTC)')).toContainEqual([
      `GET /v1/charts-${suffix}`,
      '2030-01-15 11:00Z',
      '30',
      '30.00',
    ]);
    // All 30 in (0.01, 0.025]: p50 at rank 15 is 17.5 ms, p95 24.25 ms, p99 24.85 ms (rounded).
    expect(tableRows(res.body, 'Latency percentiles per route and hour (UTC)')).toContainEqual([
      `GET /v1/charts-${suffix}`,
      '2030-01-15 11:00Z',
      '18',
      '24',
      '25',
    ]);
    expect(res.body).toContain('<figcaption>Requests per minute, the');
  });

  it('the SVG carries no script, no style and no outside address; the page is for a viewer to read', async () => {
    const viewer = await signIn('viewer');
    const res = await visit(viewer, 'GET', '/console/charts');
    expect(res.statusCode).toBe(200);
    const svgs = res.body.match(/<svg[\s\S]*?<\/svg>/g) ?? [];
    expect(svgs.length).toBeGreaterThanOrEqual(4);
    for (const svg of svgs) {
      expect(svg).toMatch(/^<svg class="chart" role="img" aria-label="[^"]+"/);
      expect(svg).not.toMatch(/<script|<style|\sstyle=|\son[a-z]+=|<foreignObject|<image|href=/i);
      expect(svg).not.toMatch(/https?:|\/\/|url\((?!#)/i);
    }
    expect(res.body).not.toMatch(/<script|<style|\sstyle=|\son[a-z]+=/i);
    expect(res.body).not.toMatch(/https?:\/\//);
    // The same option draws the same picture (animation off, stable ids).
    const again = await visit(viewer, 'GET', '/console/charts');
    expect(again.body.match(/<svg[\s\S]*?<\/svg>/g)).toEqual(svgs);
    // Nothing to change on this page: no form beyond sign-out.
    expect(res.body.match(/<form /g)).toHaveLength(1);
    // A day with nothing in it says so in words, with no chart (signed in anew: the clock moved on).
    t.ctx.clock = () => new Date('2031-06-01T00:00:00Z');
    const empty = await visit(await signIn('viewer'), 'GET', '/console/charts');
    t.ctx.clock = () => NOW;
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toContain('No payments in the last 24 hours.');
    expect(empty.body).toContain('No requests sampled in the last 24 hours.');
    expect(empty.body).not.toContain('<svg');
    const anonymous = await t.admin.inject({ method: 'GET', url: '/console/charts' });
    expect(anonymous.statusCode).toBe(303);
    expect(anonymous.headers.location).toBe('/console/sign-in');
  });

  it("the Overview shows each provider's success rate and p95 over the last hour, red under 90%", async () => {
    const res = await visit(await signIn('operator'), 'GET', '/console');
    expect(res.statusCode).toBe(200);
    const row = (adapter: string) =>
      new RegExp(
        `<tr class="(\\w+)"><th scope="row">Provider ${adapter}: last hour</th>\\s*<td>([^<]*)<br><small>([^<]*)</small>`,
      ).exec(res.body);
    // steady: 3 of 4 finished succeeded, but 4 is too few to call; p95 of 100..400 ms is 385.
    expect(row(steady)?.slice(1)).toEqual([
      'ok',
      'success 75.0%, p95 385 ms',
      '4 payments, 3 succeeded, 1 failed',
    ]);
    // shaky: 9 of 12 finished in the last hour (from 11:30) succeeded: 75%, at least 10 finished: red.
    const lastHour = await rows<{ p95: number }>(
      t.ctx.database.db,
      sql`select percentile_cont(0.95) within group (order by e.latency_ms) as p95 from provider_exchanges e
  join provider_requests pr on pr.id = e.provider_request_id
  where pr.adapter = ${shaky} and e.at >= '2030-01-15T11:30:00Z' and e.at < '2030-01-15T12:30:00Z'`,
    );
    const shakyRow = row(shaky);
    expect(shakyRow?.[1]).toBe('attention');
    expect(shakyRow?.[3]).toBe('12 payments, 9 succeeded, 3 failed');
    expect(Number(lastHour[0]!.p95)).toBe(2045);
    expect(shakyRow?.[2]).toBe(`success 75.0%, p95 ${Math.round(Number(lastHour[0]!.p95))} ms`);
  });
});
