import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type ListeningApp,
  listeningPartner,
  listeningTestApp,
  sdkClient,
  until,
} from '@partner-api/testkit/listening.ts';
import { type Partner, signedFetch } from '@partner-api/testkit/partner.ts';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookVerificationError } from '../../sdk/src/index.ts';
import { PREVIEW_ENV } from '../../server/test/webhooks/api-support.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PARTNER = path.join(ROOT, 'packages/cli/src/partner.ts');

function partnerCli(args: string[], env: Record<string, string>): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, ['--conditions=@partner-api/source', '--import', 'tsx', PARTNER, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: 'pipe',
  });
}

function collect(child: ChildProcessWithoutNullStreams) {
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk) => (output.stdout += chunk));
  child.stderr.on('data', (chunk) => (output.stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return { output, exited };
}

const loginArgs = (baseUrl: string, partner: Partner, keyFile: string) => [
  'login',
  ...['--base-url', baseUrl, '--client-id', partner.clientId, '--client-secret', partner.clientSecret],
  ...['--private-key', keyFile, '--key-id', partner.keyId],
];

type Received = {
  verified: boolean;
  reason?: string;
  envelope?: { event: string; eventId: string; data: Record<string, unknown> };
};

/**
 * The partner's own receiver, as packages/sdk/README.md shows it for Fastify: the raw body through a
 * route-level parser, the URL from the origin it is reached at, the SDK's verify; 204 or 400.
 */
async function receiver(partner: Partner) {
  const client = sdkClient(partner);
  const received: Received[] = [];
  const app = Fastify();
  let origin = '';
  await app.register(async (hooks) => {
    hooks.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) =>
      done(null, body),
    );
    hooks.post('/hooks', async (request, reply) => {
      try {
        const envelope = await client.webhooks.verify({
          method: request.method,
          url: new URL(request.url, origin).href,
          headers: request.headers,
          body: request.body as Buffer,
        });
        received.push({ verified: true, envelope });
        return reply.code(204).send();
      } catch (error) {
        if (!(error instanceof WebhookVerificationError)) throw error;
        received.push({ verified: false, reason: error.reason });
        return reply.code(400).send({ reason: error.reason });
      }
    });
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  origin = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  return { app, received, forwardTo: `${origin}/hooks` };
}

describe('partner listen and partner events', () => {
  let t: ListeningApp;
  let partner: Partner;
  let env: Record<string, string>;

  beforeAll(async () => {
    t = await listeningTestApp('pglite', PREVIEW_ENV);
    partner = await listeningPartner(t);
    const dir = t.dataDir;
    const keyFile = path.join(dir, 'partner-key.pem');
    writeFileSync(keyFile, partner.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString());
    env = { PARTNER_PROFILE: path.join(dir, 'profile.json') };
    const login = collect(partnerCli(loginArgs(t.baseUrl, partner, keyFile), env));
    expect(await login.exited, login.output.stderr).toBe(0);
  });
  afterAll(() => t?.close());

  it('forwards a CUSTOMER.CREATED to a local server, whose handler verifies it with the SDK', async () => {
    const { app, received, forwardTo } = await receiver(partner);
    const child = partnerCli(['listen', '--forward-to', forwardTo], env);
    const { output, exited } = collect(child);
    try {
      await until('the stream to open', () => output.stderr.includes('Ready: forwarding'));

      const res = await signedFetch(partner, {
        method: 'POST',
        url: '/v1/customers',
        body: { firstName: 'Amina', lastName: 'Otieno', msisdn: '254712000001' },
      });
      expect(res.status).toBe(201);
      const customer = ((await res.json()) as { data: Record<string, unknown> }).data;
      await until('the forwarded delivery', () =>
        received.some((r) => r.envelope?.event === 'CUSTOMER.CREATED' && r.envelope.data.id === customer.id),
      );
      expect(received.filter((r) => !r.verified)).toEqual([]);
      // The API's own event, committed with the customer (helper A's emission), forwarded once.
      const forCustomer = received.filter((r) => r.envelope?.data.id === customer.id);
      expect(forCustomer).toHaveLength(1);
      const delivered = forCustomer[0]!.envelope!;
      expect(delivered.data).toMatchObject({ id: customer.id, firstName: 'Amina', lastName: 'Otieno' });
      // One line per event: event, eventId, the local receiver's status.
      await until('the printed line', () => output.stdout.includes(delivered.eventId));
      expect(output.stdout).toMatch(new RegExp(`^CUSTOMER\\.CREATED +${delivered.eventId}  204$`, 'm'));
    } finally {
      child.kill('SIGINT');
      expect(await exited).toBe(0);
      await app.close();
    }
  });

  it('events list shows the history with delivery status; events resend delivers one again', async () => {
    const run = async (args: string[]) => {
      const { output, exited } = collect(partnerCli(args, env));
      return { code: await exited, ...output };
    };
    await sdkClient(partner).webhooks.create({
      url: 'https://hooks.localhost/partner',
      subscriptions: ['ALL'],
    });
    const res = await signedFetch(partner, {
      method: 'POST',
      url: '/v1/customers',
      body: { firstName: 'Brian', lastName: 'Kamau' },
    });
    const customerId = ((await res.json()) as { data: { id: string } }).data.id;

    const json = await run(['--json', 'events', 'list', '--limit', '100']);
    expect(json.code, json.stderr).toBe(0);
    const listed = JSON.parse(json.stdout) as {
      data: { eventId: string; event: string; data: { id?: string } }[];
    };
    const event = listed.data.find((e) => e.event === 'CUSTOMER.CREATED' && e.data.id === customerId)!;
    expect(event).toBeDefined();

    const plain = await run(['events', 'list', '--limit', '100']);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(
      new RegExp(`^\\S+Z  CUSTOMER\\.CREATED +${event.eventId}  (PENDING|FAILED) +\\d+ attempts`, 'm'),
    );
    expect(plain.stdout).toMatch(/^page 1\/1, \d+ events\n$/m);

    const failed = await run(['events', 'list', '--failed']);
    expect(failed.code).toBe(0);
    for (const line of failed.stdout.trim().split('\n').slice(0, -1)) expect(line).toContain('  FAILED');

    const resent = await run(['events', 'resend', event.eventId]);
    expect(resent.code, resent.stderr).toBe(0);
    expect(resent.stdout).toMatch(new RegExp(`^Resending ${event.eventId} \\(delivery \\S+\\)\n$`));

    const unknown = await run(['events', 'resend', '00000000-0000-4000-8000-000000000000']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^partner: 404 Not found: Event not found\n/);
  });

  it('stops with the API error when the server has the preview off', async () => {
    const off = await listeningTestApp('pglite');
    try {
      const other = await listeningPartner(off);
      const profile = { ...env, PARTNER_PROFILE: path.join(off.dataDir, 'profile.json') };
      const keyFile = path.join(off.dataDir, 'key.pem');
      writeFileSync(keyFile, other.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString());
      const login = collect(partnerCli(loginArgs(off.baseUrl, other, keyFile), profile));
      expect(await login.exited, login.output.stderr).toBe(0);
      const listen = collect(partnerCli(['listen', '--forward-to', 'http://localhost:3000/hooks'], profile));
      expect(await listen.exited).toBe(1);
      expect(listen.output.stderr).toMatch(/^partner: 404 Not Found\n {2}request id: \S+\n$/);
      expect(listen.output.stdout).toBe('');
    } finally {
      await off.close();
    }
  });
});
