import { buildTestApp } from '@partner-api/testkit/app.ts';
import { NOT_FOUND_BODY } from '@partner-api/testkit/helpers.ts';
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { RequestTally } from '../../src/lib/metrics.ts';

// The request metrics are counted in a plain map and handed to prom-client when read
// (lib/metrics.ts): what /metrics shows must be what prom-client's own Counter and Histogram show
// for the same responses.
const BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const RESPONSES: [route: string, method: string, status: number, seconds: number][] = [
  ['/v1/customers/:customerId', 'GET', 200, 0.0031],
  ['/v1/customers/:customerId', 'GET', 200, 0.002], // on a bound: counted in that bound
  ['/v1/customers/:customerId', 'GET', 404, 0.0009],
  ['/v1/customers/:customerId', 'PATCH', 200, 0.04],
  ['/v1/customers', 'POST', 201, 0.5],
  ['/v1/customers', 'POST', 409, 0],
  ['/v1/webhooks/key', 'GET', 200, 3.7], // above the last bound: +Inf only
  ['unmatched', 'GET', 404, 0.0001],
  ['/v1/customers/:customerId', 'GET', 200, 0.26],
];

function reference() {
  const registry = new Registry();
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by route, method and status',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency',
    labelNames: ['route', 'method'],
    buckets: BUCKETS,
    registers: [registry],
  });
  return {
    registry,
    record(route: string, method: string, status: number, seconds: number) {
      requests.inc({ route, method, status: String(status) });
      latency.observe({ route, method }, seconds);
    },
  };
}

function tallied() {
  const registry = new Registry();
  const tally = new RequestTally(registry);
  return { registry, record: tally.record.bind(tally) };
}

/** Ours and prom-client's, each having counted the same responses. */
function bothAfter(responses: typeof RESPONSES) {
  const pair = [tallied(), reference()] as const;
  for (const response of responses) for (const side of pair) side.record(...response);
  return pair;
}

async function asJson(registry: Registry) {
  return (await registry.getMetricsAsJSON()).map((metric) => ({
    ...metric,
    values: metric.values.map((v) => ({
      labels: v.labels,
      value: v.value,
      name: (v as { metricName?: string }).metricName,
    })),
  }));
}

describe('request metrics counted when read (lib/metrics.ts)', () => {
  it("shows what prom-client's Counter and Histogram show for the same responses", async () => {
    const [ours, theirs] = bothAfter(RESPONSES);
    expect(await ours.registry.metrics()).toBe(await theirs.registry.metrics());
    // The JSON form too, but for the exemplars (off, so prom-client's are all null).
    expect(await asJson(ours.registry)).toEqual(await asJson(theirs.registry));
    // Read twice, the counter is not counted twice.
    expect(await ours.registry.metrics()).toBe(await theirs.registry.metrics());
    const text = await ours.registry.metrics();
    expect(text).toContain(
      'http_requests_total{route="/v1/customers/:customerId",method="GET",status="200"} 3',
    );
    expect(text).toContain(
      'http_request_duration_seconds_bucket{le="0.002",route="/v1/customers/:customerId",method="GET"} 2',
    );
    expect(text).toContain(
      'http_request_duration_seconds_bucket{le="2.5",route="/v1/webhooks/key",method="GET"} 0',
    );
    expect(text).toContain(
      'http_request_duration_seconds_bucket{le="+Inf",route="/v1/webhooks/key",method="GET"} 1',
    );
  });

  it('starts over when the registry is reset, as prom-client does', async () => {
    const [ours, theirs] = bothAfter(RESPONSES);
    ours.registry.resetMetrics();
    theirs.registry.resetMetrics();
    ours.record(...RESPONSES[0]!);
    theirs.record(...RESPONSES[0]!);
    expect(await ours.registry.metrics()).toBe(await theirs.registry.metrics());
  });
});

describe('where /metrics is served', () => {
  it('production: only on the admin listener, with the admin token; the public port answers as for an unknown route', async () => {
    const t = await buildTestApp('pglite', {}, { production: true });
    try {
      await t.app.inject({ method: 'GET', url: '/healthz' });
      const open = await t.app.inject({ method: 'GET', url: '/metrics' });
      expect([open.statusCode, open.body]).toEqual([404, NOT_FOUND_BODY]);
      const anonymous = await t.admin.inject({ method: 'GET', url: '/metrics' });
      expect(anonymous.statusCode).toBe(401);
      const scraped = await t.admin.inject({
        method: 'GET',
        url: '/metrics',
        headers: { authorization: `Bearer ${t.ctx.secrets.adminToken}` },
      });
      expect(scraped.statusCode).toBe(200);
      expect(scraped.headers['content-type']).toMatch(/^text\/plain/);
      expect(scraped.body).toContain('http_requests_total');
    } finally {
      await t.close();
    }
  });

  it('sandbox: public, as before (and on the admin listener too)', async () => {
    const t = await buildTestApp('pglite');
    try {
      const open = await t.app.inject({ method: 'GET', url: '/metrics' });
      expect(open.statusCode).toBe(200);
      expect(open.body).toContain('http_requests_total');
    } finally {
      await t.close();
    }
  });
});
