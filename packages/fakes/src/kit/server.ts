import type { ControlRoutes } from './control.ts';
import type { LoggedRequest } from './core.ts';
import { type Answer, type Listening, listen, type Received, receive, writeAnswer } from './http.ts';
import { isObject } from './values.ts';

export type FakeHandlers<Request extends LoggedRequest> = {
  /** The log entry of a request to the provider's API (control requests are not logged). */
  describe(received: Received): Request;
  /** The provider's answer; it sets `request.scenario` only once the request passed its checks. */
  answer(received: Received, request: Request): Answer;
  control: ControlRoutes;
  /** The answer to a `/__fake/` path no control route serves. */
  controlNotFound(): Answer;
  /** The provider's 500 body when a handler throws. */
  crashBody(err: unknown): unknown;
};

/**
 * Serves a fake: `/__fake/` paths go to its control routes, every other request is logged and
 * answered by the provider's handlers. The `reset` and `slow` scenarios act here, after the answer
 * is made, so they act on real work: the connection is destroyed, or the answer waits
 * `slowResponseMs` (past the client's timeout). Closing stops `core` (its timers and callbacks).
 */
export function serveFake<Request extends LoggedRequest>(
  core: { requests: Request[]; sleep(ms: number): Promise<void>; stop(): void },
  options: { host?: string; port?: number; slowResponseMs: number },
  handlers: FakeHandlers<Request>,
): Promise<Listening> {
  const controlAnswer = ({ method, url, body }: Received): Answer => {
    const route = handlers.control[`${method} ${url.pathname}`];
    return route ? route(isObject(body) ? body : {}) : handlers.controlNotFound();
  };
  const server = listen(
    options,
    async (req, res) => {
      const received = await receive(req);
      let request: Request | null = null;
      let answer: Answer;
      if (received.url.pathname.startsWith('/__fake/')) answer = controlAnswer(received);
      else {
        request = handlers.describe(received);
        core.requests.push(request);
        answer = handlers.answer(received, request);
      }
      if (request?.scenario === 'reset') {
        req.socket.destroy();
        return;
      }
      if (request?.scenario === 'slow') await core.sleep(options.slowResponseMs);
      if (request) request.status = answer.status;
      if (res.destroyed) return;
      writeAnswer(res, answer);
    },
    handlers.crashBody,
  );
  return server.then((listening) => ({
    ...listening,
    async close() {
      core.stop();
      await listening.close();
    },
  }));
}
