/**
 * The one place the tests (server, SDK, CLI, scale, reliability) and the bench make partners and sign
 * their calls: an organization and a credential through the admin API, a token from
 * POST /v1/oauth/token, and requests signed the way the SDK signs them (RFC 9421 through the
 * contract's signPartnerRequest). A partner is reached through Fastify's inject (a TestApp) or over
 * HTTP (a running process); the sandbox's seeded partner comes from its credentials file. It imports
 * no server code, so that the bench can use it too.
 */
import { createPrivateKey, generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { signPartnerRequest } from '@partner-api/contract';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { SandboxCredentials } from '../../sdk/src/index.ts';
import type { TestApp } from './app.ts';
import { adminFetch, adminInject } from './helpers.ts';

/** The scheme and authority an injected request's signature names (the default PUBLIC_BASE_URL). */
export const BASE_URL = 'http://localhost:8080';

export type Partner = {
  /** Where requests go and what their `@target-uri` names. */
  baseUrl: string;
  organizationId: string;
  credentialId: string;
  clientId: string;
  clientSecret: string;
  keyId: string;
  privateKey: KeyObject;
  token: string;
};

export type SigningKey = { keyId: string; privateKey: KeyObject; publicKeyPem: string };

/** A fresh Ed25519 key pair and a key id no other key of this process has. */
export function newSigningKey(prefix = 'partner-key'): SigningKey {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return {
    keyId: `${prefix}-${randomUUID().slice(0, 8)}`,
    privateKey,
    publicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
  };
}

/** A running `partner-api serve` reached over HTTP: its public and admin listeners, its admin token. */
export type HttpServer = { baseUrl: string; adminUrl: string; adminToken: string };

type Answer = { status: number; body: unknown };
type Calls = {
  baseUrl: string;
  admin(url: string, body: unknown): Promise<Answer>;
  token(body: unknown): Promise<Answer>;
};

function injectCalls(t: TestApp): Calls {
  const answer = (res: LightMyRequestResponse) => ({ status: res.statusCode, body: res.json() });
  return {
    baseUrl: BASE_URL,
    admin: async (url, body) => answer(await adminInject(t, 'POST', url, body)),
    token: async (body) =>
      answer(await t.app.inject({ method: 'POST', url: '/v1/oauth/token', payload: body as object })),
  };
}

function httpCalls(server: HttpServer, headers: Record<string, string>): Calls {
  return {
    baseUrl: server.baseUrl,
    admin: (url, body) => adminFetch(server.adminUrl, server.adminToken, 'POST', url, body),
    token: async (body) => {
      const res = await fetch(`${server.baseUrl}/v1/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    },
  };
}

function expectStatus(what: string, answer: Answer, status: number): Record<string, string> {
  if (answer.status !== status) throw new Error(`${what}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body as Record<string, string>;
}

export type PartnerOptions = {
  trustedIps?: string[];
  /** false: a credential without a signing key (it can get a token, never sign). */
  withKey?: boolean;
  name?: string;
  /** The key id's prefix (a log or a database row then names the test that made it). */
  keyPrefix?: string;
  /** Sent with the token request over HTTP only (e.g. X-Forwarded-For behind a trusted proxy). */
  headers?: Record<string, string>;
};

/**
 * A fresh organization with a signing credential, created through the admin API, plus a token: in a
 * TestApp through inject, or in a running server over HTTP.
 */
export async function createPartner(
  where: TestApp | HttpServer,
  options: PartnerOptions = {},
): Promise<Partner> {
  const calls = 'app' in where ? injectCalls(where) : httpCalls(where, options.headers ?? {});
  const org = expectStatus(
    'organization create',
    await calls.admin('/admin/organizations', {
      name: options.name ?? `Org ${randomUUID().slice(0, 8)}`,
    }),
    201,
  );
  const key = newSigningKey(options.keyPrefix);
  const credential = expectStatus(
    'credential create',
    await calls.admin(`/admin/organizations/${org.id}/credentials`, {
      name: 'test credential',
      ...((options.withKey ?? true) ? { publicKey: key.publicKeyPem, keyId: key.keyId } : {}),
      trustedIps: options.trustedIps,
    }),
    201,
  );
  const token = expectStatus(
    'token',
    await calls.token({ clientId: credential.clientId, clientSecret: credential.clientSecret }),
    200,
  );
  return {
    baseUrl: calls.baseUrl,
    organizationId: org.id!,
    credentialId: credential.id!,
    clientId: credential.clientId!,
    clientSecret: credential.clientSecret!,
    keyId: key.keyId,
    privateKey: key.privateKey,
    token: token.token!,
  };
}

/** A fresh token for the partner's credential from the token endpoint of its server, over HTTP. */
export async function fetchToken(
  partner: Pick<Partner, 'baseUrl' | 'clientId' | 'clientSecret'>,
  headers: Record<string, string> = {},
): Promise<string> {
  const answer = await httpCalls({ baseUrl: partner.baseUrl, adminUrl: '', adminToken: '' }, headers).token({
    clientId: partner.clientId,
    clientSecret: partner.clientSecret,
  });
  return expectStatus('token', answer, 200).token!;
}

/** The partner a sandbox seeds (its credentials file), with a fresh token from `baseUrl`. */
export async function sandboxPartner(baseUrl: string, credentialsFile: string): Promise<Partner> {
  const credentials = JSON.parse(readFileSync(credentialsFile, 'utf8')) as SandboxCredentials;
  const partner = {
    baseUrl,
    organizationId: credentials.organizationId ?? '',
    credentialId: '',
    clientId: credentials.clientId,
    clientSecret: credentials.clientSecret,
    keyId: credentials.keyId,
    privateKey: createPrivateKey(credentials.privateKey),
  };
  return { ...partner, token: await fetchToken(partner) };
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
  /** The signature's life in seconds (the contract signs for 300 unless told). */
  validitySeconds?: number;
};

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
    url: partner.baseUrl + request.url,
    headers,
    body: payload,
    keyId: partner.keyId,
    privateKey: partner.privateKey,
    created: request.created,
    validitySeconds: request.validitySeconds,
  });
  request.tamper?.(signed, { method: request.method, url: partner.baseUrl + request.url });
  return signed;
}

/** The request's body as sent: a string as it is, anything else as JSON. */
export function payloadOf(body: unknown): string | undefined {
  return body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
}

/** Signs and sends one request through Fastify's inject. */
export function signedInject(
  app: FastifyInstance,
  partner: Partner,
  request: SignedRequest,
): Promise<LightMyRequestResponse> {
  const payload = payloadOf(request.body);
  const headers = signedHeaders(partner, request, payload);
  return app.inject({ method: request.method, url: request.url, headers, payload });
}

/**
 * Signs and sends one request over HTTP to the partner's server. `unsigned` headers travel outside
 * the signature (e.g. X-Forwarded-For, X-Request-Id).
 */
export function signedFetch(
  partner: Partner,
  request: SignedRequest,
  init: { unsigned?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<Response> {
  const payload = payloadOf(request.body);
  const headers = signedHeaders(partner, request, payload);
  return fetch(partner.baseUrl + request.url, {
    method: request.method,
    headers: { ...headers, ...init.unsigned },
    body: payload,
    signal: init.signal,
  });
}
