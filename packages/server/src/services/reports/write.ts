import { createId, type Report, type ReportType } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import { type Config, SANDBOX_PLATFORM } from '../../config.ts';
import type { Queryable } from '../../db/client.ts';
import { one } from '../../db/query.ts';
import { presentReport, type ReportRow, reportColumns } from '../investments/ledger.ts';
import type { EventOutbox } from '../webhooks/outbox.ts';

/**
 * Writing reports (docs/investments.md, Reports): immutable rows, one original per subject (a
 * confirmation's execution, a statement's month), a correction a new row naming the one it
 * replaces. Each is announced by REPORT.CREATED in its own transaction, with the investments events
 * only (EventOutbox.investments: INVESTMENTS_PREVIEW).
 */

export type ReportSettings = Pick<Config, 'PLATFORM_NAME' | 'PLATFORM_LICENCE'>;

/** What writing a report needs: the outbox and the operator's settings (none: sandbox issuer, no event). */
export type ReportDeps = { events: EventOutbox; config?: ReportSettings };

export const platformOf = (config?: ReportSettings) => ({
  name: config?.PLATFORM_NAME ?? SANDBOX_PLATFORM.name,
  licence: config?.PLATFORM_LICENCE ?? SANDBOX_PLATFORM.licence,
});

export type NewReport = {
  organizationId: string;
  customerId: string;
  type: ReportType;
  subject: string;
  data: Record<string, unknown>;
  createdAt: Date;
};

/**
 * The original report of its subject, written once: when another writer got there first (another
 * instance, a retried run), nothing is written and undefined is returned.
 */
export async function writeReport(q: Queryable, deps: ReportDeps, report: NewReport) {
  const row = await one<ReportRow>(
    q,
    sql`insert into reports (id, organization_id, customer_id, type, data, subject, created_at)
  values (${createId()}, ${report.organizationId}, ${report.customerId}, ${report.type},
    ${JSON.stringify(report.data)}::jsonb, ${report.subject}, ${report.createdAt.toISOString()}::timestamptz)
  on conflict (customer_id, type, subject) where replaces is null and subject is not null do nothing
  returning ${reportColumns}`,
  );
  return row && announced(q, deps, report.organizationId, presentReport(row));
}

export class ReportNotCorrectableError extends Error {}

/**
 * A correction: a new report of the same customer, type and subject with new `data`, naming the
 * report it replaces, which must be the latest of its chain (a report is corrected once; correct
 * the correction after that). The replaced row is never touched (a trigger refuses updates).
 */
export async function correctReport(
  q: Queryable,
  deps: ReportDeps,
  input: { organizationId: string; replaces: string; data: Record<string, unknown>; createdAt: Date },
): Promise<Report> {
  const row = await one<ReportRow>(
    q,
    sql`insert into reports (id, organization_id, customer_id, type, data, subject, replaces, created_at)
  select ${createId()}, r.organization_id, r.customer_id, r.type, ${JSON.stringify(input.data)}::jsonb,
    r.subject, r.id, ${input.createdAt.toISOString()}::timestamptz
  from reports r where r.id = ${input.replaces} and r.organization_id = ${input.organizationId}
  on conflict (replaces) where replaces is not null do nothing
  returning ${reportColumns}`,
  );
  if (!row) throw new ReportNotCorrectableError(`report ${input.replaces} is unknown or already corrected`);
  return announced(q, deps, input.organizationId, presentReport(row));
}

async function announced(q: Queryable, deps: ReportDeps, organizationId: string, report: Report) {
  if (deps.events.investments) {
    await deps.events.emit(q, { organizationId, event: 'REPORT.CREATED', data: report });
  }
  return report;
}
