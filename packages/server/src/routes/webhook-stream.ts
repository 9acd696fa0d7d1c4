import { isIP } from 'node:net';
import { PassThrough } from 'node:stream';
import { signWebhookDelivery, type WebhookEnvelope } from '@partner-api/contract';
import type { FastifyInstance } from 'fastify';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { loadCaller } from '../services/auth/load-caller.ts';
import { EventFeed } from '../services/webhooks/event-feed.ts';
import { webhookSigningKey } from '../services/webhooks/signing-key.ts';
import type { RouteDeps } from './deps.ts';

export const STREAM_POLL_MS = 1000;
export const STREAM_KEEP_ALIVE_MS = 15_000;

const FORWARD_MESSAGE =
  'forwardTo must be an http or https URL on this machine (localhost, *.localhost or a loopback address)';

/**
 * The stream signs deliveries with the service's key for the URL the caller names. Were any URL
 * allowed, one partner could obtain a valid signature for another partner's public receiver and
 * replay its own events there; a loopback URL is one no deployed receiver verifies against.
 */
export function isLocalForwardUrl(raw: string): boolean {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  if (url.username !== '' || url.password !== '') return false;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return isIP(host) !== 0 && ipaddr.process(host).range() === 'loopback';
}

const streamQuerySchema = z.strictObject({
  forwardTo: z.string({ error: FORWARD_MESSAGE }).refine(isLocalForwardUrl, FORWARD_MESSAGE),
});

/** One SSE message: the envelope and the signed headers of its delivery to `forwardTo`. */
function message(envelope: WebhookEnvelope, headers: Record<string, string>): string {
  return `event: webhook\nid: ${envelope.eventId}\ndata: ${JSON.stringify({ envelope, headers })}\n\n`;
}

/**
 * GET /v1/webhooks/events/stream?forwardTo=<local URL> (preview only; docs/webhooks.md, "partner
 * listen and events"): the caller's organization's events from the moment of connection, as
 * text/event-stream, each with the headers of a delivery to `forwardTo` signed afresh with the
 * service's webhook key, so that `partner listen` forwards them unchanged and the local receiver
 * verifies them with the published key. Registered inside the authenticated scope: token, client
 * id, allowlist and signature are checked at connection; before every read the caller is loaded
 * again from the database, so the stream ends at the first poll after the token is revoked or the
 * credential or organization deactivated (on any instance). It also ends at the token's expiry, on
 * client disconnect and when the server closes.
 */
export async function webhookStreamRoute(app: FastifyInstance, { ctx }: RouteDeps) {
  const db = ctx.database.db;
  const { keyId, privateKey } = webhookSigningKey(ctx);
  const open = new Set<() => void>();
  // Before close waits for in-flight requests: an open stream would hold it forever.
  app.addHook('preClose', async () => {
    for (const end of open) end();
  });

  app.get<{ Querystring: z.output<typeof streamQuerySchema> }>(
    '/webhooks/events/stream',
    { schema: { querystring: streamQuerySchema } },
    async (request, reply) => {
      const { organizationId, tokenExpiresAt, credentialId, tokenId } = request.auth!;
      // What authorised the stream still holds: not revoked, credential and organization active.
      const stillAuthorised = async () => {
        const caller = await loadCaller({ db, credentialId, jti: tokenId });
        return (
          caller !== undefined &&
          !caller.revoked &&
          caller.isActive &&
          caller.organizationActive &&
          (caller.expiresAt === null || caller.expiresAt.getTime() > Date.now())
        );
      };
      const forwardTo = new URL(request.query.forwardTo).href;
      const feed = await EventFeed.start(db, organizationId);
      const out = new PassThrough();
      let poll: NodeJS.Timeout | undefined;
      const keepAlive = setInterval(() => out.write(': keep-alive\n\n'), STREAM_KEEP_ALIVE_MS);
      // The token authorised the stream: it does not outlive it (the CLI reconnects with a new one).
      const untilExpiry = Math.min(2 ** 31 - 1, Math.max(0, tokenExpiresAt.getTime() - Date.now()));
      const expiry = setTimeout(() => end(), untilExpiry);
      const end = () => {
        clearTimeout(poll);
        clearInterval(keepAlive);
        clearTimeout(expiry);
        open.delete(end);
        if (!out.writableEnded) out.end();
      };
      open.add(end);
      // Fastify destroys the payload stream when the client goes away.
      out.on('close', end);

      const tick = async () => {
        try {
          if (!(await stillAuthorised())) return end();
          for (const envelope of await feed.next(db)) {
            // Ended while the read was under way: nothing more is written.
            if (!out.writable) break;
            const body = JSON.stringify(envelope);
            const headers = signWebhookDelivery({
              url: forwardTo,
              body,
              eventId: envelope.eventId,
              keyId,
              privateKey,
            });
            out.write(message(envelope, headers));
          }
        } catch (error) {
          // A failed read (a database restart) is retried at the next tick; the stream stays open.
          request.log.warn({ err: error }, 'webhook event stream: read failed');
        }
        if (open.has(end)) poll = setTimeout(() => void tick(), STREAM_POLL_MS);
      };
      poll = setTimeout(() => void tick(), STREAM_POLL_MS);

      // The first bytes send the headers: the client knows it is connected before any event.
      out.write(': connected\n\n');
      return reply
        .header('cache-control', 'no-store')
        .header('x-accel-buffering', 'no')
        .type('text/event-stream; charset=utf-8')
        .send(out);
    },
  );
}
