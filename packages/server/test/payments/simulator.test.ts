import { describe, expect, it } from 'vitest';
import { money } from '../../src/lib/money.ts';
import { signCallback, verifyCallbackSignature } from '../../src/services/payments/callback-signature.ts';
import { providerForMsisdn, routeForMsisdn } from '../../src/services/payments/mobile-network.ts';
import type { ProviderRequest } from '../../src/services/payments/pipeline/adapter.ts';
import { createSandboxAdapter, simulatedOutcome } from '../../src/services/payments/simulator.ts';

describe('sandbox magic amounts', () => {
  it.each([
    ['101.00', 'FAILED'],
    ['1001.00', 'FAILED'],
    ['2501.50', 'FAILED'],
    ['102.00', 'PENDING'],
    ['1002', 'PENDING'],
    ['1000.00', 'SUCCESS'],
    ['100.01', 'SUCCESS'],
    ['120.00', 'SUCCESS'],
    ['1010.00', 'SUCCESS'],
  ])('%s settles %s', (amount, status) => {
    expect(simulatedOutcome(money(amount, 'KES')).status).toBe(status);
  });

  it('a failure carries the insufficient-funds reason', () => {
    expect(simulatedOutcome(money('301.00', 'KES'))).toEqual({
      status: 'FAILED',
      reason: 'insufficient funds',
    });
  });
});

describe('provider of a number', () => {
  it.each([
    ['254712345678', 'MPESA'],
    ['254722000111', 'MPESA'],
    ['254790000000', 'MPESA'],
    ['254745000000', 'MPESA'],
    ['254110000000', 'MPESA'],
    ['0712345678', 'MPESA'],
    ['254733222444', 'AIRTEL_MONEY'],
    ['254750000000', 'AIRTEL_MONEY'],
    ['254780000000', 'AIRTEL_MONEY'],
    ['0733222444', 'AIRTEL_MONEY'],
    ['+256772000000', 'MTN_MOMO'],
    ['256392000000', 'MTN_MOMO'],
    ['256702000000', 'AIRTEL_MONEY'],
    ['250788000000', 'MTN_MOMO'],
    ['250732000000', 'AIRTEL_MONEY'],
    ['260966000000', 'MTN_MOMO'],
    ['260977000000', 'AIRTEL_MONEY'],
    ['233240000000', 'MTN_MOMO'],
    ['255682000000', 'AIRTEL_MONEY'],
    // Unknown networks are unknown: Telkom Kenya, a Vodacom Tanzania number, another country.
    ['254770000000', undefined],
    ['255752000000', undefined],
    ['447700900000', undefined],
    ['not a number', undefined],
  ])('%s → %s', (msisdn, provider) => {
    expect(providerForMsisdn(msisdn)).toBe(provider);
  });

  it('names the country with the network', () => {
    expect(routeForMsisdn('256772000000')).toEqual({ country: 'UG', network: 'MTN_MOMO' });
    expect(routeForMsisdn('0733222444')).toEqual({ country: 'KE', network: 'AIRTEL_MONEY' });
  });
});

describe('callback signature', () => {
  const body = '{"transactionId":"x","status":"SUCCESS"}';
  const at = new Date('2026-11-28T12:00:00Z');
  const later = (seconds: number) => new Date(at.getTime() + seconds * 1000);
  const ok = { ok: true };
  const invalid = { ok: false, reason: 'invalid' };

  it('is t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">, checked in constant time', () => {
    const header = signCallback('secret-one-secret', body, at);
    expect(header).toMatch(/^t=1795867200,v1=[0-9a-f]{64}$/);
    expect(verifyCallbackSignature('secret-one-secret', body, header, at)).toEqual(ok);
    expect(
      verifyCallbackSignature(
        'secret-one-secret',
        body,
        header.toUpperCase().replace('T=', 't=').replace('V1=', 'v1='),
        at,
      ),
    ).toEqual(ok);
    expect(verifyCallbackSignature('secret-two-secret', body, header, at)).toEqual(invalid);
    expect(verifyCallbackSignature('secret-one-secret', `${body}\n`, header, at)).toEqual(invalid);
    expect(verifyCallbackSignature('secret-one-secret', body, undefined, at)).toEqual(invalid);
    expect(verifyCallbackSignature('secret-one-secret', body, header.slice(0, -2), at)).toEqual(invalid);
  });

  it('carries its time: no time, a changed time, or a time outside 300 s either way is refused', () => {
    const header = signCallback('secret-one-secret', body, at);
    const mac = header.split(',v1=')[1];
    // The old form without a time, and the MAC moved to another time: invalid.
    expect(verifyCallbackSignature('secret-one-secret', body, `sha256=${mac}`, at)).toEqual(invalid);
    expect(verifyCallbackSignature('secret-one-secret', body, `t=1764331300,v1=${mac}`, at)).toEqual(invalid);
    expect(verifyCallbackSignature('secret-one-secret', body, header, later(300))).toEqual(ok);
    expect(verifyCallbackSignature('secret-one-secret', body, header, later(-300))).toEqual(ok);
    const outside = { ok: false, reason: 'outside-window' };
    expect(verifyCallbackSignature('secret-one-secret', body, header, later(301))).toEqual(outside);
    expect(verifyCallbackSignature('secret-one-secret', body, header, later(-301))).toEqual(outside);
  });
});

describe('sandbox adapter', () => {
  const request = (amount: string, providerIds: Record<string, string> = {}): ProviderRequest => ({
    id: `req-${amount}`,
    transactionId: `tx-${amount}`,
    operation: 'COLLECT',
    amount: money(amount, 'KES'),
    msisdn: '254712345678',
    providerIds,
    attempts: 0,
    createdAt: new Date(),
  });

  it('accepts at once, then answers pending until the settle time, then the magic outcome', async () => {
    let now = 1_000_000;
    const adapter = createSandboxAdapter({ settleMs: 3000, now: () => now });
    expect(adapter).toMatchObject({ name: 'sandbox', reconcileAfterMs: 3000 });
    const sent = await adapter.send(request('1000.00'));
    if (sent.kind !== 'accepted') throw new Error(sent.kind);
    expect(sent.providerIds).toMatchObject({
      outcome: 'SUCCESS',
      settleAt: new Date(now + 3000).toISOString(),
    });
    expect(sent.providerIds.reference).toMatch(/^SIM[0-9A-F]{10}$/);
    const accepted = request('1000.00', sent.providerIds);
    expect((await adapter.query(accepted)).kind).toBe('pending');
    now += 3000;
    expect(await adapter.query(accepted)).toMatchObject({
      kind: 'final',
      status: 'SUCCESS',
      receipt: sent.providerIds.reference,
    });
  });

  it('01 fails with its reason, 02 stays pending, and an unsent request is not found', async () => {
    const adapter = createSandboxAdapter({ settleMs: 0 });
    const failed = await adapter.send(request('301.00'));
    if (failed.kind !== 'accepted') throw new Error(failed.kind);
    expect(await adapter.query(request('301.00', failed.providerIds))).toMatchObject({
      kind: 'final',
      status: 'FAILED',
      reason: 'insufficient funds',
    });
    const never = await adapter.send(request('1002.00'));
    if (never.kind !== 'accepted') throw new Error(never.kind);
    expect((await adapter.query(request('1002.00', never.providerIds))).kind).toBe('pending');
    expect((await adapter.query(request('1000.00'))).kind).toBe('not-found');
  });
});
