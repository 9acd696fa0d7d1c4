import { BlockList, isIP } from 'node:net';
import { z } from 'zod';

/** True for a single IPv4/IPv6 address or a CIDR range such as 10.0.0.0/8 or 2001:db8::/32. */
export function isIpOrCidr(entry: string): boolean {
  const [address, prefix, ...rest] = entry.split('/');
  if (rest.length > 0 || !address) return false;
  const family = isIP(address);
  if (family === 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

/** node:net's BlockList does the matching (IPv4, IPv6, ranges, and v4-mapped v6 addresses). */
export function buildAllowlist(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, prefix] = entry.split('/') as [string, string | undefined];
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  return list;
}

export function isAllowed(list: BlockList, ip: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1];
  const address = mapped ?? ip;
  return list.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
}

/** A setting holding a comma list of addresses or CIDR ranges (the providers' callback allowlists). */
export const ipListSetting = z.string().transform((value, ctx): string[] => {
  const entries = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = entries.find((e) => !isIpOrCidr(e));
  if (bad !== undefined) {
    ctx.addIssue({ code: 'custom', message: `'${bad}' is not an address or CIDR range` });
    return z.NEVER;
  }
  return entries;
});
