/**
 * The money module: properties of the rules in docs/ussd-and-payments.md ("Money") over random
 * exact decimals, and the exact strings the USSD screens show.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AMOUNT_DECIMALS,
  amountString,
  Big,
  type Decimal,
  formatEstimatedUnits,
  formatMoney,
  formatPrice,
  formatUnits,
  fromAirtelAmount,
  fromMpesaAmount,
  fromMtnAmount,
  type Money,
  MoneyError,
  money,
  parseDecimal,
  parseWholeInput,
  plain,
  proceeds,
  remainder,
  toAirtelAmount,
  toMpesaAmount,
  toMtnAmount,
  unitsFor,
} from '../../src/lib/money.ts';
import { propertyOptions } from '../reliability/arbitraries.ts';

const options = propertyOptions(1000);

/** The decimal text of an integer count of 10^-decimals: (12345n, 2) -> '123.45'. */
function text(scaled: bigint, decimals: number): string {
  if (decimals === 0) return scaled.toString();
  const digits = scaled.toString().padStart(decimals + 1, '0');
  return `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
}

/** Decimal text with 0..4 decimals, as the store and operators write it ('28.5000', '7', '0.1'). */
const decimalText = fc
  .tuple(fc.bigInt({ min: 0n, max: 10n ** 16n - 1n }), fc.integer({ min: 0, max: 4 }))
  .map(([whole, decimals]) => text(whole % 10n ** BigInt(12 + decimals), decimals));
/** An amount: cents up to 10^16 (numeric(18, 2)). */
const cents = (min = 0n) => fc.bigInt({ min, max: 10n ** 16n - 1n });
const amount = (min = 0n) => cents(min).map((c) => money(text(c, AMOUNT_DECIMALS), 'KES'));
/** A price: 0.0001 .. 10^8, up to 4 decimals. */
const price = fc.bigInt({ min: 1n, max: 10n ** 12n }).map((p) => parseDecimal(text(p, 4)));
/** Whole units to sell. */
const quantity = fc.bigInt({ min: 1n, max: 10n ** 9n }).map((q) => parseDecimal(q.toString()));

const CENT = new Big('0.01');
const UNIT_STEP = new Big('0.0001');
const ZERO = new Big('0');
const same = (a: Decimal, b: Decimal) => expect(a.eq(b), `${a.toString()} = ${b.toString()}`).toBe(true);

describe('money: parse and format', () => {
  it('parse -> format round trips: the stored string, the plain form and the screen form', () => {
    fc.assert(
      fc.property(cents(), (c) => {
        const stored = text(c, 2);
        const m = money(stored, 'KES');
        expect(amountString(m)).toBe(stored);
        same(money(plain(m.amount), 'KES').amount, m.amount);
        expect(formatMoney(m).replaceAll(',', '')).toBe(stored);
      }),
      options,
    );
    fc.assert(
      fc.property(decimalText, (t) => {
        const d = parseDecimal(t);
        same(parseDecimal(plain(d)), d);
        expect(plain(d)).not.toMatch(/e|\.\d*0$/);
      }),
      options,
    );
  });

  it('groups thousands only in the integer part, every group of three digits', () => {
    fc.assert(
      fc.property(amount(), (m) => {
        expect(formatMoney(m)).toMatch(/^\d{1,3}(,\d{3})*\.\d{2}$/);
      }),
      options,
    );
  });

  it('refuses what is not a non-negative decimal, with a message that names it', () => {
    for (const bad of [
      '',
      ' 1',
      '1 ',
      '-1',
      '+1',
      '1e3',
      '1.',
      '.5',
      '1,000',
      '0x10',
      'NaN',
      '1.23456',
      '١٢',
    ]) {
      expect(() => parseDecimal(bad, 'price'), bad).toThrow(MoneyError);
    }
    expect(() => parseDecimal('1.23456', 'price')).toThrow(
      'Invalid price: expected a decimal with up to 4 decimals, got "1.23456"',
    );
    expect(() => money('10.005', 'KES')).toThrow('Invalid amount');
    expect(() => money('10', 'kes')).toThrow('Invalid currency: "kes"');
    expect(() => parseDecimal('12345678901234567')).toThrow(MoneyError);
  });

  it('takes no JS number: big.js runs in strict mode', () => {
    expect(() => new Big(0.1 as unknown as string)).toThrow();
    expect(() => parseDecimal('1234567890123456.7').toNumber()).toThrow();
    expect(() => +money('1.10', 'KES').amount).toThrow();
  });

  it('reads a whole number typed on the handset within its bounds', () => {
    const [min, max] = [new Big('100'), new Big('1000000')];
    expect(plain(parseWholeInput('100', min, max) ?? ZERO)).toBe('100');
    expect(plain(parseWholeInput('0001000', min, max) ?? ZERO)).toBe('1000');
    for (const bad of ['99', '1000001', '1.5', '-100', '1e3', '', '1234567890']) {
      expect(parseWholeInput(bad, min, max), bad).toBeUndefined();
    }
  });
});

describe('money: the rules', () => {
  it('proceeds never exceed quantity × price and are less than a cent below it', () => {
    fc.assert(
      fc.property(quantity, price, (q, p) => {
        const value = q.times(p);
        const paid = proceeds(q, p, 'KES');
        expect(paid.currency).toBe('KES');
        expect(paid.amount.lte(value)).toBe(true);
        expect(value.minus(paid.amount).lt(CENT)).toBe(true);
        expect(amountString(paid)).toMatch(/^\d+\.\d{2}$/);
      }),
      options,
    );
  });

  it('units bought never cost more than the amount paid, and less than one step of units below it', () => {
    fc.assert(
      fc.property(amount(1n), price, (paid, p) => {
        const units = unitsFor(paid, p);
        const cost = units.times(p);
        expect(cost.lte(paid.amount)).toBe(true);
        expect(paid.amount.minus(cost).lt(UNIT_STEP.times(p))).toBe(true);
        expect(units.toFixed(4)).toBe(units.round(4, Big.roundDown).toFixed(4));
      }),
      options,
    );
  });

  it('a refund and what is left of the payment add up to what was paid', () => {
    const paidAndRefund = cents().chain((paid) =>
      fc.tuple(fc.constant(paid), fc.bigInt({ min: 0n, max: paid })),
    );
    fc.assert(
      fc.property(paidAndRefund, ([p, r]) => {
        const paid = money(text(p, 2), 'KES');
        const refunded = money(text(r, 2), 'KES');
        const left = remainder(paid, refunded);
        same(refunded.amount.plus(left.amount), paid.amount);
        expect(left.amount.gte(ZERO)).toBe(true);
      }),
      options,
    );
    expect(() => remainder(money('10.00', 'KES'), money('10.01', 'KES'))).toThrow('cannot exceed');
    expect(() => remainder(money('10.00', 'KES'), money('1.00', 'UGX'))).toThrow('Currency mismatch');
  });

  it('refuses a price of zero for units', () => {
    expect(() => unitsFor(money('100', 'KES'), parseDecimal('0'))).toThrow('greater than 0');
  });
});

describe('money: providers', () => {
  it('M-Pesa takes whole shillings as an integer and refuses a fraction', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 14n }), (whole) => {
        const m = money(`${whole}.00`, 'KES');
        const wire = toMpesaAmount(m);
        expect(Number.isSafeInteger(wire)).toBe(true);
        expect(String(wire)).toBe(whole.toString());
        same(fromMpesaAmount(wire).amount, m.amount);
      }),
      options,
    );
    fc.assert(
      fc.property(
        cents().filter((c) => c % 100n !== 0n),
        (c) => {
          expect(() => toMpesaAmount(money(text(c, 2), 'KES'))).toThrow('whole shillings');
        },
      ),
      options,
    );
    expect(() => toMpesaAmount(money('100', 'UGX'))).toThrow('KES only');
    expect(fromMpesaAmount('1.00').amount.toFixed(2)).toBe('1.00');
    expect(() => fromMpesaAmount(1.5)).toThrow(MoneyError);
  });

  it('MTN and Airtel take a decimal string that reads back as the same amount', () => {
    const conversions: [(m: Money) => string, (t: string, c: string) => Money][] = [
      [toMtnAmount, fromMtnAmount],
      [toAirtelAmount, fromAirtelAmount],
    ];
    fc.assert(
      fc.property(amount(), fc.constantFrom('KES', 'UGX', 'EUR'), (m, currency) => {
        const value = { amount: m.amount, currency };
        for (const [to, from] of conversions) {
          const wire = to(value);
          // Shortest form, as MTN returns it; a valid JSON number token for Airtel.
          expect(wire).toMatch(/^(0|[1-9]\d*)(\.\d?[1-9])?$/);
          expect(JSON.parse(`{"amount":${wire}}`)).toHaveProperty('amount');
          const back = from(wire, currency);
          same(back.amount, value.amount);
          expect(back.currency).toBe(currency);
        }
      }),
      options,
    );
    expect(toMtnAmount(money('1000.50', 'EUR'))).toBe('1000.5');
    expect(toAirtelAmount(money('1000.00', 'UGX'))).toBe('1000');
    expect(fromMtnAmount('5', 'EUR').amount.toFixed(2)).toBe('5.00');
  });
});

describe('money: the exact strings the USSD screens show', () => {
  const d = (t: string) => parseDecimal(t);
  const kes = (t: string) => ({ amount: d(t), currency: 'KES' });

  it('amounts: 2 decimals, half up, grouped', () => {
    expect(formatMoney(money('1000', 'KES'))).toBe('1,000.00');
    expect(formatMoney(money('1234567.5', 'KES'))).toBe('1,234,567.50');
    expect(formatMoney(money('299.25', 'KES'))).toBe('299.25');
    expect(formatMoney(kes('2.675'))).toBe('2.68');
    expect(formatMoney(kes('2.6749'))).toBe('2.67');
    expect(formatMoney(money('0', 'KES'))).toBe('0.00');
  });

  const screens: [string, (value: Decimal) => string, [string, string][]][] = [
    [
      'prices: the significant decimals, at least 2 and at most 4',
      formatPrice,
      [
        ['28.5000', '28.50'],
        ['380', '380.00'],
        ['0.1250', '0.125'],
        ['38.05', '38.05'],
        ['123456.7891', '123,456.7891'],
      ],
    ],
    [
      'units: up to 4 decimals, trailing zeros dropped, grouped',
      formatUnits,
      [
        ['10.5000', '10.5'],
        ['40.0000', '40'],
        ['1000.0000', '1,000'],
        ['123456.7890', '123,456.789'],
        ['0.0001', '0.0001'],
      ],
    ],
  ];
  for (const [title, format, cases] of screens) {
    it(title, () => {
      for (const [stored, shown] of cases) expect(format(d(stored)), stored).toBe(shown);
    });
  }

  it('estimates: units rounded down to 2 decimals, proceeds rounded down to the cent', () => {
    const est = (paid: string, p: string) => formatEstimatedUnits(unitsFor(money(paid, 'KES'), d(p)));
    expect(est('1000', '28.50')).toBe('35.08');
    expect(est('1000', '25.00')).toBe('40.00');
    expect(est('100', '0.30')).toBe('333.33');
    expect(est('200', '3.00')).toBe('66.66');
    expect(est('1000000', '0.0001')).toBe('10,000,000,000.00');
    const sell = (q: string, p: string) => formatMoney(proceeds(d(q), d(p), 'KES'));
    expect(sell('3', '0.10')).toBe('0.30');
    expect(sell('4', '28.50')).toBe('114.00');
    expect(sell('3', '40.0000')).toBe('120.00');
    expect(sell('3', '0.1250')).toBe('0.37'); // 0.375: down, not half up
  });
});
