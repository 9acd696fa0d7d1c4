/**
 * `npm run build`: the operator CLI `partner-api` (which serves) and the partner CLI `partner`, with
 * the server, contract and SDK inside, as plain JavaScript in packages/cli/dist/. Production runs them
 * on node alone: no TypeScript loader held in every server's memory (about 80 MB per process,
 * docs/performance.md). Third-party packages stay in node_modules (PGlite's wasm, pg, Fastify...):
 * only this repository's own workspaces are bundled. Takes about a second; `npm start` runs it first.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = path.resolve(import.meta.dirname, '..');
const WORKSPACES = ['contract', 'server', 'sdk', 'cli'];

const external = [
  ...new Set(
    WORKSPACES.flatMap((name) => {
      const manifest = JSON.parse(readFileSync(path.join(ROOT, 'packages', name, 'package.json'), 'utf8'));
      return Object.keys(manifest.dependencies ?? {}).filter((dep) => !dep.startsWith('@partner-api/'));
    }),
  ),
].flatMap((dep) => [dep, `${dep}/*`]);

/** Writes packages/cli/dist/{partner-api,partner}.js; returns their paths. */
export async function buildBundles({ quiet = false } = {}): Promise<string[]> {
  const result = await build({
    entryPoints: ['partner-api', 'partner'].map((name) => path.join(ROOT, 'packages/cli/src', `${name}.ts`)),
    outdir: path.join(ROOT, 'packages/cli/dist'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external,
    sourcemap: 'linked',
    logLevel: 'warning',
    write: false,
  });
  const written: string[] = [];

  for (const file of result.outputFiles) {
    // The sources' `#!/usr/bin/env -S npx tsx` becomes node's own.
    const text = file.path.endsWith('.js')
      ? file.text.replace(/^#!.*\n/, '#!/usr/bin/env node\n')
      : file.text;
    mkdirSync(path.dirname(file.path), { recursive: true });
    writeFileSync(file.path, text, { mode: file.path.endsWith('.js') ? 0o755 : 0o644 });
    if (!file.path.endsWith('.js')) continue;
    written.push(file.path);
    if (!quiet)
      console.log(`built ${path.relative(ROOT, file.path)} (${Math.round(text.length / 1024)} KiB)`);
  }
  return written;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await buildBundles();
