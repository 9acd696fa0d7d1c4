import { createHash } from 'node:crypto';
import { ErrorLabel } from '@partner-api/contract';
import type { PartnerClient } from './client.ts';
import { PartnerApiError } from './errors.ts';
import type { UssdResponse } from './types.ts';

/** An Africa's Talking style callback: `text` is every input so far joined by `*`, empty at first. */
export type UssdGatewayCallback = {
  sessionId: string;
  phoneNumber: string;
  text?: string;
  serviceCode?: string;
  networkCode?: string;
};

export type UssdGatewayOptions = {
  /** Our customer id for the caller's phone number (e.g. `customers.list({ msisdn })`), or undefined. */
  findCustomerId(phoneNumber: string): string | undefined | Promise<string | undefined>;
  /** Failures turned into an END screen land here first (log them with `error.requestId`). */
  onError?(error: unknown, callback: UssdGatewayCallback): void;
  messages?: Partial<typeof DEFAULT_MESSAGES>;
};

const DEFAULT_MESSAGES = {
  notRegistered: 'This number is not registered for this service.',
  sessionEnded: 'Your session has ended. Please dial again.',
  unavailable: 'Service temporarily unavailable. Please try again later.',
  invalidChoice: 'Invalid choice.',
};

/** A gateway session: our session id for the gateway's, and the screen last shown. */
export type GatewaySession = { sessionId: string; ussdText: string; expiresAt: number };

export type UssdGatewayHandler = {
  (callback: UssdGatewayCallback): Promise<string>;
  /** Gateway session id → our session. In memory: one gateway process owns its sessions. */
  readonly sessions: Map<string, GatewaySession>;
  /** Drops a session at once (the gateway's end-of-session notification). */
  forget(gatewaySessionId: string): void;
};

/** The spec's limits on a choice, checked here so a stray `#` never costs a round trip. */
const CHOICE = /^[A-Za-z0-9]{1,10}$/;
const MAX_SCREEN = 182;
const PRUNE_EVERY_MS = 60_000;

/**
 * A UUID derived from the gateway session, the phone and the inputs so far. A gateway that repeats a
 * callback (its own retry after a slow answer) therefore repeats our idempotency key, and the server
 * replays the move instead of making it twice.
 */
export function gatewayIdempotencyKey(callback: UssdGatewayCallback, text: string): string {
  const hex = createHash('sha256')
    .update(`ussd-gateway\n${callback.sessionId}\n${callback.phoneNumber}\n${text}`)
    .digest('hex');
  const variant = ((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * Maps gateway callbacks onto our USSD API: the first callback of a gateway session starts one of
 * ours, each later callback sends only its last `*`-separated input, and our menu comes back as
 * `CON <ussdText>` (the menu continues) or `END <ussdText>` (an end state). A gateway that lost its
 * map (a restart) replays the inputs so far on a new session with the same derived keys, which
 * replays the moves already made rather than repeating them.
 */
export function createUssdGatewayHandler(
  client: PartnerClient,
  options: UssdGatewayOptions,
): UssdGatewayHandler {
  const messages = { ...DEFAULT_MESSAGES, ...options.messages };
  const sessions = new Map<string, GatewaySession>();
  let lastPrune = Date.now();

  const prune = () => {
    const now = Date.now();
    if (now - lastPrune < PRUNE_EVERY_MS) return;
    lastPrune = now;
    for (const [id, session] of sessions) if (session.expiresAt <= now) sessions.delete(id);
  };

  const remember = (callback: UssdGatewayCallback, response: UssdResponse): string => {
    const { data } = response;
    if (data.menu.isEndState) {
      sessions.delete(callback.sessionId);
      return `END ${data.ussdText}`;
    }
    sessions.set(callback.sessionId, {
      sessionId: data.sessionId,
      ussdText: data.ussdText,
      expiresAt: Date.parse(data.expiresAt),
    });
    return `CON ${data.ussdText}`;
  };

  const invalidChoice = (session: GatewaySession): string => {
    const text = `${messages.invalidChoice}\n${session.ussdText}`;
    return `CON ${text.length <= MAX_SCREEN ? text : session.ussdText}`;
  };

  async function start(callback: UssdGatewayCallback, inputs: string[]): Promise<string> {
    const customerId = await options.findCustomerId(callback.phoneNumber);
    if (!customerId) return `END ${messages.notRegistered}`;
    const opened = await client.ussd.start(customerId, {
      idempotencyKey: gatewayIdempotencyKey(callback, ''),
    });
    let reply = remember(callback, opened);
    // Inputs already in `text` (a dial string such as *384*1#, or a gateway restart) are replayed in order.
    for (const [index, input] of inputs.entries()) {
      const session = sessions.get(callback.sessionId);
      if (!session) break;
      if (!CHOICE.test(input)) {
        reply = invalidChoice(session);
        continue;
      }
      const key = gatewayIdempotencyKey(callback, inputs.slice(0, index + 1).join('*'));
      reply = remember(
        callback,
        await client.ussd.process(session.sessionId, input, { idempotencyKey: key }),
      );
    }
    return reply;
  }

  const handler = async (callback: UssdGatewayCallback): Promise<string> => {
    prune();
    const text = callback.text ?? '';
    const inputs = text === '' ? [] : text.split('*');
    try {
      const session = sessions.get(callback.sessionId);
      if (!session) return await start(callback, inputs);
      const choice = (inputs[inputs.length - 1] ?? '').trim();
      if (!CHOICE.test(choice)) return invalidChoice(session);
      const response = await client.ussd.process(session.sessionId, choice, {
        idempotencyKey: gatewayIdempotencyKey(callback, text),
      });
      return remember(callback, response);
    } catch (error) {
      sessions.delete(callback.sessionId);
      options.onError?.(error, callback);
      // Expired, ended or unknown sessions (400/404 on process): the caller simply dials again.
      if (!(error instanceof PartnerApiError)) return `END ${messages.unavailable}`;
      if (error.label === ErrorLabel.customerNotFound) return `END ${messages.notRegistered}`;
      const ended = error.status === 400 || error.status === 404;
      return `END ${ended ? messages.sessionEnded : messages.unavailable}`;
    }
  };

  return Object.assign(handler, {
    sessions,
    forget: (gatewaySessionId: string) => {
      sessions.delete(gatewaySessionId);
    },
  });
}
