/**
 * Money: every amount, price and quantity is an exact decimal (big.js), an amount always with its
 * currency, and every rounding is named where it happens. The rules (which rounding where, the
 * providers' wire formats) are in docs/ussd-and-payments.md, "Money".
 */
import BigJs from 'big.js';

/** Our own constructor: its settings cannot be changed by another module's big.js. */
export const Big = BigJs();
// Strict: a JS number is refused as input, `valueOf` throws and `toNumber` throws when inexact: no float gets in or out.
Big.strict = true;
// Only division uses DP/RM; every caller rounds its quotient again, by a named rule.
Big.DP = 20;
Big.RM = Big.roundDown;
// Never exponent notation: toString is always a plain decimal.
Big.NE = -40;
Big.PE = 40;

export type Decimal = BigJs.Big;

const ZERO = new Big('0');

/** An amount of a currency. In the store an amount has 2 decimals (numeric(18, 2)). */
export interface Money {
  readonly amount: Decimal;
  readonly currency: string;
}

/** Decimals of a stored amount (the cent), of a price and of units (numeric(…, 4)). */
export const AMOUNT_DECIMALS = 2;
export const PRICE_DECIMALS = 4;
export const UNITS_DECIMALS = 4;

/** A value that is not a well-formed amount, price, quantity or provider amount. */
export class MoneyError extends Error {
  override name = 'MoneyError';
}

const DECIMAL = /^(\d{1,16})(?:\.(\d+))?$/;

/**
 * A non-negative decimal from text: the database's numeric strings ('28.5000') or an operator's or
 * customer's input. At most 16 whole digits and `maxDecimals` decimals; no sign, exponent or space.
 */
export function parseDecimal(text: string, what = 'decimal', maxDecimals = PRICE_DECIMALS): Decimal {
  const m = DECIMAL.exec(text);
  if (!m || (m[2] ?? '').length > maxDecimals)
    throw new MoneyError(
      `Invalid ${what}: expected a decimal with up to ${maxDecimals} decimals, got "${text}"`,
    );
  return new Big(m[0]);
}

/** An amount from text (at most 2 decimals) and a three-letter currency code. */
export function money(text: string, currency: string): Money {
  if (!/^[A-Z]{3}$/.test(currency)) throw new MoneyError(`Invalid currency: "${currency}"`);
  return { amount: parseDecimal(text, 'amount', AMOUNT_DECIMALS), currency };
}

/** A whole number typed by a customer (digits only, at most 9) within [min, max]; else undefined. */
export function parseWholeInput(text: string, min: Decimal, max: Decimal): Decimal | undefined {
  if (!/^\d{1,9}$/.test(text)) return undefined;
  const value = new Big(text);
  return value.gte(min) && value.lte(max) ? value : undefined;
}

/** The plain decimal string stored and sent in JSON: '1000.00' (always 2 decimals, no grouping). */
export const amountString = (m: Money): string => m.amount.toFixed(AMOUNT_DECIMALS);

/** A decimal in its shortest plain form: '3', '10.5' (context values, provider strings). */
export const plain = (value: Decimal): string => value.toString();

function sameCurrency(a: Money, b: Money): void {
  if (a.currency !== b.currency) throw new MoneyError(`Currency mismatch: ${a.currency} and ${b.currency}`);
}

// ---- the rules ----

/**
 * Proceeds of selling `quantity` units at `price`, ROUNDED DOWN to the cent: a payout never exceeds
 * the exact value (at most one cent below it).
 */
export function proceeds(quantity: Decimal, price: Decimal, currency: string): Money {
  return { amount: quantity.times(price).round(AMOUNT_DECIMALS, Big.roundDown), currency };
}

/** Units bought with `paid` at `price`, ROUNDED DOWN to 4 decimals: never more than was paid for. */
export function unitsFor(paid: Money, price: Decimal): Decimal {
  if (price.lte(ZERO)) throw new MoneyError('A price must be greater than 0');
  return paid.amount.div(price).round(UNITS_DECIMALS, Big.roundDown);
}

/**
 * Units a buy of `paid` gets at `price`: `unitsFor` (down to 4 decimals) for an instrument held in
 * fractions, and ROUNDED DOWN to whole units for one that is not (`fractional` false): 0 when `paid`
 * is less than one unit's price. What the whole units leave of `paid` is `unspent`.
 */
export function unitsToBuy(paid: Money, price: Decimal, fractional: boolean): Decimal {
  const units = unitsFor(paid, price);
  return fractional ? units : wholeUnits(units);
}

/**
 * What is left of `paid` once `units` are bought at `price`: their cost is ROUNDED UP to the cent,
 * so what is left (a refund) never exceeds what the units did not cost. Never below 0.
 */
