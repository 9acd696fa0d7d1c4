import { setTimeout as sleep } from 'node:timers/promises';
import type { PartnerClient, StreamedWebhookEvent, WebhookEventRecord } from '@partner-api/sdk';
import { type Out, printJson } from './format.ts';

const iso = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString().replace('.000Z', 'Z');

/** One line per event: time, name, eventId, delivery status, attempts and the last attempt's outcome. */
export function eventRow(e: WebhookEventRecord): string {
  const last = e.attempts[e.attempts.length - 1];
  const outcome = last ? (last.error ?? `HTTP ${last.httpStatus}`) : '';
  return [
    iso(e.createdAt),
    e.event.padEnd(19),
    e.eventId,
    e.status.padEnd(14),
    `${e.attempts.length} attempts`,
    outcome,
  ]
    .join('  ')
    .trimEnd();
}

export type ListenIo = { out: Out; err: Out; json: boolean; signal: AbortSignal };

/** What the local receiver answered, or why it could not be reached. */
async function forward(forwardTo: string, event: StreamedWebhookEvent, signal: AbortSignal): Promise<string> {
  try {
    // The headers exactly as the service signed them for this URL: the receiver verifies them.
    const response = await fetch(forwardTo, {
      method: 'POST',
      headers: event.headers,
      body: event.body,
      redirect: 'manual',
      signal: AbortSignal.any([signal, AbortSignal.timeout(10_000)]),
    });
    await response.arrayBuffer();
    return String(response.status);
  } catch (error) {
    if (signal.aborted) return 'stopped';
    const cause = (error as { cause?: { code?: string } }).cause;
    return `error ${cause?.code ?? (error as Error).name}`;
  }
}

/**
 * `partner listen --forward-to <url>`: reads the organization's event stream and POSTs each event,
 * with the headers the service signed for that URL, to the local receiver; one line per event
 * (event, eventId, the receiver's status). Reconnects when the stream ends (token expiry, a server
 * restart) until the signal stops it.
 */
export async function listen(client: PartnerClient, forwardTo: string, io: ListenIo): Promise<number> {
  let delayMs = 500;
  while (!io.signal.aborted) {
    try {
      const stream = client.webhooks.events.stream({
        forwardTo,
        signal: io.signal,
        onOpen: () => {
          delayMs = 500;
          io.err.write(`Ready: forwarding ${client.baseUrl} events to ${forwardTo} (Ctrl-C to stop)\n`);
        },
      });
      for await (const event of stream) {
        const status = await forward(forwardTo, event, io.signal);
        const { event: name, eventId } = event.envelope;
        if (io.json) printJson(io.out, { event: name, eventId, status });
        else io.out.write(`${name.padEnd(19)}  ${eventId}  ${status}\n`);
      }
    } catch (error) {
      if (io.signal.aborted) break;
      // A refusal (401, 404: preview off, 400) will not cure itself: stop. 429 and 5xx may.
      const status = (error as { status?: number }).status;
      if (status !== undefined && status >= 400 && status < 500 && status !== 429) throw error;
      io.err.write(`partner: stream interrupted (${(error as Error).message}); reconnecting\n`);
    }
    await sleep(delayMs, undefined, { signal: io.signal }).catch(() => {});
    delayMs = Math.min(delayMs * 2, 30_000);
  }
  return 0;
}
