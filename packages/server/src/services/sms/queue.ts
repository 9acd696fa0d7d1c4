import { createId } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { one, run } from '../../db/query.ts';
import { message } from '../../i18n/index.ts';
import { investorLanguageSql, languageOf } from '../../i18n/investor-language.ts';
import { SMS_MESSAGE_IDS, type SmsRequest } from './messages.ts';

/**
 * The investor SMS outbox as the changes that cause an SMS see it (docs/sms.md, "The queue"):
 * `queue` runs on the caller's transaction, so the SMS exists exactly when its cause commits.
 * `NO_SMS` (no gateway configured) queues nothing.
 */
export interface SmsOutbox {
  readonly enabled: boolean;
  /** Queues `request` (none: nothing to say); false when not queued (turned off, no number, a repeat). */
  queue(tx: Queryable, request: SmsRequest | undefined): Promise<boolean>;
}

export const NO_SMS: SmsOutbox = { enabled: false, queue: async () => false };

export function createSmsOutbox(): SmsOutbox {
  return {
    enabled: true,
    queue: (tx, request) => (request ? queueSms(tx, request) : Promise.resolve(false)),
  };
}

/**
 * Writes one SMS in the caller's transaction: to the customer's number, in their language, its
 * text rendered now (what was sent is what the row says). Nothing when the organization turned
 * investor SMS off or the customer has no number; once per event key (`on conflict do nothing`).
 */
export async function queueSms(tx: Queryable, request: SmsRequest): Promise<boolean> {
  const owner = await one<{
    msisdn: string | null;
    enabled: boolean;
    symbol: string | null;
    language: string | null;
  }>(
    tx,
    sql`select c.msisdn, o.sms_enabled as enabled, ${investorLanguageSql(sql`o.id`, sql`c.id`)} as language,
  (select symbol from stocks where id = ${request.stockId ?? null}::text) as symbol
  from customers c join organizations o on o.id = c.organization_id
  where c.id = ${request.customerId} and o.id = ${request.organizationId}`,
  );
  if (!owner?.enabled || !owner.msisdn) return false;
  // The customer's language, else the organization's (docs/languages.md, "Which language").
  const language = languageOf(owner.language);
  const text = message(language, SMS_MESSAGE_IDS[request.kind], { ...request.values, symbol: owner.symbol });
  const inserted = await run(
    tx,
    sql`insert into sms_messages (id, organization_id, customer_id, msisdn, kind, event_key, language, text)
  values (${createId()}, ${request.organizationId}, ${request.customerId}, ${owner.msisdn}, ${request.kind},
    ${request.eventKey}, ${language}, ${text})
  on conflict (event_key) do nothing`,
  );
  return inserted === 1;
}
