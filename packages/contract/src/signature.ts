import { createPrivateKey, sign as cryptoSign, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import * as sf from 'structured-headers';

/** A request as the signature base sees it. `targetUri` is absolute; header names are lower-case. */
export type SignableRequest = {
  method: string;
  targetUri: string;
  headers: Record<string, string | string[] | undefined>;
};

/** Serialized in this order when present (RFC 9421 §2.3). */
export type SignatureParams = {
  created?: number;
  expires?: number;
  keyid?: string;
  alg?: string;
  nonce?: string;
  tag?: string;
};

export type SignatureErrorCode = 'missing-header' | 'bad-component' | 'bad-params' | 'bad-value' | 'bad-key';

export class SignatureError extends Error {
  override readonly name = 'SignatureError';
  readonly code: SignatureErrorCode;
  readonly reason: string;
  /** The component concerned, when there is one. */
  readonly component: string | undefined;
  constructor(code: SignatureErrorCode, reason: string, component?: string) {
    super(reason);
    this.code = code;
    this.reason = reason;
    this.component = component;
  }
}

export const REVOKE_FORBIDDEN_COMPONENTS: readonly string[] = [
  'x-idempotency-key',
  'content-type',
  'content-digest',
  'content-length',
];

/** Components a request's signature must cover (docs/signing.md, Required components). */
export function requiredComponentsFor(opts: {
  method: string;
  hasBody: boolean;
  hasIdempotencyKey: boolean;
  isRevoke: boolean;
}): string[] {
  const out = ['@method', '@target-uri', 'authorization', 'x-client-id'];
  if (opts.hasBody && !opts.isRevoke) out.push('content-digest');
  if (opts.hasIdempotencyKey && !opts.isRevoke) out.push('x-idempotency-key');
  return out;
}

const isInt = (v: unknown): v is number => Number.isSafeInteger(v);

const FIELD_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
// HTAB and visible ASCII only: anything else (incl. LF) could forge extra base lines.
const BASE_SAFE = /^[\t\x20-\x7e]*$/;
const TARGET_URI = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)(?:\?([^#]*))?(?:#.*)?$/;

type ParsedUri = { scheme: string; authority: string; path: string; query: string | undefined };

function parseTargetUri(uri: string): ParsedUri {
  const m = TARGET_URI.exec(uri);
  if (!m) throw new SignatureError('bad-value', 'target URI is not absolute');
  const scheme = m[1]!.toLowerCase();
  const hostPort = m[2]!.slice(m[2]!.lastIndexOf('@') + 1).toLowerCase();
  const portAt = hostPort.lastIndexOf(':');
  const hasPort = portAt > hostPort.lastIndexOf(']');
  const host = hasPort ? hostPort.slice(0, portAt) : hostPort;
  const port = hasPort ? hostPort.slice(portAt + 1) : '';
  const isDefault =
    port === '' || (scheme === 'http' && port === '80') || (scheme === 'https' && port === '443');
  return { scheme, authority: isDefault ? host : `${host}:${port}`, path: m[3]!, query: m[4] };
}

type Deriver = (req: SignableRequest, uri: () => ParsedUri) => string;
const DERIVED: Record<string, Deriver> = {
  '@method': (req) => req.method,
  '@target-uri': (req) => req.targetUri,
  '@authority': (_, uri) => uri().authority,
  '@scheme': (_, uri) => uri().scheme,
  '@path': (_, uri) => uri().path || '/',
  '@query': (_, uri) => `?${uri().query ?? ''}`,
  '@request-target': (_, uri) => `${uri().path || '/'}${uri().query === undefined ? '' : `?${uri().query}`}`,
};

/** Strips leading and trailing SP and HTAB; most values have neither, and skip the regular expression. */
function trimOws(v: string): string {
  if (v === '') return v;
  const first = v.charCodeAt(0);
  const last = v.charCodeAt(v.length - 1);
  return first === 32 || first === 9 || last === 32 || last === 9 ? v.replace(/^[ \t]+|[ \t]+$/g, '') : v;
}

function fieldValue(name: string, headers: SignableRequest['headers']): string {
  const values: string[] = [];
  // Node's headers are lower-case already; a record built by hand may not be, so every key is still
  // compared, but only one of the same length is lower-cased.
  for (const key in headers) {
    if (key !== name && (key.length !== name.length || key.toLowerCase() !== name)) continue;
    if (!Object.hasOwn(headers, key)) continue;
    const value = headers[key];
    if (value === undefined) continue;
    if (typeof value === 'string') values.push(trimOws(value));
    else for (const v of value) values.push(trimOws(v));
  }
  if (values.length === 0) throw new SignatureError('missing-header', `header ${name} not present`, name);
  return values.length === 1 ? values[0]! : values.join(', ');
}

/** Base for a parsed Signature-Input member; `@signature-params` re-serializes it as the RFC requires. */
export function buildSignatureBaseFromInnerList(
  req: SignableRequest,
  list: sf.InnerList,
  /** The inner list's serialization when the caller already has it (readCanonicalSignatureInput). */
  serialized?: string,
): { base: string; signatureParams: string } {
  let parsed: ParsedUri | undefined;
  const uri = () => {
    parsed ??= parseTargetUri(req.targetUri);
    return parsed;
  };
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const [name, params] of list[0]) {
    if (typeof name !== 'string') throw new SignatureError('bad-component', 'component is not a string');
    if (params.size > 0) throw new SignatureError('bad-component', `unsupported parameters on ${name}`, name);
    if (seen.has(name)) throw new SignatureError('bad-component', `duplicate component ${name}`, name);
    seen.add(name);
    const derived = name.startsWith('@');
    if (derived ? !Object.hasOwn(DERIVED, name) : !FIELD_NAME.test(name)) {
      throw new SignatureError('bad-component', `unknown component ${name}`, name);
    }
    const value = derived ? DERIVED[name]!(req, uri) : fieldValue(name, req.headers);
    if (!BASE_SAFE.test(value)) throw new SignatureError('bad-value', `non-ASCII value in ${name}`, name);
    lines.push(`"${name}": ${value}`);
  }
  let signatureParams: string;
  try {
    signatureParams = serialized ?? sf.serializeInnerList(list);
  } catch {
    throw new SignatureError('bad-params', 'signature parameters cannot be serialized');
  }
  lines.push(`"@signature-params": ${signatureParams}`);
  return { base: lines.join('\n'), signatureParams };
}

/** RFC 9421 §2.5 signature base for the given components and parameters. */
export function buildSignatureBase(
  req: SignableRequest,
  components: readonly string[],
  params: SignatureParams,
): { base: string; signatureParams: string } {
  const map: sf.Parameters = new Map();
  for (const key of ['created', 'expires', 'keyid', 'alg', 'nonce', 'tag'] as const) {
    const value = params[key];
    if (value === undefined) continue;
    const ok = key === 'created' || key === 'expires' ? isInt(value) : typeof value === 'string';
    if (!ok) throw new SignatureError('bad-params', `invalid ${key}`);
    map.set(key, value);
  }
  return buildSignatureBaseFromInnerList(req, [components.map((c): sf.Item => [c, new Map()]), map]);
}

export type SignRequestOptions = {
  req: SignableRequest;
  components: readonly string[];
  keyId: string;
  privateKey: KeyObject | string;
  created?: number;
  /** Defaults to created + 300. */
  expires?: number;
  label?: string;
  nonce?: string;
};

/** Ed25519 signature; returns the Signature-Input and Signature header values. */
export function signRequest(opts: SignRequestOptions): { signatureInput: string; signature: string } {
  const key = typeof opts.privateKey === 'string' ? createPrivateKey(opts.privateKey) : opts.privateKey;
  if (key.type !== 'private' || key.asymmetricKeyType !== 'ed25519') {
    throw new SignatureError('bad-key', 'an ed25519 private key is required');
  }
  const created = opts.created ?? Math.floor(Date.now() / 1000);
  const expires = opts.expires ?? created + 300;
  const params: SignatureParams = { created, expires, keyid: opts.keyId, nonce: opts.nonce };
  const { base, signatureParams } = buildSignatureBase(opts.req, opts.components, params);
  const sig = cryptoSign(null, Buffer.from(base, 'latin1'), key);
  const label = opts.label ?? 'sig1';
  let signature: string;
  try {
    signature = sf.serializeDictionary(new Map([[label, [sig, new Map()]]]));
  } catch {
    throw new SignatureError('bad-params', `invalid label ${label}`);
  }
  // The label is a valid SF key here, so this equals serializeDictionary of the inner list.
  return { signatureInput: `${label}=${signatureParams}`, signature };
}

export type ResolvedKey = { publicKey: KeyObject; alg: 'ed25519' };

export type VerifyRequestOptions = {
  req: SignableRequest;
  signatureInputHeader: string | string[] | undefined;
  signatureHeader: string | string[] | undefined;
  resolveKey: (keyId: string) => ResolvedKey | undefined;
  /** Unix seconds; defaults to the current time. */
  now?: number;
  requiredComponents: readonly string[];
  forbiddenComponents?: readonly string[];
  maxAgeSeconds?: number;
  maxFutureSeconds?: number;
  maxValiditySeconds?: number;
};

export type VerifyResult =
  | { ok: true; keyId: string; label: string }
  | { ok: false; reason: string; base?: string };

function parseDict(value: string | string[] | undefined): sf.Dictionary | undefined {
  try {
    return sf.parseDictionary(Array.isArray(value) ? value.join(', ') : (value ?? ''));
  } catch {
    return undefined;
  }
}

// The canonical form of the two headers, as our SDK and RFC 9421's examples write them: one member;
// for Signature-Input an inner list of plain strings with integer and string parameters, for
// Signature a byte sequence with no parameters. No escapes, no leading zeros, no spaces but the one
// between items: anything else goes to structured-headers. A value in this form parses to what
// structured-headers gives and is its own serialization (test/signature.test.ts checks both), so
// the signed request skips the general parser and the re-serialization of `@signature-params`
// (docs/performance.md, "The signed GET").
const KEY = '[a-z*][a-z0-9_.*-]*';
const SF_STRING = '"[\\x20\\x21\\x23-\\x5b\\x5d-\\x7e]*"';
const SF_INTEGER = '(?:0|-?[1-9][0-9]{0,14})';
const CANONICAL_INPUT = new RegExp(
  `^(${KEY})=\\(((?:${SF_STRING}(?: ${SF_STRING})*)?)\\)((?:;${KEY}=(?:${SF_INTEGER}|${SF_STRING}))*)$`,
);
const INPUT_PARAM = new RegExp(`;(${KEY})=(?:(${SF_INTEGER})|"([^"]*)")`, 'g');
const CANONICAL_SIGNATURE = new RegExp(`^(${KEY})=:([A-Za-z0-9+/]*={0,2}):$`);

export type CanonicalSignatureInput = { label: string; list: sf.InnerList; serialized: string };

/** A Signature-Input value in canonical form, read without the general parser; otherwise undefined. */
export function readCanonicalSignatureInput(value: string): CanonicalSignatureInput | undefined {
  const m = CANONICAL_INPUT.exec(value);
  if (!m) return undefined;
  // Strings hold no quote, so `" "` only ever separates two items.
  const items: sf.Item[] = m[2]
    ? m[2]
        .slice(1, -1)
        .split('" "')
        .map((name): sf.Item => [name, new Map()])
    : [];
  const params: sf.Parameters = new Map();
  let count = 0;
  // exec in a loop: matchAll would construct a copy of the expression on every call.
  INPUT_PARAM.lastIndex = 0;
  for (let param = INPUT_PARAM.exec(m[3]!); param; param = INPUT_PARAM.exec(m[3]!)) {
    params.set(param[1]!, param[2] === undefined ? param[3]! : Number(param[2]));
    count++;
  }
  // A repeated parameter keeps its last value when parsed and is written once: not canonical.
  if (params.size !== count) return undefined;
  return { label: m[1]!, list: [items, params], serialized: value.slice(m[1]!.length + 1) };
}

/** A Signature value in canonical form: its label and bytes; otherwise undefined. */
export function readCanonicalSignature(value: string): { label: string; bytes: Buffer } | undefined {
  const m = CANONICAL_SIGNATURE.exec(value);
  if (!m || m[2]!.length % 4 !== 0) return undefined;
  return { label: m[1]!, bytes: Buffer.from(m[2]!, 'base64') };
}

type SignatureHeaders =
  | { ok: true; label: string; list: sf.InnerList; serialized?: string; bytes: Buffer }
  | { ok: false; reason: string };

/** The one signature of a request: its label, its Signature-Input member and its bytes. */
function readSignatureHeaders(
  inputHeader: string | string[] | undefined,
  signatureHeader: string | string[] | undefined,
): SignatureHeaders {
  const input = typeof inputHeader === 'string' ? readCanonicalSignatureInput(inputHeader) : undefined;
  // Both or neither: with one header not canonical, the library reads both.
  const signature =
    input && typeof signatureHeader === 'string' ? readCanonicalSignature(signatureHeader) : undefined;
  if (input && signature) {
    if (input.label !== signature.label) return { ok: false, reason: 'expected exactly one signature' };
    return {
      ok: true,
      label: input.label,
      list: input.list,
      serialized: input.serialized,
      bytes: signature.bytes,
    };
  }
  const inputs = parseDict(inputHeader);
  if (!inputs) return { ok: false, reason: 'malformed Signature-Input' };
  const sigs = parseDict(signatureHeader);
  if (!sigs) return { ok: false, reason: 'malformed Signature' };
  const [entry] = inputs;
  if (inputs.size !== 1 || sigs.size !== 1 || !entry || !sigs.has(entry[0])) {
    return { ok: false, reason: 'expected exactly one signature' };
  }
  const [label, member] = entry;
  if (!Array.isArray(member[0])) return { ok: false, reason: 'malformed Signature-Input' };
  const bytes = sigs.get(label)![0];
  if (!(bytes instanceof ArrayBuffer)) return { ok: false, reason: 'malformed Signature' };
  return { ok: true, label, list: member as sf.InnerList, bytes: Buffer.from(bytes) };
}

function baseFailureReason(e: unknown): string {
  if (!(e instanceof SignatureError)) return 'malformed Signature-Input';
  if (e.code === 'missing-header') return `header ${e.component} not present`;
  // A non-ASCII value or unusable target URI cannot have been signed as received.
  if (e.code === 'bad-value') return 'bad signature';
  return 'malformed Signature-Input';
}

/**
 * Verifies the request's single RFC 9421 signature under the policy of docs/signing.md.
 * Never throws on header content; errors thrown by `resolveKey` propagate.
 */
export function verifyRequestSignature(opts: VerifyRequestOptions): VerifyResult {
  const headers = readSignatureHeaders(opts.signatureInputHeader, opts.signatureHeader);
  if (!headers.ok) return headers;
  const { label, list } = headers;

  let base: string | undefined;
  let baseError: unknown;
  try {
    base = buildSignatureBaseFromInnerList(opts.req, list, headers.serialized).base;
  } catch (e) {
    baseError = e;
  }
  const fail = (reason: string): VerifyResult =>
    base === undefined ? { ok: false, reason } : { ok: false, reason, base };

  const params = list[1];
  const created = params.get('created');
  const expires = params.get('expires');
  if (!isInt(created) || !isInt(expires)) return fail('missing created or expires');
  const covered = new Set(list[0].map(([name]) => name));
  for (const name of opts.requiredComponents) {
    if (!covered.has(name)) return fail(`missing component ${name}`);
  }
  for (const name of opts.forbiddenComponents ?? []) {
    if (covered.has(name)) return fail(`component ${name} not allowed`);
  }
  if (base === undefined) return fail(baseFailureReason(baseError));

  const now = opts.now ?? Math.floor(Date.now() / 1000);
  if (now - created > (opts.maxAgeSeconds ?? 300)) return fail('created too old');
  if (created - now > (opts.maxFutureSeconds ?? 30)) return fail('not yet valid');
  if (now > expires) return fail('expired');
  if (expires - created > (opts.maxValiditySeconds ?? 300)) return fail('validity window too long');

  const alg = params.get('alg');
  if (alg !== undefined && alg !== 'ed25519') return fail('unsupported alg');
  const keyId = params.get('keyid');
  const key = typeof keyId === 'string' ? opts.resolveKey(keyId) : undefined;
  if (typeof keyId !== 'string' || !key) return fail('unknown keyid');
  if (key.alg !== 'ed25519' || key.publicKey.asymmetricKeyType !== 'ed25519') return fail('unsupported alg');

  let valid = false;
  try {
    valid = cryptoVerify(null, Buffer.from(base, 'latin1'), key.publicKey, headers.bytes);
  } catch {
    valid = false;
  }
  return valid ? { ok: true, keyId, label } : fail('bad signature');
}
