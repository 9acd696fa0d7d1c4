import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import {
  checkWebhookUrl,
  guardedLookup,
  isPublicAddress,
  type Lookup,
} from '../../src/services/webhooks/target.ts';

/** A resolver from a table: no DNS server is asked, so the tests cannot flake on one. */
const table =
  (entries: Record<string, string[]>): Lookup =>
  async (host) => {
    const found = entries[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

describe('isPublicAddress', () => {
  it.each([
    ['8.8.8.8', true],
    ['2606:4700:4700::1111', true],
    ['127.0.0.1', false],
    ['10.1.2.3', false],
    ['172.16.0.1', false],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['0.0.0.0', false],
    ['224.0.0.1', false],
    ['255.255.255.255', false],
    ['::1', false],
    ['::', false],
    ['fe80::1', false],
    ['fc00::1', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:7f00:1', false],
    ['::ffff:8.8.8.8', true],
    ['64:ff9b::7f00:1', false],
    ['2002:7f00:1::', false],
    ['not an address', false],
  ])('%s → %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});

describe('checkWebhookUrl at registration', () => {
  const lookup = table({
    'hooks.example.com': ['93.184.215.14'],
    'internal.example.com': ['10.0.0.7'],
    'mixed.example.com': ['93.184.215.14', '127.0.0.1'],
    'mapped.example.com': ['::ffff:169.254.169.254'],
  });
  const check = (url: string, allowPrivate = false) => checkWebhookUrl(url, { allowPrivate, lookup });

  it('takes an https URL whose host resolves to public addresses only', async () => {
    expect(await check('https://hooks.example.com/in')).toMatchObject({ ok: true });
  });
  it.each([
    ['http://hooks.example.com/in', 'url must use https'],
    ['ftp://hooks.example.com/in', 'url must use https'],
    ['not a url', 'url must be a valid URL'],
    ['https://user:pw@hooks.example.com/in', 'url must not carry credentials'],
    ['https://127.0.0.1/in', 'url host must be a DNS name, not an IP address'],
    ['https://2130706433/in', 'url host must be a DNS name, not an IP address'],
    ['https://0x7f.1/in', 'url host must be a DNS name, not an IP address'],
    ['https://017700000001/in', 'url host must be a DNS name, not an IP address'],
    ['https://[::1]/in', 'url host must be a DNS name, not an IP address'],
    ['https://[::ffff:127.0.0.1]/in', 'url host must be a DNS name, not an IP address'],
    ['https://internal.example.com/in', 'url host resolves to a non-public address'],
    ['https://mixed.example.com/in', 'url host resolves to a non-public address'],
    ['https://mapped.example.com/in', 'url host resolves to a non-public address'],
    ['https://nowhere.example.com/in', 'url host does not resolve'],
  ])('%s is refused: %s', async (url, message) => {
    expect(await check(url)).toEqual({ ok: false, message });
  });
  it('the rehearsal setting lets a private host through, but never an IP literal or plain http', async () => {
    expect(await check('https://internal.example.com/in', true)).toMatchObject({ ok: true });
    expect(await check('https://127.0.0.1/in', true)).toMatchObject({ ok: false });
    expect(await check('http://internal.example.com/in', true)).toMatchObject({ ok: false });
  });
});

describe('guardedLookup at connect time', () => {
  const resolve = (lookup: Lookup, host: string, allowPrivate = false) =>
    new Promise<{ error: Error | null; address: unknown }>((done) =>
      guardedLookup({ allowPrivate, lookup })(host, { all: true }, (error, address) =>
        done({ error, address }),
      ),
    );
  it('refuses a host that now resolves to a private address (DNS rebinding)', async () => {
    let calls = 0;
    const rebinding: Lookup = async () => [
      { address: calls++ === 0 ? '93.184.215.14' : '127.0.0.1', family: 4 },
    ];
    expect((await resolve(rebinding, 'rebind.example.com')).error).toBeNull();
    const second = await resolve(rebinding, 'rebind.example.com');
    expect(second.error?.message).toBe('rebind.example.com resolves to a non-public address');
  });
  it('passes public addresses through, and private ones only with the rehearsal setting', async () => {
    const lookup = table({ 'a.example.com': ['93.184.215.14'], 'b.example.com': ['::ffff:10.0.0.1'] });
    expect(await resolve(lookup, 'a.example.com')).toEqual({
      error: null,
      address: [{ address: '93.184.215.14', family: 4 }],
    });
    expect((await resolve(lookup, 'b.example.com')).error).not.toBeNull();
    expect((await resolve(lookup, 'b.example.com', true)).error).toBeNull();
  });
});
