import { describe, expect, it } from 'vitest';
import { readServerSentEvents, type ServerSentEvent } from '../src/index.ts';

/** The stream cut into the given pieces, as a network may deliver it. */
async function read(...pieces: string[]): Promise<ServerSentEvent[]> {
  const encoder = new TextEncoder();
  async function* chunks() {
    for (const piece of pieces) yield encoder.encode(piece);
  }
  const out: ServerSentEvent[] = [];
  for await (const event of readServerSentEvents(chunks())) out.push(event);
  return out;
}

describe('readServerSentEvents', () => {
  it('reads events with their name, id and data; comments are skipped', async () => {
    expect(
      await read(': connected\n\n', 'event: webhook\nid: e-1\ndata: {"a":1}\n\n', ': keep-alive\n\n'),
    ).toEqual([{ event: 'webhook', id: 'e-1', data: '{"a":1}' }]);
  });

  it('joins data lines, defaults the name to message, and keeps the last id', async () => {
    expect(await read('data: one\ndata: two\n\nid: 7\ndata:x\n\n')).toEqual([
      { event: 'message', id: undefined, data: 'one\ntwo' },
      { event: 'message', id: '7', data: 'x' },
    ]);
  });

  it('handles CRLF and CR line ends, split anywhere, and a UTF-8 character cut in two', async () => {
    const bytes = 'event: webhook\r\ndata: Amina Ç\r\rdata: b\r\n\r\n';
    const pieces = bytes.split('');
    expect(await read(...pieces)).toEqual([
      { event: 'webhook', id: undefined, data: 'Amina Ç' },
      { event: 'message', id: undefined, data: 'b' },
    ]);
    // A multi-byte character split between two chunks.
    const encoder = new TextEncoder();
    const whole = encoder.encode('data: é\n\n');
    async function* split() {
      yield whole.slice(0, 7);
      yield whole.slice(7);
    }
    const out: ServerSentEvent[] = [];
    for await (const event of readServerSentEvents(split())) out.push(event);
    expect(out).toEqual([{ event: 'message', id: undefined, data: 'é' }]);
  });

  it('drops an event the stream ended before dispatching', async () => {
    expect(await read('data: complete\n\n', 'data: cut off')).toEqual([
      { event: 'message', id: undefined, data: 'complete' },
    ]);
  });
});
