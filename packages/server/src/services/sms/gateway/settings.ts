import { z } from 'zod';

const positiveInt = z.coerce.number().int().positive();

/**
 * Africa's Talking SMS (docs/sms.md), every variable optional here: config.ts spreads them into its
 * schema; the gateway is configured by all of AT_SMS_REQUIRED or by none (then no SMS is queued).
 */
export const AT_SMS_ENV_SHAPE = {
  /** The Africa's Talking application's username (`sandbox` for their sandbox app). */
  AT_SMS_USERNAME: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be an Africa’s Talking username (letters, digits, _ . -)')
    .optional(),
  /** Sent as the `apiKey` header; never logged. */
  AT_SMS_API_KEY: z.string().trim().min(1, 'must not be blank').optional(),
  /** `from`: a registered short code or alphanumeric sender id; unset: the account's default. */
  AT_SMS_SENDER_ID: z
    .string()
    .regex(
      /^[A-Za-z0-9 ]{1,11}$|^\+?\d{3,15}$/,
      'must be a short code or an alphanumeric sender id of 1 to 11',
    )
    .optional(),
  /** Unset: the sandbox host for username `sandbox`, the live host otherwise. */
  AT_SMS_BASE_URL: z.url({ protocol: /^https?$/, error: 'must be a http:// or https:// URL' }).optional(),
  /** The path token of the delivery-report route (Africa's Talking does not sign its reports). */
  AT_SMS_CALLBACK_TOKEN: z
    .string()
    .regex(/^[A-Za-z0-9_-]{32,128}$/, 'must be 32 to 128 characters of A-Z, a-z, 0-9, _ and -')
    .optional(),
  /** Client deadline of one send; default 15000. Past it the send is unconfirmed (docs/sms.md). */
  AT_SMS_REQUEST_TIMEOUT_MS: positiveInt.max(120_000, 'must be at most 120000').optional(),
};

export const AT_SMS_REQUIRED = ['AT_SMS_USERNAME', 'AT_SMS_API_KEY', 'AT_SMS_CALLBACK_TOKEN'] as const;

export const AT_SMS_BASE_URLS = {
  sandbox: 'https://api.sandbox.africastalking.com',
  live: 'https://api.africastalking.com',
} as const;

/** Where the delivery-report route lives, under PUBLIC_BASE_URL (then `/<token>`). */
export const AT_SMS_CALLBACK_PATH = '/v1/sms/callbacks/africastalking';

export type AtSmsSettings = {
  baseUrl: string;
  username: string;
  apiKey: string;
  senderId?: string;
  callbackToken: string;
  /** What to enter as the delivery-report callback URL on Africa's Talking's dashboard. */
  callbackUrl: string;
  timeoutMs: number;
};

type Env = { [K in keyof typeof AT_SMS_ENV_SHAPE]?: z.output<(typeof AT_SMS_ENV_SHAPE)[K]> };

/**
 * The settings once the required set is complete (config.ts checks all-or-none). A send must end
 * before its claim's lease (SMS_LEASE_SECONDS, parsed with the rest): otherwise another worker takes
 * the SMS over while the gateway may still be taking it.
 */
export function atSmsSettingsFrom(
  env: Env & { SMS_LEASE_SECONDS?: number },
  publicBaseUrl: string,
): AtSmsSettings | undefined {
  if (env.AT_SMS_USERNAME === undefined && env.AT_SMS_API_KEY === undefined) return undefined;
  const timeoutMs = env.AT_SMS_REQUEST_TIMEOUT_MS ?? 15_000;
  const leaseMs = (env.SMS_LEASE_SECONDS ?? 60) * 1000;
  if (timeoutMs >= leaseMs)
    throw new Error(`AT_SMS_REQUEST_TIMEOUT_MS: must be below SMS_LEASE_SECONDS (${leaseMs} ms)`);
  const username = env.AT_SMS_USERNAME as string;
  const callbackToken = env.AT_SMS_CALLBACK_TOKEN as string;
  return {
    baseUrl: (
      env.AT_SMS_BASE_URL ?? (username === 'sandbox' ? AT_SMS_BASE_URLS.sandbox : AT_SMS_BASE_URLS.live)
    ).replace(/\/+$/, ''),
    username,
    apiKey: env.AT_SMS_API_KEY as string,
    ...(env.AT_SMS_SENDER_ID ? { senderId: env.AT_SMS_SENDER_ID } : {}),
    callbackToken,
    callbackUrl: `${publicBaseUrl.replace(/\/+$/, '')}${AT_SMS_CALLBACK_PATH}/${callbackToken}`,
    timeoutMs,
  };
}
