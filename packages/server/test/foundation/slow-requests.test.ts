import { connect } from 'node:net';
import { type ServerProcess, startSandbox } from '@partner-api/testkit/process.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * A client that trickles a request body a byte at a time holds a connection only until
 * REQUEST_TIMEOUT_MS (headers and body together): then Node answers 408 and closes it. A real
 * `partner-api serve` with a short timeout; the assertion is that the connection ends with a 408,
 * not how fast.
 */
describe('slow request bodies are timed out', () => {
  let server: ServerProcess;

  beforeAll(async () => {
    ({ server } = await startSandbox({ REQUEST_TIMEOUT_MS: '1500' }));
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('a body trickled one byte at a time is answered 408 and closed', async () => {
    const { port } = new URL(server.baseUrl);
    const answer = await new Promise<string>((resolve, reject) => {
      let received = '';
      let trickle: NodeJS.Timeout | undefined;
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(
          'POST /v1/oauth/token HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n',
        );
        trickle = setInterval(() => socket.write('a'), 100);
      });
      socket.on('data', (chunk) => {
        received += chunk.toString('latin1');
      });
      socket.on('close', () => {
        clearInterval(trickle);
        resolve(received);
      });
      socket.on('error', (error) => {
        clearInterval(trickle);
        // A reset after the answer was read is still the server closing it.
        if (received) resolve(received);
        else reject(error);
      });
      // The test's own bound, far above the server's timeout: a connection still open then fails it.
      setTimeout(() => {
        clearInterval(trickle);
        socket.destroy();
        reject(new Error(`still open after 20 s; received ${JSON.stringify(received)}`));
      }, 20_000).unref();
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  }, 30_000);
});
