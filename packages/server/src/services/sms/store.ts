import { type SQL, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { dueAt, one, rows, run } from '../../db/query.ts';
import type { SmsSendOutcome } from './gateway/client.ts';
import { type DeliveryVerdict, deliveryVerdict } from './gateway/status-codes.ts';

export type SmsState = 'QUEUED' | 'SENDING' | 'SENT' | 'DELIVERED' | 'UNDELIVERED' | 'REFUSED' | 'FAILED';

/** A claimed SMS: what one hand-over needs, and the lease recording it requires. */
export type ClaimedSms = {
  id: string;
  msisdn: string;
  text: string;
  attempts: number;
  unconfirmedSends: number;
  lease: string;
};

/** Past this many unconfirmed hand-overs an SMS is not sent again (docs/sms.md, "At most twice"). */
export const MAX_UNCONFIRMED_SENDS = 2;

/**
 * Claims up to `limit` SMS to hand over: QUEUED and due, or SENDING with a lapsed lease (the worker
 * that held it died, maybe after the gateway took it: that counts as an unconfirmed hand-over).
 * `for update skip locked`: each row goes to one worker; the lease marks it SENDING until then.
 */
export async function claimDueSms(
  q: Queryable,
  input: { limit: number; now: Date; leaseUntil: Date; organizations?: readonly string[] },
): Promise<ClaimedSms[]> {
  const now = input.now.toISOString();
  const lease = input.leaseUntil.toISOString();
  const scope: SQL = input.organizations
    ? sql`and q.organization_id = any(${sql.param([...input.organizations])}::text[])`
    : sql``;
  const claimed = await rows<Omit<ClaimedSms, 'lease'>>(
    q,
    sql`update sms_messages m set state = 'SENDING', locked_until = ${lease}::timestamptz,
  attempts = m.attempts + 1, updated_at = ${now}::timestamptz,
  unconfirmed_sends = m.unconfirmed_sends + case when m.state = 'SENDING' then 1 else 0 end
  from (select q.id from sms_messages q
    where ((q.state = 'QUEUED' and ${dueAt(sql`q.next_attempt_at`, now)})
      or (q.state = 'SENDING' and q.locked_until <= ${now}::timestamptz)) ${scope}
    order by q.next_attempt_at limit ${input.limit} for update of q skip locked) due
  where m.id = due.id
  returning m.id, m.msisdn, m.text, m.attempts, m.unconfirmed_sends as "unconfirmedSends"`,
  );
  return claimed.map((row) => ({ ...row, lease }));
}

/** What the worker decided after a hand-over (or instead of one). */
export type SmsChange =
  | { state: 'SENT'; outcome: Extract<SmsSendOutcome, { kind: 'accepted' }> }
  | { state: 'REFUSED'; outcome: Extract<SmsSendOutcome, { kind: 'refused' }> }
  | { state: 'QUEUED'; nextAttemptAt: Date; error: string; statusCode?: number; unconfirmed: boolean }
  | { state: 'FAILED'; error: string; statusCode?: number; unconfirmed: boolean };

/** Applies `change` while the lease is still ours; false when another worker took the SMS over. */
export async function settleSms(
  q: Queryable,
  sms: ClaimedSms,
  change: SmsChange,
  now: Date,
): Promise<boolean> {
  const at = now.toISOString();
  const held = sql`id = ${sms.id} and state = 'SENDING' and locked_until = ${sms.lease}::timestamptz`;
  let set: SQL;
  switch (change.state) {
    case 'SENT': {
      const o = change.outcome;
      set = sql`state = 'SENT', gateway_message_id = ${o.messageId}, status_code = ${o.statusCode},
  gateway_status = ${o.status}, cost = ${o.cost}, sent_at = ${at}::timestamptz, last_error = null`;
      break;
    }
    case 'REFUSED':
      set = sql`state = 'REFUSED', status_code = ${change.outcome.statusCode},
  gateway_status = ${change.outcome.status}, last_error = ${change.outcome.status}`;
      break;
    case 'QUEUED':
      set = sql`state = 'QUEUED', next_attempt_at = ${change.nextAttemptAt.toISOString()}::timestamptz,
  last_error = ${change.error}, status_code = coalesce(${change.statusCode ?? null}::int, status_code),
  unconfirmed_sends = unconfirmed_sends + ${change.unconfirmed ? 1 : 0}`;
      break;
    case 'FAILED':
      set = sql`state = 'FAILED', last_error = ${change.error},
  status_code = coalesce(${change.statusCode ?? null}::int, status_code),
  unconfirmed_sends = unconfirmed_sends + ${change.unconfirmed ? 1 : 0}`;
      break;
  }
  return (
    (await run(
      q,
      sql`update sms_messages set ${set}, locked_until = null, updated_at = ${at}::timestamptz where ${held}`,
    )) === 1
  );
}

/** Hands a claimed SMS back when recording its outcome failed: due again at `until`. */
export async function handBackSms(q: Queryable, sms: ClaimedSms, until: Date): Promise<boolean> {
  return (
    (await run(
      q,
      sql`update sms_messages set locked_until = ${until.toISOString()}::timestamptz
  where id = ${sms.id} and state = 'SENDING' and locked_until = ${sms.lease}::timestamptz`,
    )) > 0
  );
}

export type DeliveryReport = {
  id: string;
  status: string;
  phoneNumber?: string;
  networkCode?: string;
  failureReason?: string;
  retryCount?: string;
};

export type ReportOutcome = 'recorded' | 'unknown' | 'ignored';

/**
 * Records a delivery report against the SMS the gateway gave that message id, when the report's
 * number is the SMS's (reports are not signed: the id and the number must both match). Success
 * makes it DELIVERED; Rejected, Failed, Expired UNDELIVERED; others only note the status. A final
 * state never moves (a late "Sent" after "Success" is ignored).
 */
export async function recordDeliveryReport(
  q: Queryable,
  report: DeliveryReport,
  now: Date,
): Promise<ReportOutcome> {
  const sms = await one<{ id: string; msisdn: string; state: SmsState }>(
    q,
    sql`select id, msisdn, state from sms_messages where gateway_message_id = ${report.id} limit 1`,
  );
  if (!sms) return 'unknown';
  const digits = (report.phoneNumber ?? '').replace(/\D/g, '');
  if (digits !== sms.msisdn.replace(/\D/g, '')) return 'unknown';
  const verdict: DeliveryVerdict = deliveryVerdict(report.status);
  const state = verdict === 'delivered' ? 'DELIVERED' : verdict === 'undelivered' ? 'UNDELIVERED' : null;
  const at = now.toISOString();
  const changed = await run(
    q,
    sql`update sms_messages set delivery_status = ${report.status},
  failure_reason = ${report.failureReason ?? null},
  state = coalesce(${state}::text, state),
  delivered_at = case when ${state}::text = 'DELIVERED' then ${at}::timestamptz else delivered_at end,
  updated_at = ${at}::timestamptz
  where id = ${sms.id} and state in ('SENDING', 'SENT')`,
  );
  return changed === 1 ? 'recorded' : 'ignored';
}
