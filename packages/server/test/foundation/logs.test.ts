import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { sql } from 'drizzle-orm';
import Fastify from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AccessLine,
  accessLineWriter,
  accessLogger,
  createLogger,
  requestLoggerFactory,
} from '../../src/lib/logger.ts';

/** A logger writing into an array, one parsed JSON object a line. */
function capture() {
  const lines: string[] = [];
  const log = createLogger('info', { write: (line: string) => void lines.push(line) });
  return { log, lines, entries: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

const STACK = /\n\s+at |\bat [\w$.<>]+ \(|\.[jt]s:\d+/;

/** README.md, Operating it (Logs): no secret, stack or SQL ever reaches a log line. */
describeStores('log lines on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store);
  });
  afterAll(async () => {
    await t.close();
  });

  it('a failed query logs its type and SQLSTATE, never its SQL, its parameters or a stack', async () => {
    const secret = `s3cr3t-${Date.now()}`;
    const error = await t.ctx.database.db
      .execute(sql`select secret_hash from credentials where ${secret}::int = 1`)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(Error);
    // What drizzle's error carries, and what must not be written.
    expect(String((error as Error).message)).toContain('select secret_hash');
    const { log, lines, entries } = capture();
    log.error({ err: error }, 'unexpected error');
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain(secret);
    expect(lines[0]).not.toMatch(/select|secret_hash|credentials/i);
    expect(lines[0]).not.toMatch(STACK);
    expect(entries()[0]!.err).toEqual({
      type: 'DrizzleQueryError',
      cause: expect.objectContaining({ type: 'DatabaseError', code: '22P02' }),
    });

    // Fastify's request loggers (children it makes per request) keep these serializers over its own.
    const app = Fastify({ loggerInstance: log });
    app.get('/fails', (request) => {
      request.log.error({ err: error }, 'unexpected error');
      return {};
    });
    await app.inject({ method: 'GET', url: '/fails' });
    await app.close();
    const logged = entries().filter((e) => e.reqId !== undefined && e.err !== undefined);
    expect(logged).toHaveLength(1);
    expect(JSON.stringify(logged[0])).not.toMatch(/select|secret_hash/i);
    expect(JSON.stringify(logged[0])).not.toContain(secret);
  });
});

