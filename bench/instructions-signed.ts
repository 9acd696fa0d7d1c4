/**
 * The load of `bench/instructions.sh --signed` and `--post`: a bench partner of the server under
 * callgrind, 100 customers created through the API as `npm run bench` creates them, then signed GET
 * /v1/customers/{id} as scenario 1 sends them (`get`), or signed idempotent POST /v1/customers as
 * scenario 3 sends them, a new key and customer each (`post`). The warm-up and the counted requests
 * are one load on the same connections (bench/instructions-load.ts), each request signed as it is
 * sent and sent once: under valgrind the load lasts minutes, and a signature is valid for 300 s.
 * Prints the responses counted, which the script divides by.
 *
 *   npx tsx bench/instructions-signed.ts BASE_URL ADMIN_URL ADMIN_TOKEN PID WARM REQUESTS [get|post]
 */
import { countedLoad } from './instructions-load.ts';
import { createBenchPartner, createCustomers, signed, signedCreate } from './lib/partner.ts';

const args = process.argv.slice(2);
const [baseUrl = '', adminUrl = '', adminToken = '', pid = '', warmText, requestsText, mode = 'get'] = args;
if (args.length < 6 || args.slice(0, 6).some((arg) => !arg) || !/^(get|post)$/.test(mode)) {
  console.error('usage: instructions-signed.ts BASE_URL ADMIN_URL ADMIN_TOKEN PID WARM REQUESTS [get|post]');
  process.exit(2);
}
// The bench's address (RFC 2544's benchmarking range), trusted through TRUST_PROXY=127.0.0.1.
const partner = await createBenchPartner(
  { baseUrl, adminUrl, adminToken },
  { 'x-forwarded-for': '198.18.0.1' },
);
const customerIds = await createCustomers(partner, 100);

const counted = await countedLoad({
  url: baseUrl,
  pid,
  warm: Number(warmText),
  requests: Number(requestsText),
  expectStatus: mode === 'post' ? 201 : 200,
  request: (i) =>
    mode === 'post'
      ? signedCreate(partner, i)
      : signed(partner, 'GET', `/v1/customers/${customerIds[i % customerIds.length]}`),
});
console.log(`counted=${counted}`);
