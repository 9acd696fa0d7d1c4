import { randomBytes } from 'node:crypto';
import type { UssdSessionData } from '@partner-api/contract';
import type { UssdScreen } from './types.ts';

/** Spec: `ussd_` followed by hex; 128 random bits. */
export const newSessionId = (): string => `ussd_${randomBytes(16).toString('hex')}`;

/** A session lives USSD_SESSION_TTL_SECONDS after its last move. */
export const expiryFrom = (now: Date, ttlSeconds: number): Date =>
  new Date(now.getTime() + ttlSeconds * 1000);

/** Spec "USSD session data". */
export function presentScreen(sessionId: string, screen: UssdScreen, expiresAt: Date): UssdSessionData {
  return {
    sessionId,
    currentState: screen.state,
    menu: screen.menu,
    ussdText: screen.ussdText,
    expiresAt: expiresAt.toISOString(),
  };
}
