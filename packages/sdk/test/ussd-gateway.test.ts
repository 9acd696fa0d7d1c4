import { describe, expect, it } from 'vitest';
import {
  createUssdGatewayHandler,
  gatewayIdempotencyKey,
  NotFoundError,
  type PartnerClient,
  type UssdResponse,
  ValidationError,
} from '../src/index.ts';

type Call = { op: 'start' | 'process'; arg: string; key: string | undefined };

/** A stand-in for client.ussd: a counter menu that ends after three moves. */
function fakeClient(fail?: (call: Call) => Error | undefined) {
  const calls: Call[] = [];
  let moves = 0;
  const screen = (state: string, text: string, isEndState = false): UssdResponse => ({
    message: 'USSD request processed successfully',
    data: {
      sessionId: 'ussd_0001',
      currentState: state,
      menu: { state, text, options: [], isEndState },
      ussdText: text,
      expiresAt: new Date(Date.now() + 180_000).toISOString(),
    },
  });
  const record = (call: Call) => {
    calls.push(call);
    const error = fail?.(call);
    if (error) throw error;
  };
  const client = {
    ussd: {
      start: async (customerId: string, options?: { idempotencyKey?: string }) => {
        record({ op: 'start', arg: customerId, key: options?.idempotencyKey });
        return screen('HOME', 'Welcome\n\n1. Stocks');
      },
      process: async (_sessionId: string, choice: string, options?: { idempotencyKey?: string }) => {
        record({ op: 'process', arg: choice, key: options?.idempotencyKey });
        moves += 1;
        return moves >= 3
          ? screen('BUY_SUBMITTED', 'Request received.', true)
          : screen('STOCKS', `Move ${moves}`);
      },
    },
  } as unknown as PartnerClient;
  return { client, calls };
}

const findCustomerId = (phone: string) => (phone === '+254700000001' ? 'c-customer' : undefined);

describe('createUssdGatewayHandler', () => {
  it('starts on the first callback, sends only the last input afterwards, and answers CON … then END …', async () => {
    const { client, calls } = fakeClient();
    const gateway = createUssdGatewayHandler(client, { findCustomerId });
    const at = (text: string) => gateway({ sessionId: 'AT1', phoneNumber: '+254700000001', text });
    expect(await at('')).toBe('CON Welcome\n\n1. Stocks');
    expect(gateway.sessions.get('AT1')?.sessionId).toBe('ussd_0001');
    expect(await at('1')).toBe('CON Move 1');
    expect(await at('1*7')).toBe('CON Move 2');
    expect(await at('1*7*3')).toBe('END Request received.');
    expect(calls.map((c) => `${c.op}:${c.arg}`)).toEqual([
      'start:c-customer',
      'process:1',
      'process:7',
      'process:3',
    ]);
    expect(gateway.sessions.size).toBe(0);
  });

  it('derives each idempotency key from the gateway session, the phone and the inputs so far', async () => {
    const { client, calls } = fakeClient();
    const gateway = createUssdGatewayHandler(client, { findCustomerId });
    const callback = { sessionId: 'AT2', phoneNumber: '+254700000001' };
    await gateway({ ...callback, text: '' });
    await gateway({ ...callback, text: '1' });
    await gateway({ ...callback, text: '1' });
    expect(calls.map((c) => c.key)).toEqual([
      gatewayIdempotencyKey(callback, ''),
      gatewayIdempotencyKey(callback, '1'),
      gatewayIdempotencyKey(callback, '1'),
    ]);
    const key = gatewayIdempotencyKey(callback, '1');
    expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(gatewayIdempotencyKey({ ...callback, sessionId: 'AT3' }, '1')).not.toBe(key);
    expect(gatewayIdempotencyKey(callback, '1*1')).not.toBe(key);
  });

  it('replays the inputs of a dial string (or of a session it lost) onto a new session', async () => {
    const { client, calls } = fakeClient();
    const gateway = createUssdGatewayHandler(client, { findCustomerId });
    expect(await gateway({ sessionId: 'AT4', phoneNumber: '+254700000001', text: '1*2' })).toBe('CON Move 2');
    expect(calls.map((c) => `${c.op}:${c.arg}`)).toEqual(['start:c-customer', 'process:1', 'process:2']);
  });

  it('shows the same screen again for an input that cannot be a choice, without a request', async () => {
    const { client, calls } = fakeClient();
    const gateway = createUssdGatewayHandler(client, { findCustomerId });
    const at = (text: string) => gateway({ sessionId: 'AT5', phoneNumber: '+254700000001', text });
    await at('');
    expect(await at('#')).toBe('CON Invalid choice.\nWelcome\n\n1. Stocks');
    expect(await at('#*')).toBe('CON Invalid choice.\nWelcome\n\n1. Stocks');
    expect(await at('#**12345678901')).toBe('CON Invalid choice.\nWelcome\n\n1. Stocks');
    expect(calls).toHaveLength(1);
  });

  it('ends the session with a message instead of failing the gateway', async () => {
    const gatewayFor = (error: Error) => {
      const errors: unknown[] = [];
      const { client } = fakeClient((call) => (call.op === 'process' ? error : undefined));
      const gateway = createUssdGatewayHandler(client, { findCustomerId, onError: (e) => errors.push(e) });
      return { gateway, errors };
    };
    const expired = new ValidationError({
      status: 400,
      label: 'Bad Request',
      message: 'USSD session has expired',
    });
    const { gateway, errors } = gatewayFor(expired);
    await gateway({ sessionId: 'AT6', phoneNumber: '+254700000001', text: '' });
    expect(await gateway({ sessionId: 'AT6', phoneNumber: '+254700000001', text: '1' })).toBe(
      'END Your session has ended. Please dial again.',
    );
    expect(errors).toEqual([expired]);
    expect(gateway.sessions.size).toBe(0);

    const gone = gatewayFor(new NotFoundError({ status: 404, label: 'SESSION_NOT_FOUND' })).gateway;
    await gone({ sessionId: 'AT7', phoneNumber: '+254700000001', text: '' });
    expect(await gone({ sessionId: 'AT7', phoneNumber: '+254700000001', text: '1' })).toMatch(
      /^END Your session has ended/,
    );

    const broken = gatewayFor(new Error('socket hang up')).gateway;
    await broken({ sessionId: 'AT8', phoneNumber: '+254700000001', text: '' });
    expect(await broken({ sessionId: 'AT8', phoneNumber: '+254700000001', text: '1' })).toBe(
      'END Service temporarily unavailable. Please try again later.',
    );
  });

  it('answers an unknown number with END and opens nothing', async () => {
    const { client, calls } = fakeClient();
    const gateway = createUssdGatewayHandler(client, {
      findCustomerId,
      messages: { notRegistered: 'Dial *123# to join.' },
    });
    expect(await gateway({ sessionId: 'AT9', phoneNumber: '+254799999999', text: '' })).toBe(
      'END Dial *123# to join.',
    );
    expect(calls).toHaveLength(0);
  });

  it('forget drops a session (the gateway said it ended)', async () => {
    const { client } = fakeClient();
    const gateway = createUssdGatewayHandler(client, { findCustomerId });
    await gateway({ sessionId: 'AT10', phoneNumber: '+254700000001', text: '' });
    gateway.forget('AT10');
    expect(gateway.sessions.size).toBe(0);
  });
});
