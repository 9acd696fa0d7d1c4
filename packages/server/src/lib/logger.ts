import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import pinoPretty from 'pino-pretty';

/**
 * Never logged (docs/decisions.md, Operations): credentials, signatures and keys, at the top of a
 * line or one object down.
 */
const SECRET_FIELDS = [
  'authorization',
  'signature',
  '["x-callback-signature"]',
  'clientSecret',
  'privateKey',
  'secret',
  'token',
  'accessToken',
  // M-Pesa (Daraja): our settings' names and the wire's (config.ts, providers/mpesa).
  'consumerKey',
  'consumerSecret',
  'passkey',
  'securityCredential',
  'callbackToken',
  'Password',
  'SecurityCredential',
  'access_token',
];
export const LOG_REDACT = [
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((field) => (field.startsWith('[') ? `*${field}` : `*.${field}`)),
  'req.headers.authorization',
  'req.headers.signature',
  'req.headers["x-callback-signature"]',
];

/** Longer messages are cut: a message is for telling errors apart, not for carrying data. */
const MAX_MESSAGE = 300;

type ErrorLike = Error & Record<string, unknown>;

/** PostgreSQL's and PGlite's errors carry a severity (PGlite's its query too); drizzle wraps them with the query and its parameters. */
const fromDriver = (error: ErrorLike) => typeof error.severity === 'string';
const carriesQuery = (error: ErrorLike) => 'query' in error || 'params' in error;

const stringFields = (error: ErrorLike, names: readonly string[]) =>
  Object.fromEntries(names.filter((n) => typeof error[n] === 'string').map((n) => [n, error[n]]));

/**
 * What an error may put in a log line (the standards: no stack, no SQL, no secret ever reaches a
 * log): its type and codes, and of a database error only the names PostgreSQL gives (SQLSTATE,
 * constraint, table, column), never its message, query or parameters, which carry SQL and values
 * (drizzle's `Failed query: ... params: ...`). The cause is followed, as far as three levels down.
 */
export function serializeError(value: unknown, depth = 0): Record<string, unknown> {
  if (!(value instanceof Error)) return { type: typeof value };
  const error = value as ErrorLike;
  // The drivers' classes are named alike: pg's calls itself 'error' and PGlite's is minified.
  const type = fromDriver(error) ? 'DatabaseError' : error.constructor?.name || error.name;
  const out: Record<string, unknown> = {
    type,
    ...(fromDriver(error) || carriesQuery(error)
      ? stringFields(error, ['code', 'constraint', 'table', 'column', 'routine'])
      : {
          message: String(error.message).slice(0, MAX_MESSAGE),
          ...stringFields(error, ['code', 'syscall', 'address']),
        }),
  };
  if (depth < 3 && error.cause !== undefined) out.cause = serializeError(error.cause, depth + 1);
  if (depth < 3 && error instanceof AggregateError) {
    out.errors = error.errors.slice(0, 3).map((e) => serializeError(e, depth + 1));
  }
  return out;
}

let stdout: pino.DestinationStream | undefined;
/** Writes the lines `stdoutLines` has gathered (none before it was made). */
let flushStdout: () => void = () => {};

/**
 * JSON lines on stdout, gathered over an event-loop turn and written together when it ends, in one
 * synchronous write(2) on the event loop (`stdoutLines`). Lines still gathered when the process
 * exits are written by its exit handler, so a drained or crashing server loses no line; only a
 * SIGKILL can lose the lines of the last turn. `destination` is for tests that read the lines.
 */
export function createLogger(
  level: string,
  destination?: pino.DestinationStream,
  format: 'auto' | 'json' | 'pretty' = 'json',
): FastifyBaseLogger {
  const options = { level, redact: LOG_REDACT, serializers: { err: serializeError, error: serializeError } };
  if (destination) return pino(options, destination);
  if (format === 'pretty' || (format === 'auto' && process.stdout.isTTY)) {
    // A person at a terminal: the same lines, redacted the same way, made readable by pino-pretty.
    pretty ??= pinoPretty({ colorize: Boolean(process.stdout.isTTY), ignore: 'pid,hostname', sync: true });
    return pino(options, pretty);
  }
  stdout ??= stdoutLines();
  return pino(options, stdout);
}

