import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ErrorLabel } from '@partner-api/contract';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { AppError } from '../lib/errors.ts';
import type { SandboxCredentialsFile } from '../services/sandbox/seed.ts';

export const DEMO_CREDENTIAL_PATH = '/sandbox/api/demo-credential';

/** What the reference page needs to sign as the demo organization. */
export type DemoCredential = Pick<
  SandboxCredentialsFile,
  'clientId' | 'clientSecret' | 'keyId' | 'privateKey'
>;

/**
 * Sandbox only (not registered in production): the seeded demo credential of
 * DATA_DIR/sandbox-credentials.json, so that "Try it out" on /docs signs without a paste. It is
 * public to whoever reaches the sandbox, as the handset already is: it acts only as the demo
 * organization, which holds demo data only.
 */
export async function sandboxDemoCredentialRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const file = path.join(ctx.config.DATA_DIR, 'sandbox-credentials.json');
  app.get(DEMO_CREDENTIAL_PATH, async (_request, reply) => {
    let seeded: SandboxCredentialsFile;
    try {
      seeded = JSON.parse(await readFile(file, 'utf8')) as SandboxCredentialsFile;
    } catch {
      // Another instance seeded a shared PostgreSQL: the secrets are in its data directory, not here.
      throw new AppError(
        404,
        ErrorLabel.notFound,
        'No sandbox demo credential in the data directory of this server',
      );
    }
    const { clientId, clientSecret, keyId, privateKey } = seeded;
    const credential: DemoCredential = { clientId, clientSecret, keyId, privateKey };
    return reply.header('cache-control', 'no-store').send(credential);
  });
}
