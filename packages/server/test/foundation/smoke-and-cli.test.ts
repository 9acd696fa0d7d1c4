import { readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import path from 'node:path';
import { tempDataDir } from '@partner-api/testkit/app.ts';
import { runCli } from '@partner-api/testkit/helpers.ts';
import { sandboxPartner, signedHeaders } from '@partner-api/testkit/partner.ts';
import { freePort, logEntries, type ServerProcess, startServer } from '@partner-api/testkit/process.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBundles } from '../../../../scripts/build.ts';

const CLIENT_ID = /^org_[a-f0-9]{32}$/;
const CLIENT_SECRET = /^[a-f0-9]{32}_[a-f0-9]{32}$/;

/**
 * `npm start` on a fresh clone: `npm run build`, then the bundle's `partner-api serve` with nothing
 * configured but a fresh DATA_DIR. (How fast it gets there is the bench's to measure, not a test's.)
 */
describe('npm start equivalent (built bundle, real process, embedded store)', () => {
  const dataDir = tempDataDir();
  let server: ServerProcess;
  beforeAll(async () => {
    await buildBundles({ quiet: true });
    server = await startServer({ DATA_DIR: dataDir, LOG_LEVEL: 'info' }, { built: true });
  }, 90_000);
  afterAll(async () => {
    if (server) expect(await server.stop('SIGTERM')).toBe(0);
  });

  const requestToken = (clientId: string, clientSecret: string) =>
    fetch(`${server.baseUrl}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ clientId, clientSecret }),
    });

  it('answers GET /healthz 200', async () => {
    const res = await fetch(`${server.baseUrl}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok', store: 'pglite' });
    expect(res.headers.get('ratelimit-limit')).toBeNull();
  });

  it('serves the files it reads at run time from the bundle: docs, signing guide, handset', async () => {
    for (const [page, text] of [
      ['/docs', 'swagger-ui'],
      ['/docs/assets/swagger-ui.css', '.swagger-ui'],
      ['/docs/signing', 'Signature-Input'],
      ['/sandbox/ussd', '<html'],
    ]) {
      const res = await fetch(`${server.baseUrl}${page}`);
      expect(res.status, page).toBe(200);
      expect(await res.text(), page).toContain(text);
    }
  });

  it('starts without deprecation or other warnings', () => {
    expect(server.output()).not.toMatch(/Warning|DEP\d+/);
  });

  it('writes the sandbox credentials file (mode 0600) and prints where it is', async () => {
    const file = path.join(dataDir, 'sandbox-credentials.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const credentials = JSON.parse(readFileSync(file, 'utf8'));
    expect(credentials.clientId).toMatch(CLIENT_ID);
    expect(credentials.clientSecret).toMatch(CLIENT_SECRET);
    expect(credentials.privateKey).toContain('BEGIN PRIVATE KEY');
    expect(server.output()).toContain('sandbox-credentials.json');
    expect(statSync(path.join(dataDir, 'secrets.json')).mode & 0o777).toBe(0o600);
  });

  it('the demo clientId and secret get a token', async () => {
    const { clientId, clientSecret } = JSON.parse(
      readFileSync(path.join(dataDir, 'sandbox-credentials.json'), 'utf8'),
    );
    const res = await requestToken(clientId, clientSecret);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ message: 'Authentication successful', tokenType: 'Bearer' });
    expect(res.headers.get('ratelimit-policy')).toBe('10;w=900');
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  it('serves Prometheus text on /metrics, counting requests', async () => {
    await fetch(`${server.baseUrl}/healthz`);
    const res = await fetch(`${server.baseUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.headers.get('ratelimit-limit')).toBeNull();
    const text = await res.text();
    expect(text).toContain('# TYPE http_requests_total counter');
    expect(text).toMatch(/^http_requests_total\{[^}]*route="\/healthz"[^}]*status="200"[^}]*\} [1-9]/m);
    expect(text).toContain('# TYPE http_request_duration_seconds histogram');
  });

  it('logs JSON lines with the request id, and never the secret or the bearer token', async () => {
    const { clientId, clientSecret } = JSON.parse(
      readFileSync(path.join(dataDir, 'sandbox-credentials.json'), 'utf8'),
    );
    const token = (await (await requestToken(clientId, clientSecret)).json()).token as string;
    const requestId = `log-check-${Date.now()}`;
    await fetch(`${server.baseUrl}/v1/oauth/me`, {
      headers: { authorization: `Bearer ${token}`, 'x-client-id': clientId, 'x-request-id': requestId },
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const entries = logEntries(server);
    expect(entries.length).toBeGreaterThan(0);
    expect(entries.some((e) => e.reqId === requestId)).toBe(true);
    expect(server.output()).not.toContain(clientSecret);
    expect(server.output()).not.toContain(token);
  });

  it('logs one access line per request: its path without the query string, never the signature', async () => {
    const partner = await sandboxPartner(server.baseUrl, path.join(dataDir, 'sandbox-credentials.json'));
    const requestId = `access-check-${Date.now()}`;
    const searched = `Zawadi${Date.now()}`;
    const url = `/v1/customers?search=${searched}`;
    const headers = signedHeaders(partner, { method: 'GET', url }, undefined);
    const res = await fetch(server.baseUrl + url, { headers: { ...headers, 'x-request-id': requestId } });
    expect(res.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const mine = logEntries(server).filter((e) => e.reqId === requestId);
    expect(mine).toEqual([
      expect.objectContaining({
        level: 30,
        msg: 'request completed',
        method: 'GET',
        path: '/v1/customers',
        statusCode: 200,
        responseTime: expect.any(Number),
        remoteAddress: '127.0.0.1',
      }),
    ]);
    expect(server.output()).not.toContain(searched);
    expect(server.output()).not.toContain(headers.signature!.slice(5, 40));
  });

  it('a request body the client cuts off is logged as an abort, at info, and the database stays healthy', async () => {
    const requestId = `abort-${Date.now()}`;
    const { port } = new URL(server.baseUrl);
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(
          `POST /v1/oauth/token HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\nX-Request-Id: ${requestId}\r\n\r\n{"clientId":"`,
        );
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 150);
      });
      socket.on('error', reject);
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const mine = logEntries(server).filter((e) => e.reqId === requestId);
    expect(mine.some((e) => e.msg === 'request aborted by the client' && e.level === 30)).toBe(true);
    expect(mine.filter((e) => Number(e.level) >= 50)).toEqual([]);
    expect(mine.some((e) => e.msg === 'database unavailable')).toBe(false);
    const health = await fetch(`${server.baseUrl}/healthz`);
    expect(health.status).toBe(200);
  });

  it('never logs a provider callback path token, whatever the method, slashes or case', async () => {
    const token = `tok${Date.now()}secretsecretsecretsecret`;
    const probes: Array<[string, string]> = [
      ['GET', `/v1/payments/callbacks/daraja/${token}/stk`],
      ['PUT', `/v1/payments/callbacks/mtn/${token}/0b6c3e6a-0c3e-4c3e-8c3e-0c3e0c3e0c3e`],
      ['DELETE', `/v1/payments/callbacks/airtel/${token}`],
      ['POST', `/v1/payments/callbacks/daraja/${token}/stk`],
      ['GET', `//v1//Payments/Callbacks/daraja/${token}/stk?x=1`],
      ['POST', `/v1/sms/callbacks/africastalking/${token}`],
    ];
    const ids: string[] = [];
    for (const [method, url] of probes) {
      const requestId = `token-probe-${ids.length}-${Date.now()}`;
      ids.push(requestId);
      await fetch(server.baseUrl + url, { method, headers: { 'x-request-id': requestId } });
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    const lines = logEntries(server).filter((e) => ids.includes(String(e.reqId)));
    expect(lines.filter((e) => e.msg === 'request completed')).toHaveLength(probes.length);
    for (const line of lines) expect(String(line.path ?? ''), JSON.stringify(line)).not.toContain(token);
    expect(lines.map((e) => e.path)).toContain('/v1/payments/callbacks/daraja/[REDACTED]/stk');
    expect(server.output()).not.toContain(token);
  });

  describe('the operator CLI against this server', () => {
    const cliEnv = () => ({ ADMIN_URL: server.adminUrl, DATA_DIR: dataDir });

    it('org sms off turns investor SMS off; sms list filters, and names a bad state', async () => {
      const org = JSON.parse(
        (await runCli(['--json', 'org', 'create', '--name', `SMS ${Date.now()}`], cliEnv())).stdout,
      );
      const off = await runCli(['--json', 'org', 'sms', org.id, 'off'], cliEnv());
      expect(off.code, off.stderr).toBe(0);
      expect(JSON.parse(off.stdout)).toMatchObject({ id: org.id, smsEnabled: false });
      const listed = await runCli(['--json', 'sms', 'list', '--org', org.id, '--state', 'refused'], cliEnv());
      expect(listed.code, listed.stderr).toBe(0);
      expect(JSON.parse(listed.stdout)).toEqual({ data: [] });
      const bad = await runCli(['sms', 'list', '--state', 'lost'], cliEnv());
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain(
        'state must be one of QUEUED, SENDING, SENT, DELIVERED, UNDELIVERED, REFUSED, FAILED',
      );
    });

    it('org create and credential create --json print a clientId and secret that /v1/oauth/token accepts', async () => {
      const name = `CLI Org ${Date.now()}`;
      const org = await runCli(['--json', 'org', 'create', '--name', name, '--language', 'sw'], cliEnv());
      expect(org.code, org.stderr).toBe(0);
      const organization = JSON.parse(org.stdout);
      expect(organization).toMatchObject({ name, isActive: true, language: 'sw' });
      // The customers' default language (docs/languages.md), changed by the operator.
      const updated = await runCli(
        ['--json', 'org', 'update', organization.id, '--language', 'en'],
        cliEnv(),
      );
      expect(updated.code, updated.stderr).toBe(0);
      expect(JSON.parse(updated.stdout)).toMatchObject({ id: organization.id, name, language: 'en' });

      const cred = await runCli(
        ['--json', 'credential', 'create', '--org', organization.id, '--name', 'cli credential'],
        cliEnv(),
      );
      expect(cred.code, cred.stderr).toBe(0);
      const credential = JSON.parse(cred.stdout);
      expect(credential.clientId).toMatch(CLIENT_ID);
      expect(credential.clientSecret).toMatch(CLIENT_SECRET);

      const res = await requestToken(credential.clientId, credential.clientSecret);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        message: 'Authentication successful',
        organization: { id: organization.id, name, clientId: credential.clientId },
      });

      // Listing is JSON too, and never shows the secret.
      const list = await runCli(['--json', 'credential', 'list', '--org', organization.id], cliEnv());
      expect(list.code, list.stderr).toBe(0);
      expect(JSON.parse(list.stdout)).toEqual([
        expect.objectContaining({ id: credential.id, clientId: credential.clientId }),
      ]);
      expect(list.stdout).not.toContain(credential.clientSecret);
    }, 60_000);

    it('operator add prints the credential once; list, deactivate and audit list', async () => {
      const name = `Operator ${Date.now()}`;
      const added = await runCli(['operator', 'add', name, '--role', 'viewer'], cliEnv());
      expect(added.code, added.stderr).toBe(0);
      const credential = /credential: (op_[\w-]+)/.exec(added.stdout)?.[1];
      const id = /id: (\S+)/.exec(added.stdout)?.[1];
      expect(credential).toBeDefined();
      const listed = await runCli(['--json', 'operator', 'list'], cliEnv());
      expect(JSON.parse(listed.stdout)).toContainEqual(expect.objectContaining({ id, name, isActive: true }));
      expect(listed.stdout).not.toContain(credential);
      const off = await runCli(['--json', 'operator', 'deactivate', id!], cliEnv());
      expect(JSON.parse(off.stdout)).toMatchObject({ id, isActive: false });
      const bad = await runCli(['operator', 'add', 'x', '--role', 'admin'], cliEnv());
      expect(bad.code).toBe(1);
      const audit = await runCli(
        ['--json', 'audit', 'list', '--route', '/admin/operators/:id/deactivate', '--actor', 'admin-token'],
        cliEnv(),
      );
      expect(audit.code, audit.stderr).toBe(0);
      expect(JSON.parse(audit.stdout)).toContainEqual(
        expect.objectContaining({ targetId: id, status: 200, actor: { type: 'admin-token' } }),
      );
      expect(audit.stdout).not.toContain(credential);
    }, 60_000);

    it('the --json flag also works after the subcommand', async () => {
      const res = await runCli(['org', 'list', '--json'], cliEnv());
      expect(res.code, res.stderr).toBe(0);
      expect(Array.isArray(JSON.parse(res.stdout))).toBe(true);
    });

    it('exits non-zero with a wrong ADMIN_TOKEN, and says why', async () => {
      const res = await runCli(['--json', 'org', 'list'], { ...cliEnv(), ADMIN_TOKEN: 'x'.repeat(40) });
      expect(res.code).not.toBe(0);
      expect(res.stdout).toBe('');
      expect(res.stderr).toMatch(/Unauthorized|401/);
    });

    it('exits non-zero when no admin token can be found', async () => {
      const res = await runCli(['--json', 'org', 'list'], {
        ADMIN_URL: server.adminUrl,
        DATA_DIR: tempDataDir(),
      });
      expect(res.code).not.toBe(0);
      expect(res.stderr).toMatch(/ADMIN_TOKEN/);
    });

    it('holidays add, list and remove; prices set and history; the market session', async () => {
      const added = await runCli(
        ['--json', 'holidays', 'add', '2031-12-12', '--name', 'Jamhuri Day'],
        cliEnv(),
      );
      expect(added.code, added.stderr).toBe(0);
      expect(JSON.parse(added.stdout)).toEqual({
        data: { market: 'XNAI', date: '2031-12-12', name: 'Jamhuri Day' },
      });
      const listed = await runCli(['--json', 'holidays', 'list'], cliEnv());
      expect(JSON.parse(listed.stdout)).toContainEqual({
        market: 'XNAI',
        date: '2031-12-12',
        name: 'Jamhuri Day',
      });
      const removed = await runCli(['--json', 'holidays', 'remove', '2031-12-12'], cliEnv());
      expect(removed.code, removed.stderr).toBe(0);
      const again = await runCli(['--json', 'holidays', 'remove', '2031-12-12'], cliEnv());
      expect(again.code).not.toBe(0);

      const set = await runCli(
        ['--json', 'prices', 'set', 'SCOM', '31.5', '--as-of', '2031-12-11T07:00:00Z'],
        cliEnv(),
      );
      expect(set.code, set.stderr).toBe(0);
      expect(JSON.parse(set.stdout).data).toMatchObject({ symbol: 'SCOM', price: '31.5000', source: 'EDIT' });
      const history = await runCli(
        ['--json', 'prices', 'history', 'SCOM', '--from', '2031-12-11T00:00:00Z'],
        cliEnv(),
      );
      expect(JSON.parse(history.stdout).map((p: { price: string }) => p.price)).toEqual(['31.5000']);
      const held = await runCli(['--json', 'prices', 'held'], cliEnv());
      expect(JSON.parse(held.stdout)).toEqual([]);
      const position = await runCli(
        ['--json', 'book', 'position', 'SCOM', '1000', '--on', '2031-12-11'],
        cliEnv(),
      );
      expect(position.code, position.stderr).toBe(0);
      expect(JSON.parse(position.stdout).data).toEqual({
        symbol: 'SCOM',
        date: '2031-12-11',
        units: '1000.0000',
      });
      const day = await runCli(['--json', 'book', '--date', '2031-12-11'], cliEnv());
      expect(day.code, day.stderr).toBe(0);
      expect(JSON.parse(day.stdout)).toContainEqual(
        expect.objectContaining({ symbol: 'SCOM', pooled: '1000.0000', pooledDate: '2031-12-11' }),
      );
      const session = await runCli(['--json', 'market', 'session'], cliEnv());
      expect(JSON.parse(session.stdout).data).toMatchObject({ market: 'XNAI', state: expect.any(String) });
    });

    it('exits non-zero when the admin API cannot be reached', async () => {
      // A port nothing listens on (fetch refuses port 1 itself, as a "bad port").
      const closed = `http://127.0.0.1:${await freePort()}`;
      const res = await runCli(['--json', 'org', 'list'], { ...cliEnv(), ADMIN_URL: closed });
      expect(res.code).not.toBe(0);
      expect(res.stdout).toBe('');
      expect(res.stderr).toBe(
        `partner-api: cannot reach the admin API at ${closed} (ECONNREFUSED); is \`partner-api serve\` running there? ADMIN_URL or ADMIN_PORT names it\n`,
      );
    });

    it('exits non-zero, and says so, when ADMIN_URL names something that does not answer JSON', async () => {
      // A proxy's error page, say: HTML where the admin API answers JSON.
      const proxy = createServer((_request, response) => {
        response.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad Gateway</html>');
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = proxy.address() as AddressInfo;
        const res = await runCli(['--json', 'org', 'list'], {
          ...cliEnv(),
          ADMIN_URL: `http://127.0.0.1:${port}`,
        });
        expect(res.code).not.toBe(0);
        expect(res.stdout).toBe('');
        expect(res.stderr).toBe(
          `partner-api: http://127.0.0.1:${port} answered 502 with a body that is not JSON: is it the admin API?\n`,
        );
      } finally {
        await new Promise((resolve) => proxy.close(resolve));
      }
    });
  });
});