/**
 * stdout, one write per event-loop turn: the turn's lines are gathered as they are logged and
 * written together in its check phase (`setImmediate`), synchronously, through pino's own sonic-boom
 * in its synchronous mode (which retries a full pipe and drops writes to a closed one, as pino's
 * default does). pino's default writes each line at once, one write(2) a line: ~8% of a signed
 * GET's CPU on one VM. Writing asynchronously instead, as this once did,
 * hands every write to libuv's thread pool, and the hand-off (a worker woken, its completion posted
 * back to the loop) cost ~10% of GET /v1/webhooks/key's CPU (docs/performance.md, "The key
 * route against bare Fastify"). A synchronous write is what pino's default and Node's own
 * `process.stdout` (files and pipes, on Linux) do: a log reader that stops reading holds the server
 * up, rather than the lines piling up in its memory (docs/decisions.md, "Logs written on the loop").
 */
function stdoutLines(): pino.DestinationStream {
  const boom = pino.destination({ dest: 1, sync: true });
  let pending: string[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    const out = pending.length === 1 ? pending[0]! : pending.join('');
    pending = [];
    // Looked up on each write: pino's guard replaces `write` once the reader is gone (EPIPE).
    boom.write(out);
  };
  process.on('exit', flush);
  flushStdout = flush;
  return {
    write: (line: string) => {
      if (pending.length === 0) setImmediate(flush);
      pending.push(line);
    },
  };
}

let pretty: pino.DestinationStream | undefined;

/**
 * Writes the log lines gathered so far in this turn now. For a line written straight to stderr
 * (server.ts's refusal to start): after it, the lines logged before it would otherwise only be
 * written by the exit handler, below it on a terminal that shows both.
 */
export function flushLogs(): void {
  flushStdout();
}

/**
 * pino's own way to the access line (fields the server chooses, none of them a secret, so without
 * the redaction pass), for a logger `accessLineWriter` cannot write for.
 */
export function accessLogger(logger: FastifyBaseLogger): FastifyBaseLogger {
  return logger.child({}, { redact: [] });
}

/** The one access line per request (app.ts): fields the server chooses, none of them a secret. */
export type AccessLine = {
  reqId: string;
  method: string;
  /** Undefined fields are left out, as pino leaves them out. */
  path: string | undefined;
  statusCode: number;
  responseTime: number;
  remoteAddress: string | undefined;
};

const ACCESS_MESSAGE = 'request completed';

type PinoInternals = Record<symbol, unknown>;

/**
 * Writes the access line: the line pino's `info(line, 'request completed')` writes, built in one
 * template. pino's general path cost ~17,800 instructions a line on GET /v1/webhooks/key, a seventh
 * of the route: a loop over the fields that escapes each key and value a character at a time, and
 * its checks of serializers and stringifiers (docs/performance.md, "The key route against bare
 * Fastify"). The level's prefix, the time, the bindings (pid, hostname) and the end of the line are
 * pino's own, read through its public `symbols`, and the line goes to the logger's own stream. A
 * logger configured beyond that (a mixin, a log formatter, a stream hook, a stream that wants
 * metadata, another message key, nested fields, or no pino at all) gets pino's own line.
 */
