import type { AppContext } from '../../context.ts';
import { handBackAfterFailure, startPassLoop } from '../../lib/pass-loop.ts';
import type { Log } from '../payments/provider.ts';
import { afterSend, exhaustedBeforeSend, type SmsRetrySettings } from './decide.ts';
import type { SmsGateway } from './gateway/client.ts';
import { claimDueSms, handBackSms, settleSms } from './store.ts';

export type SmsWorker = {
  nudge(): void;
  stop(): Promise<void>;
  /** Resolves after the next complete pass (tests). */
  settled(): Promise<void>;
};

const BATCH = 10;

/** The sms_sends_total label of each state a hand-over leaves an SMS in. */
const SMS_OUTCOMES = { SENT: 'sent', REFUSED: 'refused', QUEUED: 'retried', FAILED: 'failed' } as const;

export type SmsWorkerOptions = {
  /** Tests only: claim this organization's SMS alone (the shared PostgreSQL holds other suites'). */
  organizations?: ReadonlySet<string>;
  startDelayMs?: number;
};

/** One pass: claim due SMS, hand each to the gateway, record each outcome. True when there may be more. */
export async function runSmsOnce(
  ctx: Pick<AppContext, 'database'> & {
    config: SmsRetrySettings & { SMS_LEASE_SECONDS: number };
    metrics?: Pick<AppContext['metrics'], 'smsSends'>;
  },
  gateway: SmsGateway,
  log: Log,
  options: SmsWorkerOptions = {},
): Promise<boolean> {
  const db = ctx.database.db;
  const now = new Date();
  const claimed = await claimDueSms(db, {
    limit: BATCH,
    now,
    leaseUntil: new Date(now.getTime() + ctx.config.SMS_LEASE_SECONDS * 1000),
    ...(options.organizations ? { organizations: [...options.organizations] } : {}),
  });
  await Promise.all(
    claimed.map(async (sms) => {
      const exhausted = exhaustedBeforeSend(sms);
      const outcome = exhausted ? undefined : await gateway.send({ to: sms.msisdn, message: sms.text });
      const change = exhausted ?? afterSend(sms, outcome!, ctx.config, new Date());
      try {
        if (await settleSms(db, sms, change, new Date()))
          ctx.metrics?.smsSends.inc({ outcome: SMS_OUTCOMES[change.state] });
        if (change.state === 'REFUSED' || change.state === 'FAILED')
          log.warn({ sms: sms.id, state: change.state, outcome: outcome?.kind }, 'investor SMS not sent');
      } catch (err) {
        const until = new Date(Date.now() + 5000);
        const { what } = await handBackAfterFailure(
          () => handBackSms(db, sms, until),
          sms.lease,
          until,
          'handed back',
        );
        log.error({ err, sms: sms.id, outcome: outcome?.kind }, `investor SMS outcome not recorded; ${what}`);
      }
    }),
  );
  return claimed.length === BATCH;
}

/**
 * This instance's SMS worker (every instance runs one when a gateway is configured, server.ts):
 * nothing in memory; every SMS lives in sms_messages and is claimed with a lease, so instances
 * share the work and a dead one's claims lapse to the others.
 */
export function startSmsWorker(
  ctx: AppContext,
  gateway: SmsGateway,
  log: Log,
  options: SmsWorkerOptions = {},
): SmsWorker {
  const loop = startPassLoop({
    intervalMs: ctx.config.SMS_WORKER_INTERVAL_MS,
    startDelayMs: options.startDelayMs ?? ctx.config.SMS_WORKER_START_DELAY_MS,
    pass: () => runSmsOnce(ctx, gateway, log, options),
    onError: (err) => log.error({ err }, 'SMS worker pass failed'),
  });
  return { nudge: loop.nudge, stop: loop.stop, settled: loop.settled };
}
