import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where a webhook may deliver (docs/webhooks.md, SSRF rules). The same address rule is applied at
 * registration and again at connect time, on the address actually dialled, so that DNS rebinding
 * and redirects cannot reach our own network.
 */

/** Resolves a host name to every address it has (dns.lookup with `all: true`, or a test's table). */
export type Lookup = (hostname: string) => Promise<LookupAddress[]>;

export const systemLookup: Lookup = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    );
  });

/**
 * Whether an address is on the public internet. ipaddr.js parses every notation Node may hand us
 * and `process` turns IPv4-mapped IPv6 (`::ffff:127.0.0.1`) into its IPv4; only the `unicast`
 * range (global) passes. Private, loopback, link-local, unique-local, CGNAT, multicast, reserved,
 * and the IPv6 forms that embed an IPv4 (6to4, Teredo, NAT64) are all refused.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === 'unicast';
}

export type TargetCheck = { ok: true; url: URL } | { ok: false; message: string };

/**
 * The registration rule: `https`, no userinfo, a DNS host name (never an IP literal in any
 * notation: the WHATWG parser has already turned `2130706433` or `0x7f.1` into dotted IPv4), and a
 * host whose every address is public unless `allowPrivate` (tests and local rehearsal only).
 */
export async function checkWebhookUrl(
  raw: string,
  options: { allowPrivate: boolean; lookup: Lookup },
): Promise<TargetCheck> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, message: 'url must be a valid URL' };
  }
  if (url.protocol !== 'https:') return { ok: false, message: 'url must use https' };
  if (url.username !== '' || url.password !== '')
    return { ok: false, message: 'url must not carry credentials' };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) return { ok: false, message: 'url host must be a DNS name, not an IP address' };
  if (options.allowPrivate) return { ok: true, url };
  let addresses: LookupAddress[];
  try {
    addresses = await options.lookup(host);
  } catch {
    return { ok: false, message: 'url host does not resolve' };
  }
  if (addresses.length === 0) return { ok: false, message: 'url host does not resolve' };
  if (!addresses.every((a) => isPublicAddress(a.address))) {
    return { ok: false, message: 'url host resolves to a non-public address' };
  }
  return { ok: true, url };
}

/** Thrown at connect time when the host resolves to an address we do not deliver to. */
export class RefusedAddressError extends Error {
  override readonly name = 'RefusedAddressError';
  readonly code = 'EREFUSEDADDRESS';
}

/**
 * A `lookup` for `https.request`/`tls.connect` that resolves with `lookup` and refuses the
 * connection unless every address is public (or `allowPrivate`). Node dials the address this
 * returns, so the check holds for the socket actually opened.
 */
export function guardedLookup(options: { allowPrivate: boolean; lookup: Lookup }) {
  return (
    hostname: string,
    lookupOptions: { all?: boolean },
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    options.lookup(hostname).then(
      (addresses) => {
        const refused = addresses.find((a) => !options.allowPrivate && !isPublicAddress(a.address));
        if (addresses.length === 0 || refused) {
          callback(new RefusedAddressError(`${hostname} resolves to a non-public address`), '', 0);
        } else if (lookupOptions.all) {
          callback(null, addresses);
        } else {
          callback(null, addresses[0]!.address, addresses[0]!.family);
        }
      },
      (error: Error) => callback(error, '', 0),
    );
  };
}
