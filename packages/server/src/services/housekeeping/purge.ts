import { type SQL, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { run } from '../../db/query.ts';
import { settleDueExecutions } from '../orders/life.ts';
import { type EventOutbox, NO_EVENTS } from '../webhooks/outbox.ts';

/** Rows deleted per statement: short transactions, no long lock on a busy table. */
const BATCH = 1000;

/** An ended USSD session is kept this long (a late request then gets 400 "expired", later 404). */
export const USSD_SESSION_RETENTION_SECONDS = 86_400;

/** Webhook events are kept 30 days (GET /v1/webhooks/events lists that much; docs/webhooks.md). */
export const WEBHOOK_EVENT_RETENTION_DAYS = 30;

const oldEvent = sql`e.created_at <= now() - make_interval(days => ${WEBHOOK_EVENT_RETENTION_DAYS})`;

export type PurgeCounts = {
  idempotencyKeys: number;
  revokedTokens: number;
  ussdSessions: number;
  webhookAttempts: number;
  webhookDeliveries: number;
  webhookEvents: number;
};

/**
 * Deletes what no request can need any more, in batches:
 * - idempotency records past their retention (`IDEMPOTENCY_TTL_SECONDS`), unless a request still
 *   holds their lock: a claim would take such a record over anyway;
 * - revocations of tokens that have expired (an expired token is refused before its revocation is
 *   read), a minute after their expiry;
 * - USSD sessions that expired more than a day ago;
 * - webhook events older than 30 days with their deliveries and attempts, children first; a
 *   delivery still PENDING (a late resend) keeps its event until it ends.
 * Safe on several instances at once: each statement deletes what it finds, and a row another
 * instance deleted first is simply not counted twice.
 */
export async function purgeExpired(db: Queryable): Promise<PurgeCounts> {
  return {
    idempotencyKeys: await deleteInBatches(
      db,
      sql`idempotency_keys`,
      sql`expires_at <= now() and (locked_until is null or locked_until <= now())`,
    ),
    revokedTokens: await deleteInBatches(
      db,
      sql`revoked_tokens`,
      sql`expires_at <= now() - interval '1 minute'`,
    ),
    ussdSessions: await deleteInBatches(
      db,
      sql`ussd_sessions`,
      sql`expires_at <= now() - make_interval(secs => ${USSD_SESSION_RETENTION_SECONDS})`,
    ),
    webhookAttempts: await deleteInBatches(
      db,
      sql`webhook_attempts`,
      sql`delivery_id in (select d.id from webhook_deliveries d join webhook_events e on e.id = d.event_id
  where ${oldEvent} and d.state <> 'PENDING')`,
    ),
    webhookDeliveries: await deleteInBatches(
      db,
      sql`webhook_deliveries`,
      sql`state <> 'PENDING' and event_id in (select e.id from webhook_events e where ${oldEvent})`,
    ),
    webhookEvents: await deleteInBatches(
      db,
      sql`webhook_events`,
      sql`created_at <= now() - make_interval(days => ${WEBHOOK_EVENT_RETENTION_DAYS})
  and not exists (select 1 from webhook_deliveries d where d.event_id = webhook_events.id)`,
    ),
  };
}

async function deleteInBatches(db: Queryable, table: SQL, where: SQL): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await run(
      db,
      sql`delete from ${table} where ctid in (select ctid from ${table} where ${where} limit ${BATCH})`,
    );
    total += deleted;
    if (deleted < BATCH) return total;
  }
}

const FIRST_RUN_MS = 30_000;
const INTERVAL_MS = 600_000;

type Log = { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };

/**
 * Purges every 10 minutes (first 30 s after start) in a serving process; each instance of a
 * deployment runs it, which is harmless (see purgeExpired). Counted in
 * `housekeeping_deleted_total{table}`; a failed run is logged and retried at the next tick.
 */
export function startHousekeeping(
  db: Queryable,
  log: Log,
  onDeleted: (counts: PurgeCounts) => void,
  now: () => Date = () => new Date(),
  /** The outbox for the ASSET and PORTFOLIO events of settled units. */
  events: EventOutbox = NO_EVENTS,
  /** The month's statements once due (services/reports/statement.ts); returns how many it wrote. */
  statements?: (now: Date) => Promise<number>,
): { stop(): void } {
  let running = false;
  const run = async () => {
    if (running) return;
    running = true;
    try {
      const counts = await purgeExpired(db);
      onDeleted(counts);
      // Executions whose settlement date has come are SETTLED (docs/market.md, "Executions").
      const settled = await settleDueExecutions(db, now(), events);
      if (settled > 0) log.info({ settled }, 'housekeeping: executions settled');
      // The month before's statements, from 01:00 EAT on the 1st; later ticks find none left to write.
      const written = (await statements?.(now())) ?? 0;
      if (written > 0) log.info({ written }, 'housekeeping: monthly statements written');
      if (Object.values(counts).some((n) => n > 0)) {
        log.info({ deleted: counts }, 'housekeeping: expired records purged');
      }
    } catch (error) {
      log.warn({ err: error }, 'housekeeping: purge failed; retrying at the next tick');
    } finally {
      running = false;
    }
  };
  const first = setTimeout(run, FIRST_RUN_MS).unref();
  const every = setInterval(run, INTERVAL_MS).unref();
  return {
    stop() {
      clearTimeout(first);
      clearInterval(every);
    },
  };
}
