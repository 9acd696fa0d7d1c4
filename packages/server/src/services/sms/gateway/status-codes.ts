/**
 * Africa's Talking's per-recipient `statusCode` of a send (docs/sms.md, "The answer"): what each
 * means for our queue. Accepted: the gateway took it (SENT). Refused: it will not be sent, and
 * trying again changes nothing (REFUSED, shown to the operator). Retry: the gateway failed inside
 * (nothing was sent), so the worker tries again with backoff.
 */
export const AT_RECIPIENT_STATUS = {
  100: ['Processed', 'accepted'],
  101: ['Sent', 'accepted'],
  102: ['Queued', 'accepted'],
  401: ['RiskHold', 'refused'],
  402: ['InvalidSenderId', 'refused'],
  403: ['InvalidPhoneNumber', 'refused'],
  404: ['UnsupportedNumberType', 'refused'],
  405: ['InsufficientBalance', 'refused'],
  406: ['UserInBlacklist', 'refused'],
  407: ['CouldNotRoute', 'refused'],
  409: ['DoNotDisturbRejection', 'refused'],
  500: ['InternalServerError', 'retry'],
  501: ['GatewayError', 'retry'],
  502: ['RejectedByGateway', 'refused'],
} as const satisfies Record<number, readonly [string, 'accepted' | 'refused' | 'retry']>;

export type AtRecipientVerdict = 'accepted' | 'refused' | 'retry';

/** An unknown code is refused: never sent twice on a guess (the operator sees its number). */
export function recipientVerdict(statusCode: number): AtRecipientVerdict {
  return (
    (AT_RECIPIENT_STATUS as Record<number, readonly [string, AtRecipientVerdict]>)[statusCode]?.[1] ??
    'refused'
  );
}

/**
 * Delivery-report `status` values: Success is delivered; Rejected, Failed and Expired are final
 * failures; Sent, Submitted, Buffered and AbsentSubscriber are on the way (the documentation gives
 * AbsentSubscriber no finality: we keep waiting for a later report).
 */
export type DeliveryVerdict = 'delivered' | 'undelivered' | 'pending';

export function deliveryVerdict(status: string): DeliveryVerdict {
  switch (status) {
    case 'Success':
      return 'delivered';
    case 'Rejected':
    case 'Failed':
    case 'Expired':
      return 'undelivered';
    default:
      return 'pending';
  }
}