describe('the log serializers and redaction', () => {
  it('an application error logs its type and message, not its stack', () => {
    const { log, lines, entries } = capture();
    log.error({ err: new TypeError('boom: nothing to read') }, 'unexpected error');
    expect(lines[0]).not.toMatch(STACK);
    expect(entries()[0]!.err).toEqual({ type: 'TypeError', message: 'boom: nothing to read' });
  });

  it('a system error keeps its code and syscall; a cause is followed', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), {
      code: 'ECONNREFUSED',
      syscall: 'connect',
      address: '127.0.0.1',
    });
    const { log, entries } = capture();
    log.warn({ err: new Error('Redis unreachable', { cause: refused }) }, 'fallback');
    expect(entries()[0]!.err).toEqual({
      type: 'Error',
      message: 'Redis unreachable',
      cause: {
        type: 'Error',
        message: 'connect ECONNREFUSED 127.0.0.1:6379',
        code: 'ECONNREFUSED',
        syscall: 'connect',
        address: '127.0.0.1',
      },
    });
  });

  it('secrets are redacted at the top of a line and one object down', () => {
    const { log, lines, entries } = capture();
    log.info(
      {
        clientSecret: 'top-secret-1',
        token: 'top-token-2',
        credential: { clientSecret: 'nested-secret-3', privateKey: 'nested-key-4' },
        headers: {
          authorization: 'Bearer nested-5',
          signature: 'sig1=:nested-6:',
          'x-callback-signature': 'h7',
        },
      },
      'careless line',
    );
    for (const value of [
      'top-secret-1',
      'top-token-2',
      'nested-secret-3',
      'nested-key-4',
      'nested-5',
      'nested-6',
      'h7',
    ])
      expect(lines[0]).not.toContain(value);
    expect(entries()[0]).toMatchObject({
      clientSecret: '[Redacted]',
      credential: { clientSecret: '[Redacted]', privateKey: '[Redacted]' },
      headers: { authorization: '[Redacted]', 'x-callback-signature': '[Redacted]' },
    });
  });

  it('a request logger made on first use writes what a pino child writes: request id, redaction, serializers', async () => {
    const { log, entries } = capture();
    const app = Fastify({ loggerInstance: log, childLoggerFactory: requestLoggerFactory });
    const ids: string[] = [];
    app.get('/logs', (request) => {
      ids.push(request.id);
      expect(request.log.level).toBe('info');
      request.log.debug('below the level: no line');
      request.log.warn({ credential: { clientSecret: 'nested-secret-8' } }, 'careless line');
      request.log.error({ err: new TypeError('boom') }, 'unexpected error');
      request.log.child({ orderId: 'o-1' }).info({ token: 'top-token-9' }, 'from a child');
      return {};
    });
    app.get('/quiet', () => ({}));
    expect((await app.inject({ method: 'GET', url: '/logs' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/quiet' })).statusCode).toBe(200);
    await app.close();
    const reqId = ids[0];
    // Fastify's own two lines per request aside (the server replaces them with one access line).
    const fastifys = ['incoming request', 'request completed'];
    const lines = entries().filter((e) => e.reqId !== undefined && !fastifys.includes(String(e.msg)));
    expect(lines.map(({ level, msg }) => ({ level, msg }))).toEqual([
      { level: 40, msg: 'careless line' },
      { level: 50, msg: 'unexpected error' },
      { level: 30, msg: 'from a child' },
    ]);
    expect(lines[0]).toMatchObject({ reqId, credential: { clientSecret: '[Redacted]' } });
    expect(lines[1]).toMatchObject({ reqId, err: { type: 'TypeError', message: 'boom' } });
    expect(lines[2]).toMatchObject({ reqId, orderId: 'o-1', token: '[Redacted]' });
    expect(JSON.stringify(lines)).not.toMatch(/nested-secret-8|top-token-9/);
  });

  it('stdout: every line written before process.exit arrives whole and in order, UTF-8 intact', async () => {
    const logger = fileURLToPath(new URL('../../src/lib/logger.ts', import.meta.url));
    const script = `const { createLogger } = await import(${JSON.stringify(logger)});
const log = createLogger('info', undefined, 'json');
for (let i = 0; i < 5000; i++) log.info({ i, name: 'Wanjiků Ngũgĩ 🌍' }, 'line');
process.exit(0);`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    const lines = stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { i: number; name: string });
    expect(lines.map((line) => line.i)).toEqual(Array.from({ length: 5000 }, (_, i) => i));
    expect(new Set(lines.map((line) => line.name))).toEqual(new Set(['Wanjiků Ngũgĩ 🌍']));
  });

  it('stdout: a reader that goes away stops the logging, not the process', async () => {
    const logger = fileURLToPath(new URL('../../src/lib/logger.ts', import.meta.url));
    // A line a loop turn for 2,000 turns, then a word on stderr and a clean exit.
    const script = `const { createLogger } = await import(${JSON.stringify(logger)});
const log = createLogger('info', undefined, 'json');
let i = 0;
const turn = () => {
  log.info({ i }, 'line');
  if (++i < 2000) return setTimeout(turn, 0);
  process.stderr.write('done');
  process.exit(0);
};
turn();`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    // The reader closes its end as soon as the first lines arrive: every later write is EPIPE.
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: 'done' });
  });

  it('the access logger writes its chosen fields as they are, with the level and message', () => {
    const { log, entries } = capture();
    accessLogger(log).info(
      { reqId: 'r-1', method: 'GET', path: '/v1/customers', statusCode: 200 },
      'request completed',
    );
    expect(entries()[0]).toMatchObject({
      level: 30,
      reqId: 'r-1',
      method: 'GET',
      path: '/v1/customers',
      statusCode: 200,
      msg: 'request completed',
    });
  });

  describe('the access line, written apart from pino (accessLineWriter)', () => {
    const lines: AccessLine[] = [
      {
        reqId: '0b0e1b9e-5f4a-4c55-9d0e-5d1b7d3c8f21',
        method: 'GET',
        path: '/v1/webhooks/key',
        statusCode: 200,
        responseTime: 0.41234500000001,
        remoteAddress: '127.0.0.1',
      },
      // What JSON must escape, and what it need not (non-ASCII): pino's answer either way.
      {
        reqId: 'r:1',
        method: 'POST',
        path: '/v1/customers/a"b\\c\u0001d/Ngũgĩ/🌍',
        statusCode: 500,
        responseTime: 12,
        remoteAddress: '::ffff:10.0.0.7',
      },
      // A backslash alone, and a control character alone.
      { reqId: 'r-2', method: 'GET', path: '/a\\b', statusCode: 200, responseTime: 1, remoteAddress: '::1' },
      { reqId: 'r-3', method: 'GET', path: '/a\tb', statusCode: 200, responseTime: 1, remoteAddress: '::1' },
      // A field pino leaves out when it is undefined (a socket already gone), and a non-finite time.
      {
        reqId: 'x',
        method: 'DELETE',
        path: undefined,
        statusCode: 404,
        responseTime: Number.NaN,
        remoteAddress: undefined,
      },
    ];

    /** Two loggers alike, on arrays: one for pino's own line, one for the writer's. */
    function pair(options: pino.LoggerOptions = {}) {
      const sides = [[], []] as string[][];
      const make = (out: string[]) =>
        pino(
          { base: { pid: 4242, hostname: 'h"ost' }, timestamp: () => ',"time":1700000000000', ...options },
          { write: (line: string) => void out.push(line) },
        );
      return { pino: make(sides[0]!), writer: make(sides[1]!), pinoLines: sides[0]!, writerLines: sides[1]! };
    }

    it('writes byte for byte the line pino writes for the same fields', () => {
      const p = pair();
      const write = accessLineWriter(p.writer);
      for (const line of lines) {
        accessLogger(p.pino).info(line, 'request completed');
        write(line);
      }
      expect(p.writerLines).toEqual(p.pinoLines);
      expect(p.writerLines).toHaveLength(5);
      expect(JSON.parse(p.writerLines[1]!)).toMatchObject({ path: lines[1]!.path, msg: 'request completed' });
      expect(JSON.parse(p.writerLines[4]!)).not.toHaveProperty('remoteAddress');
    });

    it("the service's own logger: the same fields, in the same order, as pino's line", () => {
      const { log, lines: written } = capture();
      accessLineWriter(log)(lines[0]!);
      accessLogger(log).info(lines[0]!, 'request completed');
      const [fast, slow] = written.map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(Object.keys(fast!)).toEqual(Object.keys(slow!));
      expect({ ...fast, time: 0 }).toEqual({ ...slow, time: 0 });
    });

    it("follows the logger's level as it changes", () => {
      const p = pair({ level: 'warn' });
      const write = accessLineWriter(p.writer);
      write(lines[0]!);
      expect(p.writerLines).toHaveLength(0);
      p.writer.level = 'info';
      write(lines[0]!);
      expect(p.writerLines).toHaveLength(1);
    });

    it('leaves a logger configured beyond its reach to pino (a mixin, a log formatter)', () => {
      for (const options of [
        { mixin: () => ({ region: 'eu' }) },
        { formatters: { log: (fields: Record<string, unknown>) => ({ ...fields, formatted: true }) } },
      ] satisfies pino.LoggerOptions[]) {
        const p = pair(options);
        accessLogger(p.pino).info(lines[0]!, 'request completed');
        accessLineWriter(p.writer)(lines[0]!);
        expect(p.writerLines).toEqual(p.pinoLines);
        expect(p.writerLines[0]).toMatch(/"region":"eu"|"formatted":true/);
      }
    });
  });
});
