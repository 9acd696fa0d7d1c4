import { createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  verifyWebhookDelivery,
  WEBHOOK_SIGNATURE_LABEL,
  WEBHOOK_SIGNATURE_VALIDITY_SECONDS,
} from '@partner-api/contract';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_KEY } from '../openapi/signing-example.ts';
import { WEBHOOK_EXAMPLE, webhookExample } from './delivery-doc-example.ts';

const GUIDE = readFileSync(new URL('../../../../docs/webhooks.md', import.meta.url), 'utf8');
const codeBlocks = [...GUIDE.matchAll(/```[a-z]*\n([\s\S]*?)\n```/g)].map((m) => m[1]!);

describe('docs/webhooks.md, Signature', () => {
  const example = webhookExample();

  it('shows the body, the headers and the signature base exactly as the worker computes them', () => {
    expect(codeBlocks).toContain(example.body);
    expect(codeBlocks).toContain(EXAMPLE_KEY.privateKeyPem.trim());
    const wire = [
      `POST /partner-api HTTP/1.1`,
      `Host: hooks.example.com`,
      `Content-Type: ${example.headers['content-type']}`,
      `Content-Digest: ${example.headers['content-digest']}`,
      `Webhook-Id: ${example.headers['webhook-id']}`,
      `Webhook-Timestamp: ${example.headers['webhook-timestamp']}`,
      `Signature-Input: ${example.headers['signature-input']}`,
      `Signature: ${example.headers.signature}`,
    ].join('\n');
    expect(codeBlocks).toContain(wire);
    expect(codeBlocks).toContain(example.base);
    expect(example.headers['signature-input']).toMatch(new RegExp(`^${WEBHOOK_SIGNATURE_LABEL}=`));
  });

  it('the example verifies with the published half of the key, inside its window only', () => {
    const resolveKey = (keyId: string) =>
      keyId === WEBHOOK_EXAMPLE.keyId
        ? { publicKey: createPublicKey(EXAMPLE_KEY.publicKeyPem), alg: 'ed25519' as const }
        : undefined;
    const check = (now: number) =>
      verifyWebhookDelivery({
        method: 'POST',
        url: WEBHOOK_EXAMPLE.url,
        headers: example.headers,
        body: example.body,
        resolveKey,
        now,
      });
    expect(check(WEBHOOK_EXAMPLE.attemptAt + 10).ok).toBe(true);
    expect(check(WEBHOOK_EXAMPLE.attemptAt + WEBHOOK_SIGNATURE_VALIDITY_SECONDS + 1).ok).toBe(false);
  });
});
