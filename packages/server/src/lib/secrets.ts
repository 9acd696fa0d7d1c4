import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';

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

function readOrCreate(file: string): Secrets {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Secrets;
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
    return JSON.parse(readFileSync(file, 'utf8')) as Secrets;
  }
}
