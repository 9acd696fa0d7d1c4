import proxyAddr from '@fastify/proxy-addr';
import { describe, expect, it } from 'vitest';
import { TRUST_MEMO_SIZE, trustProxyOption } from '../../src/lib/trust-proxy.ts';

// The remembered test must answer as proxy-addr's own for every address, first time and after.
const LIST = ['127.0.0.1', '10.0.0.0/8', '2001:db8::/32', 'uniquelocal'];
const ADDRESSES = [
  '127.0.0.1',
  '127.0.0.2',
  '::ffff:127.0.0.1',
  '10.20.30.40',
  '11.0.0.1',
  '::ffff:10.1.1.1',
  '2001:db8::1',
  '2001:db9::1',
  'fd00::1',
  '198.18.0.1',
  'not an address',
];

describe('TRUST_PROXY as a remembered trust test (lib/trust-proxy.ts)', () => {
  it('passes true and false through unchanged', () => {
    expect(trustProxyOption(true)).toBe(true);
    expect(trustProxyOption(false)).toBe(false);
  });

  it("answers every address as proxy-addr's compiled list does, and again from memory", () => {
    const reference = proxyAddr.compile(LIST);
    const trusts = trustProxyOption(LIST) as (address: string) => boolean;
    const expected = ADDRESSES.map((a) => reference(a, 0));
    expect(expected).toEqual([true, false, true, true, false, true, true, false, true, false, false]);
    expect(ADDRESSES.map((a) => trusts(a))).toEqual(expected);
    expect(ADDRESSES.map((a) => trusts(a))).toEqual(expected);
  });

  it('still answers right after more distinct addresses than it remembers', () => {
    const trusts = trustProxyOption(['10.0.0.0/8']) as (address: string) => boolean;
    expect(trusts('10.0.0.1')).toBe(true);
    expect(trusts('192.0.2.1')).toBe(false);
    for (let i = 0; i < TRUST_MEMO_SIZE + 10; i++) {
      expect(trusts(`172.16.${i >> 8}.${i & 255}`)).toBe(false);
    }
    expect(trusts('10.0.0.1')).toBe(true);
    expect(trusts('192.0.2.1')).toBe(false);
  });
});
