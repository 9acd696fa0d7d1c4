/**
 * The GSM 03.38 default alphabet (7-bit) and its extension table: an SMS of these characters holds
 * 160 septets; one character outside them makes the whole SMS UCS-2, 70 characters.
 */
const BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
/** Each of these takes two septets (an escape, then the character). */
const EXTENSION = '^{}\\[~]|€\f';

const basic = new Set(BASIC);
const extension = new Set(EXTENSION);

/** The septets `text` takes in GSM-7, or undefined when a character is not in the alphabet. */
export function gsm7Septets(text: string): number | undefined {
  let septets = 0;
  for (const character of text) {
    if (basic.has(character)) septets += 1;
    else if (extension.has(character)) septets += 2;
    else return undefined;
  }
  return septets;
}

/** One SMS: at most 160 septets of GSM-7. */
export const SMS_MAX_SEPTETS = 160;
