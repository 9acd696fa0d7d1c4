import { generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto';
import { signPartnerRequest } from '@partner-api/contract';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { TestApp } from './app.ts';

export type Partner = {
  organizationId: string;
  credentialId: string;
  clientId: string;
  clientSecret: string;
  keyId: string;
  privateKey: KeyObject;
  token: string;
};

let counter = 0;

/** A fresh organization with a signing credential, created through the admin API, plus a token. */
export async function createPartner(
  t: TestApp,
  options: { trustedIps?: string[]; withKey?: boolean; name?: string } = {},
): Promise<Partner> {
  counter += 1;
  const admin = (method: 'POST' | 'GET', url: string, payload?: unknown) =>
    t.admin.inject({
      method,
      url,
      payload: payload as InjectOptions['payload'],
      headers: { authorization: `Bearer ${t.ctx.secrets.adminToken}` },
    });
  const org = (
    await admin('POST', '/admin/organizations', {
      name: options.name ?? `Org ${counter} ${randomUUID().slice(0, 8)}`,
    })
  ).json();
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const keyId = `partner-key-${counter}`;
  const withKey = options.withKey ?? true;
  const created = await admin('POST', `/admin/organizations/${org.id}/credentials`, {
    name: 'test credential',
    ...(withKey ? { publicKey: publicKey.export({ format: 'pem', type: 'spki' }).toString(), keyId } : {}),
    trustedIps: options.trustedIps,
  });
  if (created.statusCode !== 201) throw new Error(`credential create failed: ${created.body}`);
  const credential = created.json();
  const tokenResponse = await t.app.inject({
    method: 'POST',
    url: '/v1/oauth/token',
    payload: { clientId: credential.clientId, clientSecret: credential.clientSecret },
  });
  if (tokenResponse.statusCode !== 200) throw new Error(`token failed: ${tokenResponse.body}`);
  return {
    organizationId: org.id,
    credentialId: credential.id,
    clientId: credential.clientId,
    clientSecret: credential.clientSecret,
    keyId,
    privateKey,
    token: tokenResponse.json().token,
  };
}

export type SignedRequest = {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  url: string;
  body?: unknown;
  idempotencyKey?: string | false;
  headers?: Record<string, string>;
  /** Runs on the signed headers before sending: the way tests tamper with a request. */
  tamper?: (headers: Record<string, string>, target: { method: string; url: string }) => void;
  created?: number;
};

export const BASE_URL = 'http://localhost:8080';

/** Headers of a correctly signed partner request (token, client id, digest, signature). */
export function signedHeaders(
  partner: Partner,
  request: SignedRequest,
  payload: string | undefined,
): Record<string, string> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${partner.token}`,
    'x-client-id': partner.clientId,
    ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
    ...request.headers,
  };
  const mutating = request.method !== 'GET' && !request.url.startsWith('/v1/oauth/revoke');
  if (request.idempotencyKey !== false && (mutating || request.idempotencyKey)) {
    headers['x-idempotency-key'] = request.idempotencyKey || randomUUID();
  }
  const signed = signPartnerRequest({
    method: request.method,
    url: BASE_URL + request.url,
    headers,
    body: payload,
    keyId: partner.keyId,
    privateKey: partner.privateKey,
    created: request.created,
  });
  request.tamper?.(signed, { method: request.method, url: BASE_URL + request.url });
  return signed;
}

/** Signs and sends one request through Fastify's inject. */
export function signedInject(
  app: FastifyInstance,
  partner: Partner,
  request: SignedRequest,
): Promise<LightMyRequestResponse> {
  const payload =
    request.body === undefined
      ? undefined
      : typeof request.body === 'string'
        ? request.body
        : JSON.stringify(request.body);
  const headers = signedHeaders(partner, request, payload);
  return app.inject({ method: request.method, url: request.url, headers, payload });
}
