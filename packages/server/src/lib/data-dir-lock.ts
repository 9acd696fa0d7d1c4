import { mkdirSync } from 'node:fs';
import path from 'node:path';
import lockfile from 'proper-lockfile';

export class DataDirLockedError extends Error {}

/** A lock not refreshed for this long is stale: the server holding it has died. */
const STALE_MS = 15_000;

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
      stale: STALE_MS,
      update: 5_000,
      onCompromised,
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOCKED') {
      // After a crash (kill -9, OOM) the lock outlives its server until it goes stale: say so,
      // or the operator hunts for a server that does not exist.
      throw new DataDirLockedError(
        `DATA_DIR ${dir} is in use by another partner-api server; stop it or choose another DATA_DIR ` +
          `(if that server has just crashed, its lock expires ${STALE_MS / 1000} s after it died)`,
      );
    }
    throw error;
  }
}
