import { tempDataDir } from '@partner-api/testkit/app.ts';
import { adminFetch, adminTokenOf } from '@partner-api/testkit/helpers.ts';
import { type ServerProcess, startServer } from '@partner-api/testkit/process.ts';
import { afterAll, describe, expect, it } from 'vitest';

type Org = { id: string; name: string };

/**
 * PGlite takes no lock of its own: without the server's DATA_DIR lock a second process on the same
 * directory starts silently and rows are lost. Real processes, one embedded store.
 */
describe('the DATA_DIR lock (real processes, embedded store)', () => {
  const dataDir = tempDataDir();
  const started: ServerProcess[] = [];
  const start = async (options?: { waitForHealth?: boolean }) => {
    const server = await startServer({ DATA_DIR: dataDir }, options);
    started.push(server);
    return server;
  };
  afterAll(async () => {
    await Promise.all(started.map((s) => s.stop('SIGKILL')));
  });

  const createOrgs = async (server: ServerProcess, token: string, names: string[]) => {
    for (const name of names) {
      const res = await adminFetch(server.adminUrl, token, 'POST', '/admin/organizations', { name });
      expect(res.status).toBe(201);
    }
  };
  const orgNames = async (server: ServerProcess, token: string) => {
    const res = await adminFetch(server.adminUrl, token, 'GET', '/admin/organizations');
    expect(res.status).toBe(200);
    return (res.body as Org[]).map((o) => o.name);
  };

  const before = Array.from({ length: 5 }, (_, i) => `before-${i}`);
  const after = Array.from({ length: 5 }, (_, i) => `after-${i}`);
  let a: ServerProcess;
  let token: string;

  it('a second server on the same DATA_DIR refuses to start (exit 2, clear message); the first keeps serving with nothing lost', async () => {
    a = await start();
    token = adminTokenOf(dataDir);
    await createOrgs(a, token, before);

    const b = await start({ waitForHealth: false });
    const timer = setTimeout(() => b.stop('SIGKILL'), 25_000);
    const code = await b.exited;
    clearTimeout(timer);
    expect(code, b.output()).toBe(2);
    expect(b.output()).toMatch(/DATA_DIR/);
    expect(b.output()).toContain(dataDir);
    expect(b.output()).toMatch(/in use/);
    expect(b.output()).not.toMatch(/^\s+at /m);

    expect((await fetch(`${a.baseUrl}/healthz`)).status).toBe(200);
    await createOrgs(a, token, after);
    const names = await orgNames(a, token);
    for (const name of [...before, ...after]) expect(names).toContain(name);
    // The sandbox seed's demo organization, plus ours, each exactly once.
    expect(names.filter((n) => n.startsWith('before-') || n.startsWith('after-'))).toHaveLength(10);
  }, 90_000);

  it('SIGTERM drains and exits 0; a restart on the same DATA_DIR finds every row', async () => {
    expect(a, 'the first test started server A').toBeDefined();
    const code = await a.stop('SIGTERM');
    expect(code, a.output()).toBe(0);

    const again = await start();
    const names = await orgNames(again, token);
    for (const name of [...before, ...after]) expect(names).toContain(name);
    expect(names.filter((n) => n === 'Demo Investments')).toHaveLength(1); // no second seed
    expect(await again.stop('SIGTERM')).toBe(0);
  }, 90_000);

  it('after a crash the refusal says the lock of a dead server expires, and when', async () => {
    const crashed = await start();
    await crashed.stop('SIGKILL');
    const next = await start({ waitForHealth: false });
    const code = await next.exited;
    expect(code, next.output()).toBe(2);
    expect(next.output()).toMatch(/DATA_DIR .* is in use/);
    expect(next.output()).toMatch(/crashed.*expires 15 s after/);
  }, 90_000);
});
