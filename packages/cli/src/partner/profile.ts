import { createPrivateKey } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import {
  type CachedToken,
  DEFAULT_SANDBOX_FILE,
  PartnerClient,
  type PartnerClientOptions,
  readSandboxFile,
  type TokenStore,
} from '@partner-api/sdk';

/** What `partner login` saves: the credential (secret and private key included, hence mode 0600) and the token. */
export type Profile = {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  keyId: string;
  privateKey: string;
  organization?: { id: string; name: string };
  token?: CachedToken;
};

export const PROFILE_FIELDS = ['baseUrl', 'clientId', 'clientSecret', 'privateKey', 'keyId'] as const;

/** --profile, then $PARTNER_PROFILE, then ~/.config/partner-api/profile.json ($XDG_CONFIG_HOME respected). */
export function profilePath(flag?: string, env = process.env): string {
  if (flag) return path.resolve(flag);
  if (env.PARTNER_PROFILE) return path.resolve(env.PARTNER_PROFILE);
  const config = env.XDG_CONFIG_HOME || path.join(homedir(), '.config');
  return path.join(config, 'partner-api', 'profile.json');
}

export function readProfile(file: string): Profile {
  if (!existsSync(file))
    throw new Error(`not logged in: ${file} does not exist; run \`partner login\` first`);
  return JSON.parse(readFileSync(file, 'utf8')) as Profile;
}

/** Written to a temporary file and renamed: a crash never leaves half a profile. */
export function writeProfile(file: string, profile: Profile): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(profile, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
}

/**
 * The token lives in the profile so that consecutive commands reuse it: the token endpoint allows
 * 10 requests per 15 minutes per IP, which a token per command would exhaust.
 */
export function profileTokenStore(file: string): TokenStore {
  return {
    load: () => {
      const token = readProfile(file).token;
      return token && typeof token.token === 'string' ? token : undefined;
    },
    save: (token) => {
      const { token: _old, ...profile } = readProfile(file);
      writeProfile(file, token ? { ...profile, token } : profile);
    },
  };
}

export function clientForProfile(file: string, options: Partial<PartnerClientOptions> = {}): PartnerClient {
  const { baseUrl, clientId, clientSecret, keyId, privateKey } = readProfile(file);
  return new PartnerClient({
    baseUrl,
    clientId,
    clientSecret,
    keyId,
    privateKey,
    tokenStore: profileTokenStore(file),
    ...options,
  });
}

export type LoginFlags = {
  baseUrl?: string;
  clientId?: string;
  clientSecret?: string;
  privateKey?: string;
  keyId?: string;
  sandboxFile?: string;
};

/** A PEM given inline, or the path of a file holding it; either way an Ed25519 private key. */
function readKey(value: string): string {
  const inline = value.trimStart().startsWith('-----BEGIN');
  let pem: string;
  try {
    pem = inline ? value : readFileSync(value, 'utf8');
  } catch (error) {
    throw new Error(
      `--private-key: cannot read ${value} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`,
    );
  }
  let type: string | undefined;
  try {
    type = createPrivateKey(pem).asymmetricKeyType;
  } catch {}
  if (type !== 'ed25519') {
    const what = inline ? 'the key given' : value;
    throw new Error(
      `--private-key: ${what} is not an Ed25519 private key in PEM (PKCS#8, as \`openssl genpkey -algorithm ed25519\` writes)`,
    );
  }
  return pem;
}

/** The service's address: an http:// or https:// URL (`localhost:8080` would fail only at the first call). */
function checkBaseUrl(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {}
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    throw new Error(`--base-url: ${value} is not an http:// or https:// URL`);
  return value;
}

/**
 * Each field from its flag, else its PARTNER_* variable, else the sandbox credentials file (when it
 * exists, or when --sandbox-file names it). Every field still missing is reported at once.
 */
export function resolveLogin(flags: LoginFlags, env = process.env): Omit<Profile, 'organization' | 'token'> {
  const given = {
    baseUrl: flags.baseUrl ?? env.PARTNER_BASE_URL,
    clientId: flags.clientId ?? env.PARTNER_CLIENT_ID,
    clientSecret: flags.clientSecret ?? env.PARTNER_CLIENT_SECRET,
    privateKey: flags.privateKey ?? env.PARTNER_PRIVATE_KEY,
    keyId: flags.keyId ?? env.PARTNER_KEY_ID,
  };
  const sandboxFile = flags.sandboxFile ?? env.PARTNER_SANDBOX_FILE ?? DEFAULT_SANDBOX_FILE;
  const needsSandbox = PROFILE_FIELDS.some((field) => !given[field]);
  const useSandbox = needsSandbox && (flags.sandboxFile !== undefined || existsSync(sandboxFile));
  const sandbox = useSandbox ? readSandboxFile(sandboxFile) : undefined;
  const resolved = {
    baseUrl: given.baseUrl ?? sandbox?.baseUrl,
    clientId: given.clientId ?? sandbox?.clientId,
    clientSecret: given.clientSecret ?? sandbox?.clientSecret,
    privateKey: given.privateKey ? readKey(given.privateKey) : sandbox?.privateKey,
    keyId: given.keyId ?? sandbox?.keyId,
  };
  const missing = PROFILE_FIELDS.filter((field) => !resolved[field]);
  if (missing.length > 0) {
    const flag = (f: string) => `--${f.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    throw new Error(
      `missing ${missing.map(flag).join(', ')}: pass the flags, set PARTNER_* variables, or start a sandbox server (npm start) to create ${sandboxFile}`,
    );
  }
  checkBaseUrl(resolved.baseUrl as string);
  return resolved as Omit<Profile, 'organization' | 'token'>;
}
