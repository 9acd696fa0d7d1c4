import { randomBytes } from 'node:crypto';
import { z } from 'zod';

/** Classic CUID: `c` then 24 lowercase base-36 characters (docs/decisions.md, Codes and defaults). */
export const CUID_PATTERN = /^c[a-z0-9]{24}$/;
export const cuidSchema = z.string().regex(CUID_PATTERN);

let counter = randomBytes(2).readUInt16BE(0);
const fingerprint = (process.pid.toString(36) + randomBytes(2).toString('hex')).slice(-4).padStart(4, '0');

function base36(bytes: number, length: number): string {
  return BigInt(`0x${randomBytes(bytes).toString('hex')}`)
    .toString(36)
    .padStart(length, '0')
    .slice(-length);
}

/** Time-ordered, collision-resistant id in the classic CUID layout: time(8) counter(4) host(4) random(8). */
export function createId(): string {
  counter = (counter + 1) % 36 ** 4;
  const time = Date.now().toString(36).padStart(8, '0').slice(-8);
  return `c${time}${counter.toString(36).padStart(4, '0')}${fingerprint}${base36(8, 8)}`;
}
