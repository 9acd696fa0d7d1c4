import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';
import { isEd25519PrivateKeyPem } from './keys.ts';

export interface Secrets {
  adminToken: string;
  jwtSecret: string;
  webhookSigningKey: string;
  providerCallbackSecret: string;
}

type Stored = Partial<Secrets>;

/**
 * Secrets from the environment; in sandbox any that are unset are generated once and kept in
 * DATA_DIR/secrets.json (mode 0600, git-ignored) so restarts and sibling instances agree.
 * Production never gets here without all of them (config validation).
 */
export function loadSecrets(config: Config): Secrets {
  const fromEnv: Stored = {
    adminToken: config.ADMIN_TOKEN,
    jwtSecret: config.JWT_SECRET,
    webhookSigningKey: config.WEBHOOK_SIGNING_KEY,
    providerCallbackSecret: config.PROVIDER_CALLBACK_SECRET,
  };
  if (Object.values(fromEnv).every(Boolean)) return fromEnv as Secrets;
  const file = path.resolve(config.DATA_DIR, 'secrets.json');
  const stored = readOrCreate(file);
  return {
    adminToken: fromEnv.adminToken ?? stored.adminToken,
    jwtSecret: fromEnv.jwtSecret ?? stored.jwtSecret,
    webhookSigningKey: fromEnv.webhookSigningKey ?? stored.webhookSigningKey,
    providerCallbackSecret: fromEnv.providerCallbackSecret ?? stored.providerCallbackSecret,
  };
}

function generate(): Secrets {
  const { privateKey } = generateKeyPairSync('ed25519');
  return {
    adminToken: randomBytes(32).toString('hex'),
    jwtSecret: randomBytes(48).toString('base64url'),
    webhookSigningKey: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    providerCallbackSecret: randomBytes(32).toString('hex'),
  };
}

/** DATA_DIR/secrets.json exists but cannot be used: the start stops and says what to do. */
export class SecretsFileError extends Error {
  constructor(file: string, reason: string) {
    super(
      `${file} is not a usable secrets file (${reason}): restore it from a backup, or move it away to have new secrets generated (issued tokens and the published webhook key then change)`,
    );
  }
}

const SECRET_NAMES = ['adminToken', 'jwtSecret', 'webhookSigningKey', 'providerCallbackSecret'] as const;

/** The stored secrets, each checked: a half-written or hand-edited file fails here, not deep inside a signer. */
function parseStored(file: string, text: string): Secrets {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new SecretsFileError(file, 'not JSON');
  }
  const stored = (parsed ?? {}) as Record<string, unknown>;
  const missing = SECRET_NAMES.filter((name) => typeof stored[name] !== 'string' || stored[name] === '');
  if (missing.length > 0) throw new SecretsFileError(file, `no ${missing.join(', ')}`);
  if (!isEd25519PrivateKeyPem(stored.webhookSigningKey as string))
    throw new SecretsFileError(file, 'webhookSigningKey is not an Ed25519 private key in PEM');
  return stored as unknown as Secrets;
}

function readOrCreate(file: string): Secrets {
  try {
    return parseStored(file, readFileSync(file, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(path.dirname(file), { recursive: true });
  const fresh = generate();
  try {
    // 'wx': when two instances start together, the first write wins and the second reads it.
    writeFileSync(file, `${JSON.stringify(fresh, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    return fresh;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return parseStored(file, readFileSync(file, 'utf8'));
  }
}
