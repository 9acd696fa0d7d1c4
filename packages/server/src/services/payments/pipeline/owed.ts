import { sql } from 'drizzle-orm';
import type { Tx } from '../../../db/client.ts';
import { one, rows, run } from '../../../db/query.ts';
import { amountString } from '../../../lib/money.ts';
import type { FinalStatus } from './adapter.ts';
import type { LoadedRequest } from './store.ts';
import type { PipelineDeps } from './types.ts';

type Claim = { status: string; reason?: string; receipt?: string };

/**
 * A payout the provider's own word calls failed (or cancelled). The callbacks about it that nothing
 * has checked yet are weighed against that word: Daraja answers a payout's query later, by
 * callback, so its B2C Result could not be confirmed when it came. A callback that claimed this
 * failure is confirmed, and the first such claim becomes the request's `claimed` (the confirmed
 * facts: Daraja's code and description); one that claimed anything else is marked unconfirmed and
 * logged as suspicious. A QueueTimeOut (claim PENDING) claims no outcome and is left as it is.
 * Returns the failure's reason: the confirmed claim's (it names the code), confirmed by the query's.
 * A payout already SUCCESS is left as it is (a late contradiction changes nothing).
 */
export async function weighPayoutFailure(
  tx: Tx,
  deps: Pick<PipelineDeps, 'log'>,
  request: LoadedRequest,
  final: { status: FinalStatus; reason?: string },
): Promise<string | undefined> {
  // Read now, not from the request: another answer may have settled it while this one waited.
  const current = await one<{ status: string }>(
    tx,
    sql`select status from transactions where id = ${request.transactionId}`,
  );
  if (current?.status === 'SUCCESS') return final.reason;
  const unchecked = await rows<{ id: string; claim: Claim }>(
    tx,
    sql`select id, claim from provider_exchanges
  where provider_request_id = ${request.id} and kind = 'callback' and confirmed is null
    and claim is not null and claim->>'status' <> 'PENDING'
  order by at, id`,
  );
  let claimed = request.claimed as Claim | null;
  for (const callback of unchecked) {
    const agrees = callback.claim.status === final.status;
    await run(tx, sql`update provider_exchanges set confirmed = ${agrees} where id = ${callback.id}`);
    if (!agrees) {
      deps.log.warn(
        { suspicious: true, requestId: request.id, claimed: callback.claim.status, queried: final.status },
        'suspicious payout callback: the provider calls the payout failed',
      );
    } else if (!claimed) {
      claimed = callback.claim;
      await run(
        tx,
        sql`update provider_requests set claimed = ${JSON.stringify(claimed)}::jsonb where id = ${request.id}`,
      );
    }
  }
  const first = claimed?.status === final.status ? claimed.reason : undefined;
  if (!first) return final.reason;
  // e.g. "M-Pesa 2001: The initiator information is invalid; confirmed by M-Pesa Transaction Status: Failed"
  return final.reason && final.reason !== first
    ? `${first.replace(/\.$/, '')}; confirmed by ${final.reason}`
    : first;
}

/**
 * What the operator is told a payout leaves owed: the amount and currency, the number, the order,
 * and how to settle it (docs/payments.md, Operators).
 */
export function owedNote(
  request: Pick<LoadedRequest, 'amount' | 'msisdn' | 'transactionId'>,
  orderId: string | undefined,
  why?: string,
): string {
  const amount = `${request.amount.currency} ${amountString(request.amount)}`;
  const order = orderId ? ` for order ${orderId}` : '';
  return `${why ? `${why}: ` : ''}the customer is owed ${amount} to ${request.msisdn}${order}; retry the payout or pay another way (partner-api payments resolve ${request.transactionId})`;
}
