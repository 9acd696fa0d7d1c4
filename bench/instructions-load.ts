/**
 * The load of `bench/instructions.sh`: one autocannon run of WARM + REQUESTS requests on 10
 * connections. Counting is switched on (`callgrind_control -i on`) at the WARM-th response and off
 * after the last, so the warm-up and the count share their connections: a load on new connections
 * can make V8 deoptimise and recompile code, work that belongs to the connections and not to the
 * requests (docs/performance.md, "How noisy an instruction count is"). The count is divided by the
 * responses counted: the requests in flight when counting starts are counted whole.
 *
 * GET /v1/webhooks/key and the bare Fastify send one fixed request (this file's command line);
 * the signed routes (bench/instructions-signed.ts) make each request as it is sent, so that no
 * signature is older than its request's turn (a signature lives 300 s, and under valgrind a load
 * of 28,000 requests lasts minutes).
 *
 *   npx tsx bench/instructions-load.ts URL PID WARM REQUESTS      # prints counted=N
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import type { PreparedRequest } from './lib/load.ts';

export type CountedLoad = {
  url: string;
  pid: string;
  warm: number;
  requests: number;
  expectStatus: number;
  /** The i-th request, made just before it is sent; a plain GET of `url` when absent. */
  request?: (i: number) => PreparedRequest;
};

/** Runs the load; returns the responses counted, or throws when any was not `expectStatus`. */
export async function countedLoad(options: CountedLoad): Promise<number> {
  const { pid, warm, requests, request } = options;
  const callgrind = (state: 'on' | 'off') =>
    execFileSync('callgrind_control', ['-i', state, pid], { stdio: 'ignore' });
  let answered = 0;
  let counted = 0;
  let failed = 0;
  let made = 0;
  const onResponse = (status: number) => {
    if (status !== options.expectStatus) failed++;
    if (answered < warm && ++answered === warm) callgrind('on');
    else if (answered >= warm) counted++;
  };
  const result = await autocannon({
    url: options.url,
    connections: 10,
    pipelining: 1,
    timeout: 120,
    amount: warm + requests,
    requests: [
      request
        ? { setupRequest: (base: autocannon.Request) => ({ ...base, ...request(made++) }), onResponse }
        : { onResponse },
    ],
  });
  callgrind('off');
  if (failed > 0 || result.errors > 0 || result.timeouts > 0)
    throw new Error(
      `${failed} responses not ${options.expectStatus}, ${result.errors} errors, ${result.timeouts} timeouts`,
    );
  return counted;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [url = '', pid = '', warmText = '', requestsText = ''] = process.argv.slice(2);
  const warm = Number(warmText);
  const requests = Number(requestsText);
  if (!url || !pid || !(warm > 0) || !(requests > 0)) {
    console.error('usage: instructions-load.ts URL PID WARM REQUESTS');
    process.exit(2);
  }
  const counted = await countedLoad({ url, pid, warm, requests, expectStatus: 200 });
  console.log(`counted=${counted}`);
}
