import { generateKeyPairSync } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDataDir } from '@partner-api/testkit/app.ts';
import { startServer } from '@partner-api/testkit/process.ts';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { loadSecrets, SecretsFileError } from '../../src/lib/secrets.ts';

const configIn = (dataDir: string) => loadConfig({ DATA_DIR: dataDir });

/** A DATA_DIR whose secrets.json holds `content`. */
function dirWith(content: string): { dataDir: string; file: string } {
  const dataDir = tempDataDir();
  const file = path.join(dataDir, 'secrets.json');
  writeFileSync(file, content, { mode: 0o600 });
  return { dataDir, file };
}

describe('the generated secrets file, DATA_DIR/secrets.json (lib/secrets.ts)', () => {
  it('is made once (mode 0600) and read back the same on the next start', () => {
    const dataDir = tempDataDir();
    const first = loadSecrets(configIn(dataDir));
    const file = path.join(dataDir, 'secrets.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(loadSecrets(configIn(dataDir))).toEqual(first);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(first);
  });

  it.each([
    ['half written', '{"adminToken": ', 'not JSON'],
    ['empty', '', 'not JSON'],
    ['not an object of secrets', '[]', 'no adminToken, jwtSecret, webhookSigningKey, providerCallbackSecret'],
    [
      'a secret missing',
      JSON.stringify({ adminToken: 'a'.repeat(64), jwtSecret: 'b'.repeat(64), webhookSigningKey: '' }),
      'no webhookSigningKey, providerCallbackSecret',
    ],
  ])('%s: refused, saying what to do', (_case, content, reason) => {
    const { dataDir, file } = dirWith(content);
    expect(() => loadSecrets(configIn(dataDir))).toThrow(SecretsFileError);
    expect(() => loadSecrets(configIn(dataDir))).toThrow(
      `${file} is not a usable secrets file (${reason}): restore it from a backup, or move it away to have new secrets generated (issued tokens and the published webhook key then change)`,
    );
    // Nothing was overwritten: the operator's file is theirs to restore.
    expect(readFileSync(file, 'utf8')).toBe(content);
  });

  it('a webhook key that is not an Ed25519 private key: refused', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ format: 'pem', type: 'pkcs8' })
      .toString();
    for (const webhookSigningKey of ['not a key', rsa]) {
      const { dataDir } = dirWith(
        JSON.stringify({
          adminToken: 'a'.repeat(64),
          jwtSecret: 'b'.repeat(64),
          webhookSigningKey,
          providerCallbackSecret: 'c'.repeat(64),
        }),
      );
      expect(() => loadSecrets(configIn(dataDir))).toThrow(
        '(webhookSigningKey is not an Ed25519 private key in PEM)',
      );
    }
  });

  it('a real `partner-api serve` on such a file exits 2 with that one line, no stack', async () => {
    const { dataDir, file } = dirWith('{"adminToken": "abc"}');
    const server = await startServer({ DATA_DIR: dataDir }, { waitForHealth: false });
    expect(await server.exited, server.output()).toBe(2);
    expect(server.output()).toBe(
      `partner-api: ${file} is not a usable secrets file (no jwtSecret, webhookSigningKey, providerCallbackSecret): restore it from a backup, or move it away to have new secrets generated (issued tokens and the published webhook key then change)\n`,
    );
  }, 60_000);
});
