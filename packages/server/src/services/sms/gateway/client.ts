import type { AtSmsSettings } from './settings.ts';
import { recipientVerdict } from './status-codes.ts';

/**
 * What became of one hand-over to the gateway:
 * - `accepted`: it took the message (statusCode 100–102) under `messageId`;
 * - `refused`: it will not send it (403 InvalidPhoneNumber, 405 InsufficientBalance, …);
 * - `failed`: it certainly did not take it (an HTTP error answer, a refused connection, its 500/501):
 *   safe to try again;
 * - `unconfirmed`: we do not know (a timeout, a connection cut after the request went out, a 2xx we
 *   cannot read): it may have been sent.
 */
export type SmsSendOutcome =
  | { kind: 'accepted'; messageId: string; statusCode: number; status: string; cost: string | null }
  | { kind: 'refused'; statusCode: number; status: string }
  | { kind: 'failed'; error: string; statusCode?: number }
  | { kind: 'unconfirmed'; error: string };

/** An SMS gateway as the SMS worker drives it (Africa's Talking, or the sandbox inbox). */
export type SmsGateway = {
  readonly name: string;
  send(input: { to: string; message: string }): Promise<SmsSendOutcome>;
};

type Recipient = {
  statusCode?: unknown;
  number?: unknown;
  status?: unknown;
  cost?: unknown;
  messageId?: unknown;
};

/** The first recipient of `{"SMSMessageData":{"Message","Recipients":[…]}}`, or undefined. */
export function firstRecipient(body: string): Recipient | undefined {
  try {
    const data = (JSON.parse(body) as { SMSMessageData?: { Recipients?: unknown } })?.SMSMessageData;
    const list = data?.Recipients;
    return Array.isArray(list) && list[0] && typeof list[0] === 'object' ? (list[0] as Recipient) : undefined;
  } catch {
    return undefined;
  }
}

/** The outcome of an answer the gateway gave (any HTTP status) to a send to one number. */
export function outcomeOf(httpStatus: number, body: string): SmsSendOutcome {
  const recipient = firstRecipient(body);
  const code = Number(recipient?.statusCode);
  // A recipient's own code decides, whatever the HTTP status (a DND refusal comes as HTTP 409).
  if (recipient && Number.isInteger(code)) {
    const status = typeof recipient.status === 'string' ? recipient.status : String(code);
    const verdict = recipientVerdict(code);
    if (verdict === 'accepted') {
      const messageId = typeof recipient.messageId === 'string' ? recipient.messageId : '';
      if (!messageId || messageId === 'None')
        return { kind: 'unconfirmed', error: `statusCode ${code} without a messageId` };
      const cost = typeof recipient.cost === 'string' ? recipient.cost : null;
      return { kind: 'accepted', messageId, statusCode: code, status, cost };
    }
    if (verdict === 'refused') return { kind: 'refused', statusCode: code, status };
    return { kind: 'failed', error: `recipient statusCode ${code} ${status}`, statusCode: code };
  }
  if (httpStatus >= 200 && httpStatus < 300)
    return { kind: 'unconfirmed', error: `HTTP ${httpStatus} without a recipient` };
  // 401 (a wrong key), 400, 5xx: the request was refused as a whole; nothing went out.
  return { kind: 'failed', error: `HTTP ${httpStatus}` };
}

/**
 * `POST {base}/version1/messaging` as Africa's Talking documents it: form-encoded `username`, `to`
 * (+E.164), `message`, `from` when set; headers `apiKey` and `Accept: application/json`. One number
 * per request, so one answer is one SMS.
 */
export function createAtSmsGateway(
  settings: AtSmsSettings,
  options: { fetch?: typeof fetch } = {},
): SmsGateway {
  const doFetch = options.fetch ?? fetch;
  return {
    name: 'africastalking',
    async send({ to, message }) {
      const form = new URLSearchParams({
        username: settings.username,
        to: `+${to.replace(/^\+/, '')}`,
        message,
      });
      if (settings.senderId) form.set('from', settings.senderId);
      let response: Response;
      try {
        response = await doFetch(`${settings.baseUrl}/version1/messaging`, {
          method: 'POST',
          headers: {
            apiKey: settings.apiKey,
            accept: 'application/json',
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: form.toString(),
          signal: AbortSignal.timeout(settings.timeoutMs),
        });
      } catch (error) {
        return connectionOutcome(error);
      }
      let body: string;
      try {
        body = await response.text();
      } catch (error) {
        return { kind: 'unconfirmed', error: `answer cut: ${(error as Error).message}` };
      }
      return outcomeOf(response.status, body);
    },
  };
}

/** A refused or unresolvable connection never reached the gateway; anything else may have. */
function connectionOutcome(error: unknown): SmsSendOutcome {
  const cause = (error as { cause?: { code?: string } }).cause;
  const code = cause?.code ?? '';
  if (['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH'].includes(code))
    return { kind: 'failed', error: `connection: ${code}` };
  const name = (error as Error).name;
  if (name === 'TimeoutError') return { kind: 'unconfirmed', error: 'timeout' };
  return { kind: 'unconfirmed', error: `connection: ${code || name}` };
}
