import { afterEach, describe, expect, it } from 'vitest';
import {
  commonApi,
  commonControl,
  type FakeApi,
  FakeCore,
  type SentCallback,
  serveFake,
  TokenStore,
} from '../src/kit/index.ts';

type Op = 'echo';
type Scenario = 'success' | 'reset' | 'slow';
type Logged = { path: string; scenario: Scenario | null; status: number | null };

/** A one-route fake on the kit: `POST /echo` answers its body, or what the queued scenario says. */
async function startEchoFake(): Promise<FakeApi<Op, Scenario, Logged, SentCallback>> {
  const core = new FakeCore<Op, Scenario, Logged, SentCallback>('fake Echo');
  const tokens = new TokenStore();
  const server = await serveFake(
    core,
    { slowResponseMs: 50 },
    {
      describe: ({ url }) => ({ path: url.pathname, scenario: null, status: null }),
      answer: ({ body }, request) => {
        if (!tokens.accepts('Bearer open')) return { status: 401, body: { error: 'token' } };
        request.scenario = core.takeQueued('echo') ?? 'success';
        core.markProcessed('echo');
        return { status: 200, body: { echo: body ?? null } };
      },
      control: commonControl(core, tokens),
      controlNotFound: () => ({ status: 404, body: { error: 'no such control' } }),
      crashBody: (err) => ({ error: String(err) }),
    },
  );
  tokens.issue('open', 60, false, {});
  return commonApi(core, tokens, server);
}

const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('the fake-server kit', () => {
  let fake: FakeApi<Op, Scenario, Logged, SentCallback>;
  afterEach(() => fake.close());

  it('answers, logs the request and counts it; control requests are not logged', async () => {
    fake = await startEchoFake();
    const answer = await post(`${fake.url}/echo`, { a: 1 });
    expect(await answer.json()).toEqual({ echo: { a: 1 } });
    const state = await (await fetch(`${fake.url}/__fake/state`)).json();
    expect(state).toEqual({
      requests: [{ path: '/echo', scenario: 'success', status: 200 }],
      callbacks: [],
      processed: { echo: 1 },
    });
    expect(fake.processed('echo')).toBe(1);
    expect((await fetch(`${fake.url}/__fake/nothing`)).status).toBe(404);
  });

  it('queues a scenario over the control API: reset destroys the connection', async () => {
    fake = await startEchoFake();
    const refused = await post(`${fake.url}/__fake/queue`, { operation: 'echo' });
    expect([refused.status, await refused.json()]).toEqual([
      400,
      { error: 'operation and scenario are required' },
    ]);
    const queued = await post(`${fake.url}/__fake/queue`, { operation: 'echo', scenario: 'reset' });
    expect(await queued.json()).toEqual({ queued: { operation: 'echo', scenario: 'reset' } });
    await expect(post(`${fake.url}/echo`, {})).rejects.toThrow();
    expect(fake.requests[0]).toMatchObject({ scenario: 'reset', status: null });
  });

  it('expires every token issued, from the control API', async () => {
    fake = await startEchoFake();
    expect((await post(`${fake.url}/__fake/expire-tokens`, {})).status).toBe(200);
    expect((await post(`${fake.url}/echo`, {})).status).toBe(401);
    expect(fake.processed('echo')).toBe(0);
  });

  it('logs a callback with our route status, or the error that stopped it', async () => {
    const core = new FakeCore<Op, Scenario, Logged, SentCallback>('fake Echo');
    fake = await startEchoFake();
    const waiting = core.waitForCallbacks(2, 2000);
    await core.sendCallback({ url: `${fake.url}/echo`, body: {}, status: null, error: null });
    await core.sendCallback({ url: 'http://127.0.0.1:1/', body: {}, status: null, error: null });
    await waiting;
    expect(core.callbacks.map((c) => [c.status, c.error === null])).toEqual([
      [200, true],
      [null, false],
    ]);
    await expect(core.waitForCallbacks(3, 20)).rejects.toThrow('fake Echo: 2 of 3 callbacks after 20 ms');
    core.stop();
  });
});
