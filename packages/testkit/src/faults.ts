import { connect, createServer, type Server, type Socket } from 'node:net';
import { freePort } from './process.ts';

/**
 * A TCP relay between the server under test and a real dependency (PostgreSQL, Redis) that a test
 * can cut and restore. The machine's PostgreSQL and Redis are shared with other suites running at the
 * same time: they are never stopped; only the relay in front of them is.
 *
 * - `cut('refuse')`: the dependency stopped or crashed: open connections are reset, new ones refused
 *   (the listener is closed, so connect() gets ECONNREFUSED).
 * - `cut('blackhole')`: a partition seen at connect time: open connections are reset, new ones are
 *   accepted and never answered.
 * - `cut('freeze')`: a partition on established connections: nothing is reset, nothing flows any
 *   more in either direction (what a silently dropped route or a stuck server looks like).
 * - `restore()`: traffic flows again on the same port; frozen or blackholed connections are reset
 *   so that clients reconnect, as they would once the route or the dependency came back.
 */
export type RelayState = 'open' | 'refuse' | 'blackhole' | 'freeze';

export type Relay = {
  port: number;
  /** The given URL with its host and port replaced by the relay's. */
  urlFor(url: string): string;
  cut(mode?: Exclude<RelayState, 'open'>): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
  /** Connections accepted so far, whatever the state. */
  readonly accepted: number;
  /** Chunks of bytes the clients have sent so far, whether or not they were forwarded. */
  readonly received: number;
  /**
   * With `protocol: 'postgres'`: the exchanges the clients began, i.e. round trips. node-postgres ends
   * each extended-protocol query (Parse, Bind, Describe, Execute) with one Sync and sends a simple
   * query as one Query message: the relay counts Sync and Query messages on the wire.
   */
  readonly exchanges: number;
  readonly state: RelayState;
};

/** Counts a PostgreSQL client's Sync ('S') and Query ('Q') messages, across chunk boundaries. */
function postgresExchangeCounter(count: () => void) {
  let buffered = Buffer.alloc(0);
  let started = false; // the startup message has no type byte
  return (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    for (;;) {
      const header = started ? 5 : 4;
      if (buffered.length < header) return;
      const length = started ? buffered.readInt32BE(1) + 1 : buffered.readInt32BE(0);
      if (buffered.length < length) return;
      if (started && (buffered[0] === 0x53 || buffered[0] === 0x51)) count();
      started = true;
      buffered = buffered.subarray(length);
    }
  };
}

export async function startRelay(
  target: { host: string; port: number },
  options: { protocol?: 'postgres' } = {},
): Promise<Relay> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let state: RelayState = 'open';
  let accepted = 0;
  let received = 0;
  let exchanges = 0;
  let server: Server | undefined;

  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  };

  const onConnection = (client: Socket) => {
    accepted += 1;
    track(client);
    client.on('data', () => {
      received += 1;
    });
    if (options.protocol === 'postgres') {
      client.on(
        'data',
        postgresExchangeCounter(() => {
          exchanges += 1;
        }),
      );
    }
    if (state !== 'open') return; // blackhole / freeze: accepted, never answered
    const upstream = connect(target.port, target.host);
    track(upstream);
    // Forwarded by hand (not pipe) so that a freeze stops the bytes on established connections.
    client.on('data', (chunk) => state !== 'freeze' && upstream.write(chunk));
    upstream.on('data', (chunk) => state !== 'freeze' && client.write(chunk));
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', drop);
    upstream.on('close', drop);
  };

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer(onConnection);
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        s.off('error', reject);
        server = s;
        resolve();
      });
    });

  const stopListening = () =>
    new Promise<void>((resolve) => {
      const s = server;
      server = undefined;
      if (!s) return resolve();
      s.close(() => resolve());
    });

  const resetAll = () => {
    for (const socket of sockets) socket.resetAndDestroy();
    sockets.clear();
  };

  await listen();
  return {
    port,
    urlFor(url: string) {
      const relayed = new URL(url);
      relayed.hostname = '127.0.0.1';
      relayed.port = String(port);
      return relayed.toString();
    },
    async cut(mode = 'refuse') {
      state = mode;
      if (mode === 'freeze') return;
      resetAll();
      if (mode === 'refuse') await stopListening();
    },
    async restore() {
      const was = state;
      state = 'open';
      if (was === 'freeze' || was === 'blackhole') resetAll();
      if (!server) await listen();
    },
    async close() {
      state = 'refuse';
      resetAll();
      await stopListening();
    },
    get accepted() {
      return accepted;
    },
    get exchanges() {
      return exchanges;
    },
    get received() {
      return received;
    },
    get state() {
      return state;
    },
  };
}

/** Host and port of a postgres:// or redis:// URL. */
export function targetOf(url: string, defaultPort: number): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port || defaultPort) };
}
