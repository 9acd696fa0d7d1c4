/**
 * A partner of a running server, set up through the admin API and the token endpoint like a real
 * one, and requests signed the way the SDK signs them (contract's signPartnerRequest).
 */
import { generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto';
import { signPartnerRequest } from '@partner-api/contract';
import type { PreparedRequest } from './load.ts';

export type BenchPartner = {
  baseUrl: string;
  organizationId: string;
  clientId: string;
  keyId: string;
  privateKey: KeyObject;
  token: string;
  /** Sent with every request, outside the signature (the bench's X-Forwarded-For). */
  extraHeaders: Record<string, string>;
};

async function call(url: string, init: RequestInit & { json?: unknown } = {}) {
  const { json, ...rest } = init;
  const response = await fetch(url, {
    ...rest,
    headers: { ...(json !== undefined ? { 'content-type': 'application/json' } : {}), ...rest.headers },
    body: json !== undefined ? JSON.stringify(json) : rest.body,
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${response.status} ${text}`);
  return JSON.parse(text);
}

export async function createBenchPartner(
  server: { baseUrl: string; adminUrl: string; adminToken: string },
  extraHeaders: Record<string, string> = {},
): Promise<BenchPartner> {
  const admin = { authorization: `Bearer ${server.adminToken}` };
  const org = await call(`${server.adminUrl}/admin/organizations`, {
    method: 'POST',
    headers: admin,
    json: { name: `bench ${new Date().toISOString()} ${randomUUID().slice(0, 8)}` },
  });
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const keyId = `bench-${randomUUID().slice(0, 8)}`;
  const credential = await call(`${server.adminUrl}/admin/organizations/${org.id}/credentials`, {
    method: 'POST',
    headers: admin,
    json: { name: 'bench', publicKey: publicKey.export({ format: 'pem', type: 'spki' }).toString(), keyId },
  });
  const token = await call(`${server.baseUrl}/v1/oauth/token`, {
    method: 'POST',
    headers: extraHeaders,
    json: { clientId: credential.clientId, clientSecret: credential.clientSecret },
  });
  return {
    baseUrl: server.baseUrl,
    organizationId: org.id,
    clientId: credential.clientId,
    keyId,
    privateKey,
    token: token.token,
    extraHeaders,
  };
}

/** One signed request: token, client id, digest and signature; a fresh idempotency key for a POST. */
export function signed(
  partner: BenchPartner,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): PreparedRequest {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string> = {
    authorization: `Bearer ${partner.token}`,
    'x-client-id': partner.clientId,
  };
  if (payload !== undefined) headers['content-type'] = 'application/json';
  if (method === 'POST') headers['x-idempotency-key'] = randomUUID();
  const all = signPartnerRequest({
    method,
    url: partner.baseUrl + path,
    headers,
    body: payload,
    keyId: partner.keyId,
    privateKey: partner.privateKey,
  });
  return { method, path, headers: { ...all, ...partner.extraHeaders }, body: payload };
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
