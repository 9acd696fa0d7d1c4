import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pixelmatch from 'pixelmatch';
import { PNG } from 'pngjs';

const BASELINES = fileURLToPath(new URL('./baseline/', import.meta.url));

/** Share of pixels allowed to differ from the baseline (anti-aliasing, font hinting). */
export const MAX_DIFF_RATIO = 0.02;

export type Comparison = { ratio: number; written: boolean; report?: string };

/**
 * Compares a screenshot with baseline/<name>.png. A missing baseline (or UPDATE_SCREENSHOTS=1) writes
 * it: commit it. On a mismatch the actual image and a diff are kept in a temporary folder, named in
 * the report.
 */
export function compareWithBaseline(name: string, png: Buffer): Comparison {
  const file = path.join(BASELINES, `${name}.png`);
  if (!existsSync(file) || process.env.UPDATE_SCREENSHOTS === '1') {
    mkdirSync(BASELINES, { recursive: true });
    writeFileSync(file, png);
    return { ratio: 0, written: true };
  }
  const expected = PNG.sync.read(readFileSync(file));
  const actual = PNG.sync.read(png);
  const keep = (diff?: PNG) => {
    const dir = mkdtempSync(path.join(tmpdir(), `screenshot-${name}-`));
    writeFileSync(path.join(dir, 'actual.png'), png);
    if (diff) writeFileSync(path.join(dir, 'diff.png'), PNG.sync.write(diff));
    return dir;
  };
  if (expected.width !== actual.width || expected.height !== actual.height) {
    const dir = keep();
    return {
      ratio: 1,
      written: false,
      report: `${name}: ${actual.width}x${actual.height} against a ${expected.width}x${expected.height} baseline (actual in ${dir})`,
    };
  }
  const diff = new PNG({ width: expected.width, height: expected.height });
  const differing = pixelmatch(expected.data, actual.data, diff.data, expected.width, expected.height, {
    threshold: 0.1,
  });
  const ratio = differing / (expected.width * expected.height);
  if (ratio < MAX_DIFF_RATIO) return { ratio, written: false };
  const dir = keep(diff);
  return {
    ratio,
    written: false,
    report: `${name}: ${(ratio * 100).toFixed(2)}% of pixels differ (actual and diff in ${dir})`,
  };
}
