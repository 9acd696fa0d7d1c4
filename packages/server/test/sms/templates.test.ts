import { describe, expect, it } from 'vitest';
import { CATALOGUES, LANGUAGES, message } from '../../src/i18n/index.ts';
import { gsm7Septets, SMS_MAX_SEPTETS } from '../../src/services/sms/gsm7.ts';
import { lastFour, SMS_MESSAGE_IDS } from '../../src/services/sms/messages.ts';

/**
 * The longest values each placeholder can take: units with 7 whole digits and 4 decimals, a symbol of
 * 12 (the catalog's limit), a price of 6 whole digits, an amount of 9 whole digits (the largest
 * order the screens take is far below), a 3-letter currency, our 25-character order id, 4 digits.
 */
const LONGEST = {
  units: '9999999.9999',
  symbol: 'ABCDEFGHIJ.K',
  price: '999999.9999',
  amount: '999999999.99',
  currency: 'KES',
  order: 'cmabcdefg0123abcdxyz98765',
  last4: '5678',
};

describe('investor SMS texts', () => {
  it.each(LANGUAGES)('every sms.* message in %s fits one GSM-7 SMS at its longest values', (language) => {
    for (const id of Object.values(SMS_MESSAGE_IDS)) {
      const text = message(language, id, LONGEST);
      const septets = gsm7Septets(text);
      expect(septets, `${language} ${id}: not GSM-7: ${text}`).toBeDefined();
      expect(septets, `${language} ${id} is ${septets} septets: ${text}`).toBeLessThanOrEqual(
        SMS_MAX_SEPTETS,
      );
      // Every placeholder was filled: no brace left, each value shown.
      expect(text).not.toMatch(/[{}]/);
      expect(text).toContain(LONGEST.order);
    }
  });

  it('both catalogues hold the same sms.* ids, and each names the same placeholders', () => {
    const ids = (language: (typeof LANGUAGES)[number]) =>
      Object.keys(CATALOGUES[language])
        .filter((id) => id.startsWith('sms.'))
        .sort();
    expect(ids('sw')).toEqual(ids('en'));
    expect(ids('en')).toEqual(Object.values(SMS_MESSAGE_IDS).sort());
    const placeholders = (source: string) => [...source.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    for (const id of ids('en'))
      expect(placeholders(CATALOGUES.sw[id]!), id).toEqual(placeholders(CATALOGUES.en[id]!));
  });

  it('shows no more than the last 4 digits of a number', () => {
    expect(lastFour('254712345678')).toBe('5678');
    for (const language of LANGUAGES) {
      const text = message(language, SMS_MESSAGE_IDS.PAYOUT, { ...LONGEST, last4: lastFour('254712345678') });
      expect(text).not.toContain('2547123');
      expect(text).toContain('5678');
    }
  });

  it('counts GSM-7 septets: the extension table twice, anything else refused', () => {
    expect(gsm7Septets('abc')).toBe(3);
    expect(gsm7Septets('€[')).toBe(4);
    expect(gsm7Septets('naïve')).toBeUndefined();
    expect(gsm7Septets('a\u202fb')).toBeUndefined();
  });
});
