import type { TransactionRef } from './provider.ts';

type Network = TransactionRef['provider'];

/** The country (ISO 3166 alpha-2) and mobile-money network of a number. */
export type NetworkRoute = { country: string; network: Network };

/**
 * Mobile-money networks by country calling code and the national prefix that follows it, from each
 * country's national numbering plan as the operators publish it (docs/payments.md, "Which provider
 * serves a number"). A number whose prefix is not listed is on no network we know: no payments,
 * never a guess. Re-check a country's plan before going live there: regulators re-assign ranges.
 */
const PLANS: ReadonlyArray<{ code: string; country: string; networks: Array<[Network, RegExp]> }> = [
  {
    // Communications Authority of Kenya: Safaricom 070-072, 074, 0757-0759, 0768-0769, 079, 011;
    // Airtel 073, 0750-0756, 078, 010. Telkom (077) has no provider here.
    code: '254',
    country: 'KE',
    networks: [
      ['MPESA', /^(7[0129]|74|75[7-9]|76[89]|11)/],
      ['AIRTEL_MONEY', /^(73|75[0-6]|78|10)/],
    ],
  },
  {
    // Uganda Communications Commission: MTN 076-078 and 039; Airtel 070, 074, 075 and 020.
    code: '256',
    country: 'UG',
    networks: [
      ['MTN_MOMO', /^(7[678]|39)/],
      ['AIRTEL_MONEY', /^(7[045]|20)/],
    ],
  },
  {
    // Rwanda Utilities Regulatory Authority: MTN 078-079; Airtel 072-073.
    code: '250',
    country: 'RW',
    networks: [
      ['MTN_MOMO', /^7[89]/],
      ['AIRTEL_MONEY', /^7[23]/],
    ],
  },
  {
    // Zambia Information and Communications Technology Authority: MTN 096, 076; Airtel 097, 077.
    code: '260',
    country: 'ZM',
    networks: [
      ['MTN_MOMO', /^(96|76)/],
      ['AIRTEL_MONEY', /^(97|77)/],
    ],
  },
  {
    // National Communications Authority (Ghana): MTN 024, 025, 053, 054, 055, 059.
    code: '233',
    country: 'GH',
    networks: [['MTN_MOMO', /^(2[45]|5[3459])/]],
  },
  {
    // Tanzania Communications Regulatory Authority: Airtel 068, 069, 078.
    code: '255',
    country: 'TZ',
    networks: [['AIRTEL_MONEY', /^(6[89]|78)/]],
  },
];

/**
 * The country and network of a number in international form (`+` optional), or a Kenyan local one
 * (07…/01…); undefined for a number on no network we know.
 */
export function routeForMsisdn(msisdn: string): NetworkRoute | undefined {
  const digits = msisdn.replace(/^\+/, '');
  const n = /^0[17]\d{8}$/.test(digits) ? `254${digits.slice(1)}` : digits;
  if (!/^\d{9,15}$/.test(n)) return undefined;
  for (const plan of PLANS) {
    if (!n.startsWith(plan.code)) continue;
    const national = n.slice(plan.code.length);
    const found = plan.networks.find(([, prefix]) => prefix.test(national));
    return found ? { country: plan.country, network: found[0] } : undefined;
  }
  return undefined;
}

/** The mobile-money network of a number; undefined when it is on no network we know. */
export function providerForMsisdn(msisdn: string): Network | undefined {
  return routeForMsisdn(msisdn)?.network;
}
