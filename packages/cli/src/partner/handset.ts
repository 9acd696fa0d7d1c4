import { createInterface } from 'node:readline';
import {
  NotFoundError,
  PartnerApiError,
  type PartnerClient,
  type UssdResponse,
  ValidationError,
} from '@partner-api/sdk';
import { errorText } from './format.ts';

export type HandsetIo = {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  /** NDJSON: each API answer as one line, nothing else on stdout. */
  json: boolean;
};

/** Word-wraps a line to `width` (a long word is cut): a TTY gets handset-width screens. */
function wrap(line: string, width: number): string[] {
  if (line.length <= width) return [line];
  const out: string[] = [];
  let current = '';
  for (const word of line.split(' ')) {
    let rest = word;
    while (rest.length > width) {
      if (current) out.push(current);
      current = '';
      out.push(rest.slice(0, width));
      rest = rest.slice(width);
    }
    if (!current) current = rest;
    else if (current.length + 1 + rest.length <= width) current += ` ${rest}`;
    else {
      out.push(current);
      current = rest;
    }
  }
  out.push(current);
  return out;
}

/** `ussdText` in a box, the way a handset shows it, then the state under it. */
export function renderScreen(response: UssdResponse, width = Number.POSITIVE_INFINITY): string {
  const { data } = response;
  const lines = data.ussdText.split('\n').flatMap((line) => wrap(line, width));
  const inner = Math.max(20, ...lines.map((l) => l.length));
  const bar = '─'.repeat(inner + 2);
  const body = lines.map((l) => `│ ${l.padEnd(inner)} │`);
  const status = data.menu.isEndState ? `${data.currentState} · session ended` : data.currentState;
  return [`┌${bar}┐`, ...body, `└${bar}┘`, `  ${status}`, ''].join('\n');
}

/** Errors that end the session: it expired, ended, or is unknown. */
function endsSession(error: unknown): boolean {
  return (
    error instanceof NotFoundError ||
    (error instanceof ValidationError && /^USSD session/.test(error.message))
  );
}

/**
 * An interactive handset: opens a session for the customer, shows each screen, reads one choice per
 * line until an end state or until the input closes (Ctrl-D hangs up). A choice the API refuses
 * (e.g. not alphanumeric) is reported and the same screen stays. Returns the exit code.
 */
export async function runHandset(client: PartnerClient, customerId: string, io: HandsetIo): Promise<number> {
  const out = io.output;
  const tty = Boolean(out.isTTY) && !io.json;
  const width = tty ? Math.max(20, Math.min(40, (out.columns ?? 80) - 4)) : Number.POSITIVE_INFINITY;
  const show = (response: UssdResponse) =>
    out.write(io.json ? `${JSON.stringify(response)}\n` : renderScreen(response, width));
  const fail = (error: unknown) => {
    if (io.json && error instanceof PartnerApiError && error.body && typeof error.body === 'object') {
      out.write(`${JSON.stringify(error.body)}\n`);
    }
    process.stderr.write(`partner: ${error instanceof PartnerApiError ? errorText(error) : String(error)}\n`);
  };

  let current: UssdResponse;
  try {
    current = await client.ussd.start(customerId);
  } catch (error) {
    fail(error);
    return 1;
  }
  show(current);
  if (current.data.menu.isEndState) return 0;

  const rl = createInterface({ input: io.input, output: tty ? out : undefined, terminal: tty });
  const prompt = () => {
    if (tty) {
      rl.setPrompt('Reply: ');
      rl.prompt();
    }
  };
  prompt();
  try {
    for await (const line of rl) {
      const choice = line.trim();
      if (choice === '') {
        prompt();
        continue;
      }
      // A terminal echoes what was typed; a piped transcript shows it here instead.
      if (!tty && !io.json) out.write(`> ${choice}\n`);
      try {
        current = await client.ussd.process(current.data.sessionId, choice);
      } catch (error) {
        fail(error);
        if (endsSession(error) || !(error instanceof ValidationError)) return 1;
        prompt();
        continue;
      }
      show(current);
      if (current.data.menu.isEndState) return 0;
      prompt();
    }
    if (!io.json) out.write(tty ? '\nHung up.\n' : 'Hung up.\n');
    return 0;
  } finally {
    rl.close();
  }
}
