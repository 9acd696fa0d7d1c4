/**
 * The load of `bench/instructions.sh` for GET /v1/webhooks/key and the bare Fastify: one autocannon
 * run of WARM + REQUESTS requests on 10 connections. Counting is switched on (`callgrind_control -i
 * on`) at the WARM-th response and off after the last, so the warm-up and the count share their
 * connections: a load on new connections can make V8 deoptimise and recompile code, work that
 * belongs to the connections and not to the requests (docs/performance.md, "How noisy an
 * instruction count is"). Prints the responses counted, which the script divides by: the requests
 * in flight when counting starts are counted whole.
 *
 *   npx tsx bench/instructions-load.ts URL PID WARM REQUESTS
 */
import { execFileSync } from 'node:child_process';
import autocannon from 'autocannon';

const [url = '', pid = '', warmText = '', requestsText = ''] = process.argv.slice(2);
const warm = Number(warmText);
const requests = Number(requestsText);
if (!url || !pid || !(warm > 0) || !(requests > 0)) {
  console.error('usage: instructions-load.ts URL PID WARM REQUESTS');
  process.exit(2);
}
const callgrind = (state: 'on' | 'off') =>
  execFileSync('callgrind_control', ['-i', state, pid], { stdio: 'ignore' });

let answered = 0;
let counted = 0;
let failed = 0;
const onResponse = (status: number) => {
  if (status !== 200) failed++;
  if (answered < warm && ++answered === warm) callgrind('on');
  else if (answered >= warm) counted++;
};
const result = await autocannon({
  url,
  connections: 10,
  pipelining: 1,
  timeout: 120,
  amount: warm + requests,
  requests: [{ onResponse }],
});
callgrind('off');
if (failed > 0 || result.errors > 0 || result.timeouts > 0) {
  console.error(`${failed} responses not 200, ${result.errors} errors, ${result.timeouts} timeouts`);
  process.exit(1);
}
console.log(`counted=${counted}`);