export function unspent(paid: Money, units: Decimal, price: Decimal): Money {
  const cost = units.times(price).round(AMOUNT_DECIMALS, Big.roundUp);
  return { amount: cost.gte(paid.amount) ? ZERO : paid.amount.minus(cost), currency: paid.currency };
}

/**
 * What a holding is worth at `price`, ROUNDED HALF-UP to the cent: a figure shown on the portfolio
 * screen, never paid out (a sale pays `proceeds`, rounded down).
 */
export function holdingValue(units: Decimal, price: Decimal, currency: string): Money {
  return { amount: units.times(price).round(AMOUNT_DECIMALS, Big.roundHalfUp), currency };
}

/** Whole units of a holding that can be sold (ROUNDED DOWN: a fraction cannot be sold). */
export const wholeUnits = (units: Decimal): Decimal => units.round(0, Big.roundDown);

/** The whole part of an amount as digits (ROUNDED DOWN): '1001' for 1001.50. */
export const wholePart = (m: Money): string => m.amount.round(0, Big.roundDown).toFixed(0);

/** What is left of `paid` after a refund of `refunded` (same currency, not more than paid). */
export function remainder(paid: Money, refunded: Money): Money {
  sameCurrency(paid, refunded);
  if (refunded.amount.gt(paid.amount)) throw new MoneyError('A refund cannot exceed what was paid');
  return { amount: paid.amount.minus(refunded.amount), currency: paid.currency };
}

// ---- screens (USSD) ----

/** `value` rounded by `rm` to `decimals`, thousands grouped: 1234567.5 -> '1,234,567.50'. */
function grouped(value: Decimal, decimals: number, rm: BigJs.RoundingMode): string {
  const [int = '0', frac] = value.round(decimals, rm).toFixed(decimals).split('.');
  const g = int.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return frac === undefined ? g : `${g}.${frac}`;
}

/** An amount on a screen: 2 decimals (half up; a stored amount has no more), grouped. */
export const formatMoney = (m: Money): string => grouped(m.amount, AMOUNT_DECIMALS, Big.roundHalfUp);

/** A price keeps up to 4 decimals when they are significant, at least 2: '28.50', '0.125'. */
export function formatPrice(price: Decimal): string {
  const rounded = price.round(PRICE_DECIMALS, Big.roundHalfUp);
  const decimals = Math.max(2, rounded.c.length - rounded.e - 1);
  return grouped(rounded, decimals, Big.roundHalfUp);
}

/** Units with up to 4 decimals, trailing zeros dropped: '12.5', '1,000'. */
export const formatUnits = (units: Decimal): string =>
  grouped(units, UNITS_DECIMALS, Big.roundDown).replace(/\.?0+$/, '');

/** Estimated units on the buy screen: ROUNDED DOWN to 2 decimals (never more than bought). */
export const formatEstimatedUnits = (units: Decimal): string => grouped(units, 2, Big.roundDown);

// ---- mobile-money providers' wire formats ----

/**
 * M-Pesa Daraja `Amount`: whole Kenyan shillings as an integer. A fraction is refused, never
 * rounded (a payout rounded up pays too much, rounded down pays too little).
 */
export function toMpesaAmount(m: Money): number {
  if (m.currency !== 'KES') throw new MoneyError(`M-Pesa takes KES only, not ${m.currency}`);
  if (!m.amount.eq(m.amount.round(0, Big.roundDown)))
    throw new MoneyError(`M-Pesa takes whole shillings: KES ${amountString(m)} has a fraction`);
  const whole = m.amount.toFixed(0);
  if (whole.length > 15) throw new MoneyError(`Amount too large for M-Pesa: KES ${whole}`);
  // 15 digits at most: an integer a JS number holds exactly.
  return Number.parseInt(whole, 10);
}

/** An amount from a Daraja callback: a JSON integer or a decimal string ('1', '1.00'). */
export function fromMpesaAmount(value: number | string): Money {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) throw new MoneyError(`Invalid M-Pesa amount: ${value}`);
    return money(String(value), 'KES');
  }
  return money(value, 'KES');
}

/**
 * MTN MoMo `amount` (collections and transfers): a decimal string, in its shortest form ('1000',
 * '1000.5'), which is how MTN itself returns it.
 */
export const toMtnAmount = (m: Money): string => plain(m.amount);
export const fromMtnAmount = (text: string, currency: string): Money => money(text, currency);

/**
 * Airtel `transaction.amount`: the same shortest decimal string. Airtel documents a JSON number:
 * the request body must carry these characters as a number token, never a value of a JS number.
 */
export const toAirtelAmount = (m: Money): string => plain(m.amount);
export const fromAirtelAmount = (text: string, currency: string): Money => money(text, currency);
