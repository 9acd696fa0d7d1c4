import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  FinalStatus,
  PaymentAdapter,
  ProviderRequest,
  QueryResult,
  SendResult,
} from '../../../src/services/payments/pipeline/adapter.ts';
import type { ExchangeRecord } from '../../../src/services/payments/providers/outcome.ts';

/**
 * A tiny provider over HTTP for the pipeline's tests: it counts how many times it acted on each of
 * our request ids (moved the money), and answers each send or query as the test planned it.
 * - send plans: `accept` (acts, 200 with its ids), `reject` (400, does nothing), `ambiguous-received`
 *   (acts, then answers 500), `ambiguous-lost` (500, does nothing), `not-sent` (503, as when no token
 *   could be had), `hang-received` (acts, never answers: the caller's process "dies" after the call).
 * - query plans: `truth` (what it did: its final status, or 404 when it never acted), `pending`,
 *   `unknown` (500), or a final status to say.
 */
export type SendPlan =
  | 'accept'
  | 'reject'
  | 'ambiguous-received'
  | 'ambiguous-lost'
  | 'not-sent'
  | 'hang-received';
export type QueryPlan = 'truth' | 'pending' | 'unknown' | { final: FinalStatus };

export async function startCountingProvider(options: { outcome?: FinalStatus | 'PENDING' } = {}) {
  const acted = new Map<string, number>();
  const calls: Array<{ op: 'send' | 'query'; id: string }> = [];
  const sendPlans: SendPlan[] = [];
  const queryPlans: QueryPlan[] = [];
  const hung = new Set<ServerResponse>();
  const act = (id: string) => acted.set(id, (acted.get(id) ?? 0) + 1);
  const reply = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => {
      raw += chunk;
    });
    req.on('end', () => {
      const { id } = JSON.parse(raw) as { id: string };
      if (req.url === '/send') {
        calls.push({ op: 'send', id });
        const plan = sendPlans.shift() ?? 'accept';
        if (plan === 'accept') {
          act(id);
          return reply(res, 200, { providerIds: { ref: `P-${id}` } });
        }
        if (plan === 'reject') return reply(res, 400, { reason: 'refused by the provider' });
        if (plan === 'ambiguous-received') act(id);
        if (plan === 'ambiguous-received' || plan === 'ambiguous-lost') return reply(res, 500, {});
        if (plan === 'not-sent') return reply(res, 503, { reason: 'no token' });
        act(id);
        hung.add(res);
        return;
      }
      calls.push({ op: 'query', id });
      const plan = queryPlans.shift() ?? 'truth';
      if (plan === 'unknown') return reply(res, 500, {});
      if (plan === 'pending') return reply(res, 200, { status: 'PENDING' });
      if (typeof plan === 'object') return reply(res, 200, { status: plan.final, receipt: `R-${id}` });
      if (!acted.has(id)) return reply(res, 404, {});
      return reply(res, 200, { status: options.outcome ?? 'SUCCESS', receipt: `R-${id}` });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    acted,
    calls,
    planSends: (...plans: SendPlan[]) => sendPlans.push(...plans),
    planQueries: (...plans: QueryPlan[]) => queryPlans.push(...plans),
    /** Ends every hung answer (the abandoned caller then sees a reset). */
    releaseHung() {
      for (const res of hung) res.destroy();
      hung.clear();
    },
    async close() {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type CountingProvider = Awaited<ReturnType<typeof startCountingProvider>>;

/** A PaymentAdapter over HTTP to the counting provider, mapping answers as a real adapter does. */
export function countingAdapter(
  url: string,
  options: { name: string; reconcileAfterMs?: number; timeoutMs?: number },
): PaymentAdapter {
  const post = async (
    operation: 'send' | 'query',
    request: ProviderRequest,
  ): Promise<{ status: number | null; body: Record<string, string>; exchange: ExchangeRecord }> => {
    const startedAt = new Date();
    const requestBody = { id: request.id, amount: request.amount.amount.toFixed(2) };
    let status: number | null = null;
    let body: Record<string, string> = {};
    let error: string | null = null;
    try {
      const res = await fetch(`${url}/${operation}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(requestBody),
        signal: AbortSignal.timeout(options.timeoutMs ?? 3000),
      });
      status = res.status;
      body = (await res.json()) as Record<string, string>;
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
    }
    const exchange: ExchangeRecord = {
      provider: options.name,
      operation,
      method: 'POST',
      path: `/${operation}`,
      requestBody,
      status,
      responseBody: body,
      startedAt,
      latencyMs: Date.now() - startedAt.getTime(),
      error,
    };
    return { status, body, exchange };
  };
  return {
    name: options.name,
    reconcileAfterMs: options.reconcileAfterMs ?? 1000,
    async send(request): Promise<SendResult> {
      const { status, body, exchange } = await post('send', request);
      const exchanges = [exchange];
      if (status === 200) return { kind: 'accepted', providerIds: body.providerIds as never, exchanges };
      if (status === 400) return { kind: 'rejected', reason: body.reason ?? 'refused', exchanges };
      if (status === 503) return { kind: 'not-sent', reason: body.reason ?? 'not sent', exchanges };
      return { kind: 'ambiguous', reason: status === null ? 'timeout' : `HTTP ${status}`, exchanges };
    },
    async query(request): Promise<QueryResult> {
      const { status, body, exchange } = await post('query', request);
      const exchanges = [exchange];
      if (status === 404) return { kind: 'not-found', exchanges };
      if (status !== 200)
        return { kind: 'unknown', reason: status === null ? 'timeout' : `HTTP ${status}`, exchanges };
      if (body.status === 'PENDING') return { kind: 'pending', exchanges };
      return {
        kind: 'final',
        status: body.status as FinalStatus,
        receipt: body.receipt,
        ...(body.status === 'SUCCESS' ? {} : { reason: `provider says ${body.status}` }),
        exchanges,
      };
    },
  };
}
