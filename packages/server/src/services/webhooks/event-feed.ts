import type { WebhookEnvelope } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { dateOf, one, rows } from '../../db/query.ts';
import { unixOf } from './present.ts';

/**
 * An organization's new events, read from the outbox by polling (docs/webhooks.md, "partner listen
 * and events"): any instance can serve a listener, and nothing is kept in a process-local queue.
 *
 * `created_at` is the time the writing transaction began, so an event can commit after a later-
 * stamped one has been read. Each poll therefore looks back LOOKBACK_SECONDS before the newest
 * stamp it has seen and skips the ids it already sent: an event whose transaction ran for less than
 * that is never missed, and none is sent twice.
 */
export const LOOKBACK_SECONDS = 30;
const BATCH = 100;

type Row = { id: string; event: string; data: Record<string, unknown>; createdAt: string };

export class EventFeed {
  /** Sent (or present at connection) ids, with the time they were stamped. */
  private readonly seen = new Map<string, number>();

  private constructor(
    private readonly organizationId: string,
    /** The newest created_at seen, as the database prints it (microseconds kept). */
    private since: string,
  ) {}

  /** A feed of the events that commit from now on: the ones already there are marked seen. */
  static async start(q: Queryable, organizationId: string): Promise<EventFeed> {
    const { now } = (await one<{ now: string }>(q, sql`select now()::text as now`))!;
    const feed = new EventFeed(organizationId, now);
    const existing = await rows<{ id: string; createdAt: string }>(
      q,
      sql`select id, created_at::text as "createdAt" from webhook_events
 where organization_id = ${organizationId}
   and created_at > ${now}::timestamptz - make_interval(secs => ${LOOKBACK_SECONDS})`,
    );
    for (const row of existing) feed.seen.set(row.id, dateOf(row.createdAt).getTime());
    return feed;
  }

  /** The events committed since the last call, oldest stamp first. */
  async next(q: Queryable): Promise<WebhookEnvelope[]> {
    const found = await rows<Row>(
      q,
      sql`select id, event, data, created_at::text as "createdAt" from webhook_events
 where organization_id = ${this.organizationId}
   and created_at > ${this.since}::timestamptz - make_interval(secs => ${LOOKBACK_SECONDS})
   and not (id = any(${sql.param([...this.seen.keys()])}::text[]))
 order by created_at, id
 limit ${BATCH}`,
    );
    for (const row of found) {
      const stamped = dateOf(row.createdAt).getTime();
      this.seen.set(row.id, stamped);
      if (stamped > dateOf(this.since).getTime()) this.since = row.createdAt;
    }
    this.forgetOld();
    return found.map((row) => ({
      eventId: row.id,
      event: row.event,
      createdAt: unixOf(row.createdAt),
      data: row.data,
    }));
  }

  /** Ids stamped well before the look-back window can no longer be read again. */
  private forgetOld(): void {
    const horizon = dateOf(this.since).getTime() - (LOOKBACK_SECONDS + 5) * 1000;
    for (const [id, stamped] of this.seen) if (stamped < horizon) this.seen.delete(id);
  }
}

export type EventSummary = { eventId: string; event: string; createdAt: number };

/** The organization's latest events, newest first: names and ids only (the sandbox handset's panel). */
export async function recentEvents(
  q: Queryable,
  organizationId: string,
  limit: number,
): Promise<EventSummary[]> {
  const found = await rows<{ eventId: string; event: string; createdAt: string }>(
    q,
    sql`select id as "eventId", event, created_at::text as "createdAt" from webhook_events
 where organization_id = ${organizationId}
 order by created_at desc, id desc
 limit ${limit}`,
  );
  return found.map((row) => ({ ...row, createdAt: unixOf(row.createdAt) }));
}
