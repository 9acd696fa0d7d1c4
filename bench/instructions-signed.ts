/**
 * The load of `bench/instructions.sh --signed` and `--post`: a bench partner of the server under
 * callgrind, 100 customers created through the API as `npm run bench` creates them, then signed GET
 * /v1/customers/{id} as scenario 1 sends them (`get`), or signed idempotent POST /v1/customers as
 * scenario 3 sends them, a new key and customer each (`post`). Each request is signed beforehand and
 * sent once. Counting is switched on (`callgrind_control -i on`) after the warm-up and off after the
 * counted requests. Each phase is signed just before it runs: under valgrind a phase lasts minutes,
 * and a signature is valid for 300 s.
 *
 *   npx tsx bench/instructions-signed.ts BASE_URL ADMIN_URL ADMIN_TOKEN PID WARM REQUESTS [get|post]
 */
import { execFileSync } from 'node:child_process';
import { runLoad } from './lib/load.ts';
import { createBenchPartner, createCustomers, signed, signedCreate } from './lib/partner.ts';

const args = process.argv.slice(2);
const [baseUrl = '', adminUrl = '', adminToken = '', pidText, warmText, requestsText, mode = 'get'] = args;
if (args.length < 6 || args.slice(0, 6).some((arg) => !arg) || !/^(get|post)$/.test(mode)) {
  console.error('usage: instructions-signed.ts BASE_URL ADMIN_URL ADMIN_TOKEN PID WARM REQUESTS [get|post]');
  process.exit(2);
}
const pid = Number(pidText);
// The bench's address (RFC 2544's benchmarking range), trusted through TRUST_PROXY=127.0.0.1.
const partner = await createBenchPartner(
  { baseUrl, adminUrl, adminToken },
  { 'x-forwarded-for': '198.18.0.1' },
);

const customerIds = await createCustomers(partner, 100);

let made = 0;
/** `count` signed GETs over the 100 customers, or creates, on 10 connections as the key route's count uses. */
async function load(count: number) {
  const pool = Array.from({ length: count }, (_, i) =>
    mode === 'post'
      ? signedCreate(partner, made++)
      : signed(partner, 'GET', `/v1/customers/${customerIds[i % customerIds.length]}`),
  );
  const expectStatus = mode === 'post' ? 201 : 200;
  const result = await runLoad({ url: baseUrl, pid, connections: 10, expectStatus, pool });
  if (result.errors > 0) throw new Error(`answered ${JSON.stringify(result.statuses)}`);
  return result;
}

await load(Number(warmText));
execFileSync('callgrind_control', ['-i', 'on', String(pid)], { stdio: 'ignore' });
const counted = await load(Number(requestsText));
execFileSync('callgrind_control', ['-i', 'off', String(pid)], { stdio: 'ignore' });
console.log(`${counted.ok} signed ${mode.toUpperCase()}s answered in ${counted.seconds.toFixed(1)} s`);
