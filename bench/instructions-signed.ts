/**
 * The load of `bench/instructions.sh --signed`: a bench partner of the server under callgrind, 100
 * customers created through the API as `npm run bench` creates them, then signed GET /v1/customers/{id} as scenario 1 sends them,
 * each request signed beforehand and sent once. Counting is switched on (`callgrind_control -i on`)
 * after the warm-up and off after the counted requests. Each phase is signed just before it runs:
 * under valgrind a phase lasts minutes, and a signature is valid for 300 s.
 *
 *   npx tsx bench/instructions-signed.ts BASE_URL ADMIN_URL ADMIN_TOKEN PID WARM REQUESTS
 */
import { execFileSync } from 'node:child_process';
import { runLoad } from './lib/load.ts';
import { createBenchPartner, createCustomers, signed } from './lib/partner.ts';

const [baseUrl = '', adminUrl = '', adminToken = '', pidText, warmText, requestsText] = process.argv.slice(2);
if (!baseUrl || !adminUrl || !adminToken || !pidText || !warmText || !requestsText) {
  console.error('usage: instructions-signed.ts BASE_URL ADMIN_URL ADMIN_TOKEN PID WARM REQUESTS');
  process.exit(2);
}
const pid = Number(pidText);
// The bench's address (RFC 2544's benchmarking range), trusted through TRUST_PROXY=127.0.0.1.
const partner = await createBenchPartner(
  { baseUrl, adminUrl, adminToken },
  { 'x-forwarded-for': '198.18.0.1' },
);

const customerIds = await createCustomers(partner, 100);

/** `count` signed GETs over the 100 customers, 10 connections as the key route's count uses. */
async function load(count: number) {
  const pool = Array.from({ length: count }, (_, i) =>
    signed(partner, 'GET', `/v1/customers/${customerIds[i % customerIds.length]}`),
  );
  const result = await runLoad({ url: baseUrl, pid, connections: 10, expectStatus: 200, pool });
  if (result.errors > 0) throw new Error(`answered ${JSON.stringify(result.statuses)}`);
  return result;
}

await load(Number(warmText));
execFileSync('callgrind_control', ['-i', 'on', String(pid)], { stdio: 'ignore' });
const counted = await load(Number(requestsText));
execFileSync('callgrind_control', ['-i', 'off', String(pid)], { stdio: 'ignore' });
console.log(`${counted.ok} signed GETs answered 200 in ${counted.seconds.toFixed(1)} s`);
