import { randomBytes, randomInt } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** An absolute http(s) URL without white space. */
export function httpUrl(v: unknown): boolean {
  if (typeof v !== 'string' || /\s/.test(v)) return false;
  try {
    return ['http:', 'https:'].includes(new URL(v).protocol);
  } catch {
    return false;
  }
}

/** A request header as one string (Node joins repeated ones but for a few). */
export const header = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
};

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const alnum = (n: number) => Array.from({ length: n }, () => ALNUM[randomInt(ALNUM.length)]).join('');
export const upper = (n: number) => Array.from({ length: n }, () => ALNUM[randomInt(26)]).join('');
export const digits = (n: number) => Array.from({ length: n }, () => randomInt(10)).join('');
export const hex = (n: number) =>
  randomBytes(Math.ceil(n / 2))
    .toString('hex')
    .slice(0, n);
export const b64url = (n: number) => randomBytes(n).toString('base64url');
