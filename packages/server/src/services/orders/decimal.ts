import { formatScaled, toScaled } from '../ussd/menus.ts';

/** Proceeds of selling whole units at a price, rounded half up to cents. */
export function proceedsOf(quantity: number, price: string): string {
  return scaledToString(BigInt(quantity) * toScaled(price), 2);
}

/** A scale-4 bigint as a plain decimal string (no grouping), e.g. 405000n -> '40.50'. */
export function scaledToString(value: bigint, decimals: number): string {
  return formatScaled(value, decimals).replaceAll(',', '');
}
