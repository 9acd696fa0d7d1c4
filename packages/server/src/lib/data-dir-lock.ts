import { mkdirSync } from 'node:fs';
import path from 'node:path';
import lockfile from 'proper-lockfile';

export class DataDirLockedError extends Error {}

/**
 * PGlite takes no lock of its own and a second process on the same directory silently loses rows,
 * so the server holds this exclusive lock for as long as it runs. Returns the release function.
 */
export async function lockDataDir(
  dataDir: string,
  onCompromised: (error: Error) => void,
): Promise<() => Promise<void>> {
  const dir = path.resolve(dataDir);
  mkdirSync(dir, { recursive: true });
  try {
    return await lockfile.lock(dir, {
      lockfilePath: path.join(dir, 'server.lock'),
      retries: 0,
      stale: 15_000,
      update: 5_000,
      onCompromised,
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOCKED') {
      throw new DataDirLockedError(
        `DATA_DIR ${dir} is in use by another partner-api server; stop it or choose another DATA_DIR`,
      );
    }
    throw error;
  }
}
