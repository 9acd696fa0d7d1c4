import proxyAddr from '@fastify/proxy-addr';

/** Addresses remembered before the memo starts over: a bound, since clients' addresses are many. */
export const TRUST_MEMO_SIZE = 4096;

/**
 * TRUST_PROXY as Fastify's `trustProxy`: `true`/`false` as they are, a list of addresses and ranges
 * as proxy-addr's own compiled test (Fastify's, same package), with each address's answer kept.
 * Fastify does not cache `request.ip`: every read runs proxy-addr, which parses the peer and each
 * X-Forwarded-For hop with ipaddr.js before testing it against the list, ~1.9 µs a read on the bench
 * machine, ~3% of a GET /v1/webhooks/key (docs/performance.md, "The key route against bare
 * Fastify").
 * The answer for an address never changes while the process runs, so a remembered one is exact.
 */
export function trustProxyOption(setting: boolean | string[]): boolean | ((address: string) => boolean) {
  if (typeof setting === 'boolean') return setting;
  const trusts = proxyAddr.compile(setting);
  const known = new Map<string, boolean>();
  return (address) => {
    let trusted = known.get(address);
    if (trusted === undefined) {
      trusted = trusts(address, 0);
      if (known.size >= TRUST_MEMO_SIZE) known.clear();
      known.set(address, trusted);
    }
    return trusted;
  };
}
