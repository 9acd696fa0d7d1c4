import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ListeningApp,
  listeningPartner,
  listeningTestApp,
  sdkClient,
  until,
} from '../../server/test/support/listening.ts';
import { type Partner, signedFetch } from '../../server/test/support/partner.ts';

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

type Received = {
  verified: boolean;
  reason?: string;
  envelope?: { event: string; eventId: string; data: Record<string, unknown> };
};

/**
 * The partner's own receiver, as docs/webhooks.md shows it: the raw body, the URL it is reached at,
 * and the SDK's verify; 204 when the delivery verifies, 400 otherwise.
 */
function receiver(partner: Partner) {
  const verifier = sdkClient(partner);
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      try {
        const envelope = await verifier.webhooks.verify({
          method: req.method!,
          url: `http://${req.headers.host}${req.url}`,
          headers: req.headers,
          body: Buffer.concat(chunks),
        });
        received.push({ verified: true, envelope });
        res.writeHead(204).end();
      } catch (error) {
        received.push({ verified: false, reason: (error as { reason?: string }).reason });
        res.writeHead(400).end();
      }
    });
  });
  return { server, received };
}

describe('partner listen', () => {
  let t: ListeningApp;
  let partner: Partner;
  let env: Record<string, string>;

  beforeAll(async () => {
    t = await listeningTestApp('pglite', { WEBHOOKS_PREVIEW: 'true' });
    partner = await listeningPartner(t);
    const dir = t.dataDir;
    const keyFile = path.join(dir, 'partner-key.pem');
    writeFileSync(keyFile, partner.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString());
    env = { PARTNER_PROFILE: path.join(dir, 'profile.json') };
    const login = collect(
      partnerCli(
        [
          'login',
          '--base-url',
          t.baseUrl,
          '--client-id',
          partner.clientId,
          '--client-secret',
          partner.clientSecret,
          '--private-key',
          keyFile,
          '--key-id',
          partner.keyId,
        ],
        env,
      ),
    );
    expect(await login.exited, login.output.stderr).toBe(0);
  });
  afterAll(() => t?.close());

  it('forwards a CUSTOMER.CREATED to a local server, whose handler verifies it with the SDK', async () => {
    const { server, received } = receiver(partner);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const forwardTo = `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`;
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
      // Until helper A's CUSTOMER.CREATED emission is on this branch, the test emits what the route will.
      await t.ctx.events.emit(t.ctx.database.db, {
        organizationId: partner.organizationId,
        event: 'CUSTOMER.CREATED',
        data: customer,
      });

      await until('the forwarded delivery', () =>
        received.some((r) => r.envelope?.event === 'CUSTOMER.CREATED' && r.envelope.data.id === customer.id),
      );
      expect(received.filter((r) => !r.verified)).toEqual([]);
      const delivered = received.find((r) => r.envelope?.data.id === customer.id)!.envelope!;
      expect(delivered.data).toMatchObject({ id: customer.id, firstName: 'Amina', lastName: 'Otieno' });
      // One line per event: event, eventId, the local receiver's status.
      await until('the printed line', () => output.stdout.includes(delivered.eventId));
      expect(output.stdout).toMatch(new RegExp(`^CUSTOMER\\.CREATED +${delivered.eventId}  204$`, 'm'));
    } finally {
      child.kill('SIGINT');
      expect(await exited).toBe(0);
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
