/**
 * Africa's Talking's SMS API as docs/sms.md ("The wire format") writes it down: the send's form
 * fields, its JSON answer and the per-recipient status codes, and the delivery report's fields.
 */

export type FakeAtSmsScenario =
  | 'normal'
  | 'insufficient-balance'
  | 'invalid-number'
  | 'blacklisted'
  | 'dnd'
  | 'gateway-error'
  | 'no-report'
  | 'late-report'
  | 'failed-report'
  | 'slow'
  | 'reset';

export const FAKE_AT_SMS_SCENARIOS: readonly FakeAtSmsScenario[] = [
  'normal',
  'insufficient-balance',
  'invalid-number',
  'blacklisted',
  'dnd',
  'gateway-error',
  'no-report',
  'late-report',
  'failed-report',
  'slow',
  'reset',
];

/** One entry of `SMSMessageData.Recipients`. */
export type AtRecipient = {
  statusCode: number;
  number: string;
  status: string;
  cost: string;
  messageId: string;
};

/** The refusal each scenario gives every recipient: statusCode and status, as Africa's Talking names them. */
export const REFUSALS: Partial<Record<FakeAtSmsScenario, { statusCode: number; status: string }>> = {
  'insufficient-balance': { statusCode: 405, status: 'InsufficientBalance' },
  'invalid-number': { statusCode: 403, status: 'InvalidPhoneNumber' },
  blacklisted: { statusCode: 406, status: 'UserInBlacklist' },
  dnd: { statusCode: 409, status: 'DoNotDisturbRejection' },
};

/** A number Africa's Talking would take: international format, 7 to 15 digits. */
export const PHONE = /^\+?\d{7,15}$/;

export const COST_PER_SMS = 'KES 0.8000';

export function refusedRecipient(number: string, statusCode: number, status: string): AtRecipient {
  // As the documentation's DND example: no message id ("None") and no cost.
  return { statusCode, number, status, cost: '0', messageId: 'None' };
}

export function answerBody(recipients: AtRecipient[]) {
  const sent = recipients.filter((r) => r.statusCode >= 100 && r.statusCode < 200).length;
  const cost = (sent * 0.8).toFixed(4);
  return {
    SMSMessageData: {
      Message: `Sent to ${sent}/${recipients.length} Total Cost: ${sent > 0 ? `KES ${cost}` : '0'}`,
      Recipients: recipients,
    },
  };
}

/** The text Africa's Talking answers a wrong apiKey or username with (HTTP 401). */
export const UNAUTHORIZED_TEXT = 'The supplied authentication is invalid';
