/**
 * What a move read is no longer so: another request committed first (the same units sold, the order
 * cancelled or settled, the stock delisted) between the move's read and its write. Not a fault: the
 * USSD move reads its data again and shows what the machine shows from it, the refusal the embedded
 * store (one transaction at a time) gives (services/ussd/process-choice.ts).
 */
export class OvertakenError extends Error {
  override name = 'OvertakenError';
}
