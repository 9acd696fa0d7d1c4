import { execFile, spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ErrorMessage } from '@partner-api/contract';
import { type Partner, sandboxPartner, signedFetch } from '@partner-api/testkit/partner.ts';
import { freePort, type Sandbox, startSandbox } from '@partner-api/testkit/process.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFERENCE_CLIENTS } from '../../src/routes/reference-clients.ts';

const CLIENTS_DIR = fileURLToPath(new URL('../../../../clients/', import.meta.url));

/** Why a toolchain cannot run here (the client's tests are then skipped, saying so), or undefined. */
function missing(command: string, args: string[], accept: (output: string) => string | undefined) {
  const run = spawnSync(command, args, { encoding: 'utf8' });
  if (run.error) return `no ${command} on PATH`;
  return accept(`${run.stdout}${run.stderr}`) ?? (run.status === 0 ? undefined : `${command} failed`);
}

const CLIENTS = [
  {
    name: 'Python',
    command: ['python3', path.join(CLIENTS_DIR, 'python/partner_api_client.py')],
    skip: () =>
      missing('python3', ['-c', 'import cryptography'], (out) =>
        out.includes('No module named')
          ? 'python3 has no cryptography package (python3-cryptography)'
          : undefined,
      ),
  },
  {
    name: 'Java',
    command: ['java', path.join(CLIENTS_DIR, 'java/PartnerApiClient.java')],
    skip: () =>
      // Single-file source launch compiles in memory: it needs a JDK's jdk.compiler, not a JRE.
      missing('java', ['--list-modules'], (out) => {
        const major = Number(/^jdk\.compiler@(\d+)/m.exec(out)?.[1] ?? 0);
        if (!major) return 'java has no jdk.compiler (a JRE, or older than 9): a JDK 17+ is needed';
        return major >= 17 ? undefined : `JDK ${major} is older than 17`;
      }),
  },
  {
    name: 'shell',
    command: ['sh', path.join(CLIENTS_DIR, 'shell/partner-api-client.sh')],
    skip: () =>
      missing('openssl', ['version'], (out) =>
        out.startsWith('OpenSSL 3') ? undefined : `openssl is not OpenSSL 3 (${out.trim()})`,
      ) ?? missing('curl', ['--version'], () => undefined),
  },
] as const;

type Answer = { request: string; status: number; replayed: string | undefined; body: string; key?: string };
type Run = { code: number; stdout: string; stderr: string; answers: Answer[] };

/** The client's printout: per call, the request line, extra lines, `HTTP <status>`, then the body. */
function parseAnswers(stdout: string): Answer[] {
  return stdout
    .trim()
    .split('\n\n')
    .map((block) => {
      const lines = block.split('\n');
      const header = (name: string) =>
        lines.find((line) => line.startsWith(`${name}: `))?.slice(name.length + 2);
      return {
        request: lines[0]!,
        status: Number(/^HTTP (\d{3})/m.exec(block)?.[1]),
        replayed: header('Idempotent-Replayed'),
        key: header('X-Idempotency-Key'),
        body: lines.at(-1)!,
      };
    });
}

function runClient(command: readonly string[], env: Record<string, string>): Promise<Run> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('PARTNER_')),
  );
  return new Promise((resolve) => {
    execFile(
      command[0]!,
      command.slice(1),
      { env: { ...inherited, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr, answers: parseAnswers(stdout) });
      },
    );
  });
}