export function accessLineWriter(logger: FastifyBaseLogger): (line: AccessLine) => void {
  const internals = logger as unknown as PinoInternals;
  const symbols = pino.symbols;
  const stream = internals[symbols.streamSym] as
    | (pino.DestinationStream & { [key: symbol]: unknown })
    | undefined;
  const formatters = internals[symbols.formattersSym] as { log?: unknown } | undefined;
  const hooks = internals[symbols.hooksSym] as { streamWrite?: unknown } | undefined;
  const plain =
    stream !== undefined &&
    stream[symbols.needsMetadataGsym] !== true &&
    internals[symbols.mixinSym] === undefined &&
    formatters?.log === undefined &&
    hooks?.streamWrite === undefined &&
    internals[symbols.messageKeySym] === 'msg' &&
    internals[symbols.nestedKeySym] == null;
  if (!plain) {
    const access = accessLogger(logger);
    return (line) => access.info(line, ACCESS_MESSAGE);
  }
  const pinoLogger = logger as pino.Logger;
  const info = pinoLogger.levels.values.info!;
  const prefix = (internals[symbols.lsCacheSym] as Record<number, string>)[info];
  const time = internals[symbols.timeSym] as () => string;
  const bindings = internals[symbols.chindingsSym] as string;
  const end = `,"msg":${JSON.stringify(ACCESS_MESSAGE)}${internals[symbols.endSym] as string}`;
  return (line) => {
    if (pinoLogger.levelVal > info) return;
    const path = line.path === undefined ? '' : `,"path":${quoted(line.path)}`;
    const peer = line.remoteAddress === undefined ? '' : `,"remoteAddress":${quoted(line.remoteAddress)}`;
    stream.write(
      `${prefix}${time()}${bindings},"reqId":${quoted(line.reqId)},"method":${quoted(line.method)}${path},"statusCode":${line.statusCode},"responseTime":${finite(line.responseTime)}${peer}${end}`,
    );
  };
}

const finite = (value: number) => (Number.isFinite(value) ? value : null);

/**
 * A string as JSON: quoted as it is when it holds only printable ASCII other than `"` and `\`
 * (request ids, methods, addresses and most paths), otherwise `JSON.stringify`'s answer, which is
 * what pino itself uses from Node 25 on. The check is a loop the JIT compiles; `JSON.stringify` is
 * a call into the runtime (~1,200 instructions a call here).
 */
function quoted(value: string): string {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return JSON.stringify(value);
  }
  return `"${value}"`;
}

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type ChildOptions = Parameters<FastifyBaseLogger['child']>[1];

/**
 * A request's logger (`request.log`), made into pino's child the first time the request logs. Fastify
 * makes a child per request; with the redaction paths above, pino runs @pinojs/redact over the
 * child's bindings, which parses every path again on each call: a fifth of all the memory a
 * GET /v1/webhooks/key allocated (docs/performance.md, "Memory"). Most requests never log on their
 * own logger (the access line is written apart, `accessLineWriter`), so most never pay for it. A line the
 * level leaves out makes no child either. What a request does log is the same line as before: the
 * child has the same bindings, options and redaction.
 */
class RequestLogger {
  #child: FastifyBaseLogger | undefined;
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: pino.Bindings;
  readonly #options: ChildOptions;

  constructor(parent: FastifyBaseLogger, bindings: pino.Bindings, options: ChildOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  #logger(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options);
    return this.#child;
  }

  #log(level: Level, args: unknown[]): void {
    // A route with a level of its own decides on its child; otherwise the parent's level does.
    const dropped =
      !this.#child && !this.#options?.level && !(this.#parent as pino.Logger).isLevelEnabled(level);
    if (!dropped) (this.#logger()[level] as (...line: unknown[]) => void)(...args);
  }

  get level(): string {
    return this.#child?.level ?? this.#options?.level ?? this.#parent.level;
  }

  set level(level: string) {
    this.#logger().level = level;
  }

  fatal(...args: unknown[]) {
    this.#log('fatal', args);
  }
  error(...args: unknown[]) {
    this.#log('error', args);
  }
  warn(...args: unknown[]) {
    this.#log('warn', args);
  }
  info(...args: unknown[]) {
    this.#log('info', args);
  }
  debug(...args: unknown[]) {
    this.#log('debug', args);
  }
  trace(...args: unknown[]) {
    this.#log('trace', args);
  }
  silent(..._args: unknown[]) {}

  child(bindings: pino.Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.#logger().child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: `request.log` as a `RequestLogger`. */
export const requestLoggerFactory = (
  logger: FastifyBaseLogger,
  bindings: pino.Bindings,
  options: ChildOptions,
): FastifyBaseLogger => new RequestLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
