/**
 * A partner of a running server, set up through the admin API and the token endpoint like a real
 * one, and requests signed the way the SDK signs them: the tests' partner helper
 * (packages/testkit/src/partner.ts), with the bench's own X-Forwarded-For.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import {
  createPartner,
  type HttpServer,
  type Partner,
  payloadOf,
  signedHeaders,
} from '@partner-api/testkit/partner.ts';
import type { PreparedRequest } from './load.ts';

export type BenchPartner = Partner & {
  /** Sent with every request, outside the signature (the bench's X-Forwarded-For). */
  extraHeaders: Record<string, string>;
};

export async function createBenchPartner(
  server: HttpServer,
  extraHeaders: Record<string, string> = {},
): Promise<BenchPartner> {
  const partner = await createPartner(server, {
    name: `bench ${new Date().toISOString()} ${randomUUID().slice(0, 8)}`,
    keyPrefix: 'bench',
    headers: extraHeaders,
  });
  return { ...partner, extraHeaders };
}

/** One signed request: token, client id, digest and signature; a fresh idempotency key for a mutation. */
export function signed(
  partner: BenchPartner,
  method: 'GET' | 'POST' | 'PATCH',
  path: string,
  body?: unknown,
): PreparedRequest {
  const payload = payloadOf(body);
  const headers = signedHeaders(partner, { method, url: path }, payload);
  return { method, path, headers: { ...headers, ...partner.extraHeaders }, body: payload };
}

/** Scenario 3's request: a signed idempotent POST /v1/customers, its key and name new each time. */
export function signedCreate(partner: BenchPartner, i: number): PreparedRequest {
  return signed(partner, 'POST', '/v1/customers', {
    firstName: 'Bench',
    lastName: `Customer ${i} ${randomBytes(3).toString('hex')}`,
    msisdn: '254712345678',
    referenceId: `bench-${i}`,
  });
}

/** Customers with a number (so they can buy), created through the API twenty at a time. */
export async function createCustomers(partner: BenchPartner, count: number): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const res = await send(
        partner,
        signed(partner, 'POST', '/v1/customers', {
          firstName: 'Ussd',
          lastName: `Bench ${i}`,
          msisdn: `2547${String(10_000_000 + i).slice(-8)}`,
        }),
      );
      if (res.status !== 201) throw new Error(`customer create: ${res.status} ${res.text}`);
      ids[i] = res.json?.data?.id as string;
    }
  };
  await Promise.all(Array.from({ length: 20 }, worker));
  return ids;
}

/** The fields of a response body the bench reads. */
export type ResponseBody = { data?: { id?: string; sessionId?: string; currentState?: string } };

/** Sends one signed request with fetch; returns status, body and the client-side latency. */
export async function send(partner: BenchPartner, request: PreparedRequest) {
  const began = performance.now();
  const response = await fetch(partner.baseUrl + request.path, {
    method: request.method,
    headers: request.headers,
    body: request.body,
  });
  const text = await response.text();
  const ms = performance.now() - began;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: response.status, json: json as ResponseBody | undefined, text, ms };
}