describe('reference clients against a started sandbox server', () => {
  let sandbox: Sandbox;
  let partner: Partner;
  let env: Record<string, string>;
  beforeAll(async () => {
    sandbox = await startSandbox();
    partner = await sandboxPartner(sandbox.server.baseUrl, sandbox.credentialsFile);
    const keyFile = path.join(sandbox.dataDir, 'partner-key.pem');
    writeFileSync(keyFile, sandbox.credentials.privateKey, { mode: 0o600 });
    env = {
      PARTNER_BASE_URL: sandbox.server.baseUrl,
      PARTNER_CLIENT_ID: sandbox.credentials.clientId,
      PARTNER_CLIENT_SECRET: sandbox.credentials.clientSecret,
      PARTNER_PRIVATE_KEY: keyFile,
      PARTNER_KEY_ID: sandbox.credentials.keyId,
    };
  });
  afterAll(async () => {
    if (sandbox) expect(await sandbox.server.stop()).toBe(0);
  });

  const customerCount = async () => {
    const res = await signedFetch(partner, { method: 'GET', url: '/v1/customers?limit=1' });
    expect(res.status).toBe(200);
    return ((await res.json()) as { pagination: { total: number } }).pagination.total;
  };

  for (const client of CLIENTS) {
    const skipped = client.skip();
    describe.skipIf(skipped)(`${client.name}${skipped ? ` (skipped: ${skipped})` : ''}`, () => {
      it('gets a token, GET /oauth/me 200 and POST /customers 201; the same key replays the same body', async () => {
        const before = await customerCount();
        // Without PARTNER_IDEMPOTENCY_KEY the client makes one and prints it: the replay uses that.
        const first = await runClient(client.command, env);
        expect(first.code, first.stderr).toBe(0);
        const [token, me, created] = first.answers;
        expect(token).toMatchObject({ request: 'POST /v1/oauth/token', status: 200 });
        expect(token!.body).not.toContain(partner.clientSecret);
        expect(me).toMatchObject({ request: 'GET /v1/oauth/me', status: 200 });
        expect(JSON.parse(me!.body).data.id).toBe(sandbox.credentials.organizationId);
        expect(created).toMatchObject({ request: 'POST /v1/customers', status: 201, replayed: undefined });
        expect(created!.key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        const body = JSON.parse(created!.body);
        expect(body).toMatchObject({
          message: 'Customer created successfully',
          data: {
            firstName: 'Amina',
            lastName: 'Otieno',
            organizationId: sandbox.credentials.organizationId,
          },
        });
        const fetched = await signedFetch(partner, { method: 'GET', url: `/v1/customers/${body.data.id}` });
        expect(fetched.status).toBe(200);

        const replay = await runClient(client.command, { ...env, PARTNER_IDEMPOTENCY_KEY: created!.key! });
        expect(replay.code, replay.stderr).toBe(0);
        expect(replay.answers[2]).toEqual({ ...created, replayed: 'true' });
        expect(await customerCount()).toBe(before + 1);
      });

      it('signs with the key it is given: another key (as PEM text) is refused 401, exit 1', async () => {
        const { privateKey } = generateKeyPairSync('ed25519');
        const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
        const run = await runClient(client.command, {
          ...env,
          PARTNER_PRIVATE_KEY: pem,
          PARTNER_IDEMPOTENCY_KEY: randomUUID(),
        });
        expect(run.code).toBe(1);
        const refused = { error: 'Unauthorized', message: ErrorMessage.signatureFailed };
        expect(run.answers.slice(1).map((a) => [a.request, a.status, JSON.parse(a.body)])).toEqual([
          ['GET /v1/oauth/me', 401, refused],
          ['POST /v1/customers', 401, refused],
        ]);
      });

      it('says which URL it cannot reach and exits 1 when no server answers', async () => {
        const nowhere = `http://127.0.0.1:${await freePort()}`;
        const run = await runClient(client.command, { ...env, PARTNER_BASE_URL: nowhere });
        expect(run.code).toBe(1);
        expect(run.stderr).toContain(`cannot reach ${nowhere}/v1/oauth/token`);
        expect(run.stdout).toBe('');
      });

      it('refuses a key file it cannot read with exit 2, before calling the server', async () => {
        const run = await runClient(client.command, { ...env, PARTNER_PRIVATE_KEY: sandbox.credentialsFile });
        expect(run.code).toBe(2);
        expect(run.stderr).toContain('PARTNER_PRIVATE_KEY: cannot read an unencrypted PKCS#8 PEM key');
        expect(run.stdout).toBe('');
      });

      it('names a missing setting and exits 2 without calling the server', async () => {
        const { PARTNER_KEY_ID: _, ...withoutKeyId } = env;
        const run = await runClient(client.command, withoutKeyId);
        expect(run.code).toBe(2);
        expect(run.stderr).toContain('PARTNER_KEY_ID is not set');
        expect(run.stdout).toBe('');
      });
    });
  }

  it('GET /docs/signing shows each client with its full source and a download link', async () => {
    const res = await fetch(`${sandbox.server.baseUrl}/docs/signing`);
    expect(res.status).toBe(200);
    const html = await res.text();
    const shown = [...html.matchAll(/<pre><code class="language-(\w+)">([\s\S]*?)<\/code><\/pre>/g)].map(
      ([, language, code]) => ({ language, code: unescapeHtml(code!) }),
    );
    for (const client of REFERENCE_CLIENTS) {
      const source = readFileSync(path.join(CLIENTS_DIR, client.file), 'utf8');
      expect(shown, client.file).toContainEqual({ language: client.language, code: source });
      const name = path.basename(client.file);
      expect(html).toContain(`<a href="/docs/clients/${name}">`);
      const download = await fetch(`${sandbox.server.baseUrl}/docs/clients/${name}`);
      expect(download.status).toBe(200);
      expect(download.headers.get('content-disposition')).toBe(`attachment; filename="${name}"`);
      expect(await download.text()).toBe(source);
    }
    expect((await fetch(`${sandbox.server.baseUrl}/docs/clients/..%2Fpackage.json`)).status).toBe(404);
  });
});

/** The five entities an HTML code block escapes; `&amp;` last, so that `&amp;lt;` stays `&lt;`. */
function unescapeHtml(html: string): string {
  return html
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&amp;', '&');
}
