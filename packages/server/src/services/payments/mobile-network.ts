import type { TransactionRef } from './provider.ts';

type Provider = TransactionRef['provider'];

/**
 * The mobile-money provider of a customer's number, from its network prefix (Communications
 * Authority of Kenya number plan, international form 254...; a local 07.../01... number is read as
 * Kenyan):
 *   Safaricom (MPESA):  2547[0129]x, 25474x, 25475[7-9], 25476[89], 25411x
 *   Airtel (AIRTEL_MONEY): 25473x, 25475[0-6], 25478x, 25410x
 *   anything else (Telkom Kenya, other countries' networks): MTN_MOMO, the sandbox's third rail.
 */
export function providerForMsisdn(msisdn: string): Provider {
  const n = /^0[17]\d{8}$/.test(msisdn) ? `254${msisdn.slice(1)}` : msisdn;
  if (/^254(7[0129]|74|75[7-9]|76[89]|11)/.test(n)) return 'MPESA';
  if (/^254(73|75[0-6]|78|10)/.test(n)) return 'AIRTEL_MONEY';
  return 'MTN_MOMO';
}
