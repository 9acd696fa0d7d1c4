import type { FakeCore, SentCallback } from './core.ts';
import type { Answer, Listening } from './http.ts';
import type { TokenStore } from './tokens.ts';

/** Control routes by `METHOD /__fake/...`; each gets the request's JSON object (or `{}`). */
export type ControlRoutes = Record<string, (body: Record<string, unknown>) => Answer>;

// biome-ignore lint/suspicious/noExplicitAny: any fake's core, whatever its operations and logs.
type AnyCore = FakeCore<any, any, any, SentCallback>;

/**
 * The control API every fake serves, for tests and for an operator rehearsing by hand:
 * `POST /__fake/queue` `{operation, scenario}`, `POST /__fake/expire-tokens`, `GET /__fake/state`
 * (the request log, the callbacks and the counters, unless the fake tells more).
 */
export function commonControl(
  core: AnyCore,
  tokens: TokenStore,
  state: () => unknown = () => ({
    requests: core.requests,
    callbacks: core.callbacks,
    processed: core.processedCounts(),
  }),
): ControlRoutes {
  return {
    'POST /__fake/queue': ({ operation, scenario }) => {
      if (!operation || !scenario)
        return { status: 400, body: { error: 'operation and scenario are required' } };
      core.queue(operation, scenario);
      return { status: 200, body: { queued: { operation, scenario } } };
    },
    'POST /__fake/expire-tokens': () => {
      tokens.expireAll();
      return { status: 200, body: { expired: true } };
    },
    'GET /__fake/state': () => ({ status: 200, body: state() }),
  };
}

/** What every fake hands its tests: where it listens, its logs and counters, and its controls. */
export type FakeApi<Operation, Scenario, Request, Callback> = {
  url: string;
  port: number;
  /** Everything received, in order (control requests aside). */
  requests: Request[];
  /** Every callback made, in order. */
  callbacks: Callback[];
  /** Requests of `operation` that were processed (a prompt sent, a payout made): not refused ones. */
  processed(operation: Operation): number;
  /** The next request of `operation` gets `scenario`, before anything the request itself says. */
  queue(operation: Operation, scenario: Scenario): void;
  /** Every token issued so far is refused from now on (a token that expired early). */
  expireTokens(): void;
  /** Resolves once `count` callbacks have been sent (or rejects after `timeoutMs`, default 5 s). */
  waitForCallbacks(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
};

export function commonApi<
  Operation extends string,
  Scenario extends string,
  Request,
  Callback extends SentCallback,
>(
  core: FakeCore<Operation, Scenario, Request, Callback>,
  tokens: TokenStore,
  server: Listening,
): FakeApi<Operation, Scenario, Request, Callback> {
  return {
    url: server.url,
    port: server.port,
    requests: core.requests,
    callbacks: core.callbacks,
    processed: (operation) => core.processed(operation),
    queue: (operation, scenario) => core.queue(operation, scenario),
    expireTokens: () => tokens.expireAll(),
    waitForCallbacks: (count, timeoutMs) => core.waitForCallbacks(count, timeoutMs),
    close: () => server.close(),
  };
}
