import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { guardProviderCallbacks, pathTokenMatcher } from '../payments/providers/callback-guard.ts';
import { lookUpWithin } from '../payments/providers/match-wait.ts';
import type { AtSmsSettings } from './gateway/settings.ts';
import { type DeliveryReport, recordDeliveryReport } from './store.ts';

/** Relative to /v1. */
export const AT_SMS_REPORT_ROUTE = '/sms/callbacks/africastalking/:token';

/**
 * A delivery report's body: form-encoded as Africa's Talking sends it (a JSON object is read too).
 * Undefined without an `id` and a `status`.
 */
export function parseDeliveryReport(raw: string): DeliveryReport | undefined {
  let fields: Record<string, unknown>;
  if (raw.trimStart().startsWith('{')) {
    try {
      fields = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  } else fields = Object.fromEntries(new URLSearchParams(raw));
  const text = (key: string) =>
    typeof fields[key] === 'string' || typeof fields[key] === 'number' ? String(fields[key]) : undefined;
  const id = text('id');
  const status = text('status');
  if (!id || !status) return undefined;
  const optional = (key: 'phoneNumber' | 'networkCode' | 'failureReason' | 'retryCount') => {
    const value = text(key);
    return value ? { [key]: value } : {};
  };
  return {
    id,
    status,
    ...optional('phoneNumber'),
    ...optional('networkCode'),
    ...optional('failureReason'),
    ...optional('retryCount'),
  };
}

/**
 * POST /v1/sms/callbacks/africastalking/{token}: Africa's Talking's delivery reports, outside the
 * partner authentication. A wrong token is the unknown route's 404. Reports are not signed: one is
 * recorded only for a message id the gateway gave one of our SMS, sent to the report's number;
 * every report under the right token is answered 200 (an unknown one is logged, never applied).
 */
export async function smsReportRoutes(
  app: FastifyInstance,
  { ctx, settings }: { ctx: AppContext; settings: AtSmsSettings },
) {
  const tokenMatches = pathTokenMatcher(settings.callbackToken);
  const valid = (request: FastifyRequest) => tokenMatches((request.params as { token?: string }).token);
  guardProviderCallbacks(app, {
    ctx,
    provider: "Africa's Talking SMS",
    valid,
    allowedIps: [],
    ack: undefined,
  });
  app.post(
    AT_SMS_REPORT_ROUTE,
    { config: { rateLimitExempt: valid, redactParams: ['token'] } },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const report = parseDeliveryReport(request.rawBody ?? '');
      if (!report) {
        request.log.warn({ bytes: (request.rawBody ?? '').length }, 'SMS delivery report: malformed body');
        return reply.code(200).send();
      }
      try {
        // A report can overtake the commit of the answer that recorded its message id: look again a while.
        const outcome = await lookUpWithin(async () => {
          const result = await recordDeliveryReport(ctx.database.db, report, new Date());
          return result === 'unknown' ? undefined : result;
        }, 1000);
        if (!outcome)
          request.log.warn(
            { messageId: report.id, status: report.status },
            'SMS delivery report: no SMS of ours',
          );
      } catch (err) {
        request.log.error({ err, messageId: report.id }, 'SMS delivery report not recorded');
      }
      return reply.code(200).send();
    },
  );
}
