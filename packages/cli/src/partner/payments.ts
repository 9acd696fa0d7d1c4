import type { PartnerClient, PaymentStatusResponse } from '@partner-api/sdk';
import { type Out, paymentLines, paymentSummary, printJson } from './format.ts';

const FRAMES = '⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏';

export type WaitIo = { out: Out & { isTTY?: boolean }; json: boolean; timeoutMs: number };

/**
 * `payments status --wait`: polls until every transaction is final. On a TTY one live line (spinner,
 * statuses, elapsed time) redrawn in place; otherwise a plain timestamped line whenever a status changes,
 * so logs and pipes stay readable. With --json only the final answer is printed.
 */
export async function waitForPayment(
  client: PartnerClient,
  orderId: string,
  io: WaitIo,
): Promise<PaymentStatusResponse> {
  const tty = Boolean(io.out.isTTY) && !io.json;
  const started = Date.now();
  let summary = 'waiting for the first answer';
  let polls = 0;
  let frame = 0;
  const draw = () => {
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    io.out.write(
      `\r\x1b[2K${FRAMES[frame++ % FRAMES.length]} order ${orderId}: ${summary} · ${seconds}s · poll ${polls}`,
    );
  };
  const ticker = tty ? setInterval(draw, 100) : undefined;
  try {
    const final = await client.paymentStatus.waitForFinal(orderId, {
      timeoutMs: io.timeoutMs,
      onPoll: (status, poll) => {
        polls = poll;
        const next = paymentSummary(status.data);
        if (!tty && !io.json && next !== summary) io.out.write(`${new Date().toISOString()} ${next}\n`);
        summary = next;
        if (tty) draw();
      },
    });
    if (tty) io.out.write('\r\x1b[2K');
    if (io.json) printJson(io.out, final);
    else io.out.write(`${paymentLines(final.data)}\n`);
    return final;
  } finally {
    if (ticker) clearInterval(ticker);
    if (tty) io.out.write('\r\x1b[2K');
  }
}
