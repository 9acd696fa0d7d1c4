/**
 * `npm run build` (`tsx scripts/build.ts [server] [sdk] [partner-cli]`, all three by default):
 *
 * - server: the operator CLI `partner-api` (which serves), with the server, contract and SDK inside,
 *   as plain JavaScript in packages/cli/dist/. Production runs it on node alone: no TypeScript loader
 *   held in every server's memory (about 80 MB per process). Third-party packages
 *   stay in node_modules (PGlite's wasm, pg, Fastify...). About a second; `npm start` runs it first.
 * - sdk: packages/sdk/dist, the package partners install: ESM, CommonJS and .d.ts (tsup), with the
 *   contract bundled in and zod / structured-headers left as the package's dependencies.
 * - partner-cli: packages/partner-cli/dist/partner.js, the `partner` bin (sources in packages/cli/src),
 *   with the SDK and contract bundled in and its third-party packages as that package's dependencies.
 *
 * docs/decisions.md ("Packages") says why. Every build resolves our workspaces with the
 * `@partner-api/source` export condition, i.e. from their TypeScript sources, never a stale dist.
 */

import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build } from 'esbuild';

const ROOT = path.resolve(import.meta.dirname, '..');
const WORKSPACES = ['contract', 'fakes', 'server', 'sdk', 'cli'];
/** The export condition that points our workspaces at their sources (tsconfig customConditions). */
export const SOURCE_CONDITION = '@partner-api/source';

type Manifest = { dependencies?: Record<string, string> };
const manifest = (dir: string): Manifest =>
  JSON.parse(readFileSync(path.join(ROOT, dir, 'package.json'), 'utf8'));
const thirdParty = (deps: string[]) =>
  deps.filter((dep) => !dep.startsWith('@partner-api/')).flatMap((dep) => [dep, `${dep}/*`]);

const external = thirdParty([
  ...new Set(WORKSPACES.flatMap((name) => Object.keys(manifest(`packages/${name}`).dependencies ?? {}))),
]);

const NODE_BUNDLE: BuildOptions = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  conditions: [SOURCE_CONDITION],
  sourcemap: 'linked',
  logLevel: 'warning',
  write: false,
};

/** Writes esbuild's output files; a .js gets node's shebang instead of the sources' `npx tsx` one. */
function writeOutput(files: { path: string; text: string }[], quiet: boolean): string[] {
  const written: string[] = [];
  for (const file of files) {
    const isJs = file.path.endsWith('.js');
    const text = isJs ? file.text.replace(/^#!.*\n/, '#!/usr/bin/env node\n') : file.text;
    mkdirSync(path.dirname(file.path), { recursive: true });
    writeFileSync(file.path, text, { mode: isJs ? 0o755 : 0o644 });
    if (!isJs) continue;
    written.push(file.path);
    if (!quiet)
      console.log(`built ${path.relative(ROOT, file.path)} (${Math.round(text.length / 1024)} KiB)`);
  }
  return written;
}

/** Writes packages/cli/dist/partner-api.js (what `npm start` runs); returns its path. */
export async function buildBundles({ quiet = false } = {}): Promise<string[]> {
  const result = await build({
    ...NODE_BUNDLE,
    entryPoints: [path.join(ROOT, 'packages/cli/src/partner-api.ts')],
    outdir: path.join(ROOT, 'packages/cli/dist'),
    external,
  });
  return writeOutput(result.outputFiles ?? [], quiet);
}

/**
 * Writes packages/partner-cli/dist/partner.js. Fails when the bundle imports a package that
 * packages/partner-cli/package.json does not depend on: an installed `partner` would not find it.
 */
export async function buildPartnerCli({ quiet = false } = {}): Promise<string[]> {
  const dir = path.join(ROOT, 'packages/partner-cli');
  const dependencies = Object.keys(manifest('packages/partner-cli').dependencies ?? {});
  const result = await build({
    ...NODE_BUNDLE,
    entryPoints: [path.join(ROOT, 'packages/cli/src/partner.ts')],
    outdir: path.join(dir, 'dist'),
    external: thirdParty(dependencies),
    metafile: true,
  });
  const builtin = new Set([...builtinModules, ...builtinModules.map((name) => `node:${name}`)]);
  const imported = Object.values(result.metafile.outputs).flatMap((output) =>
    output.imports.filter((i) => i.external && !builtin.has(i.path)).map((i) => i.path),
  );
  const undeclared = imported.filter(
    (spec) => !dependencies.some((dep) => spec === dep || spec.startsWith(`${dep}/`)),
  );
  if (undeclared.length > 0) {
    throw new Error(`partner-cli bundle imports packages it does not depend on: ${undeclared.join(', ')}`);
  }
  rmSync(path.join(dir, 'dist'), { recursive: true, force: true });
  return writeOutput(result.outputFiles ?? [], quiet);
}

/** Writes packages/sdk/dist: index.js (ESM), index.cjs, index.d.ts and index.d.cts, with source maps. */
export async function buildSdk({ quiet = false } = {}): Promise<string[]> {
  const { build: tsup } = await import('tsup');
  const dir = path.join(ROOT, 'packages/sdk');
  const dependencies = Object.keys(manifest('packages/sdk').dependencies ?? {});
  const contract = path.join(ROOT, 'packages/contract/src/index.ts');
  await tsup({
    entry: { index: path.join(dir, 'src/index.ts') },
    outDir: path.join(dir, 'dist'),
    format: ['esm', 'cjs'],
    platform: 'node',
    target: 'node20',
    // The contract is our code: inside the bundle and inside the .d.ts (through `paths`, which makes
    // the declaration bundler treat it as local); zod and structured-headers stay imports.
    noExternal: [/^@partner-api\//],
    external: dependencies,
    dts: {
      compilerOptions: { baseUrl: ROOT, paths: { '@partner-api/contract': [contract] } },
      // The public types name node:crypto's KeyObject and Buffer: an SDK for node, whose callers may
      // pass a KeyObject as the private key. TypeScript 7 defaults `types` to [] and `tsc --init`
      // (5.9 too) writes `"types": []`, so @types/node is in a consumer's program only when something
      // asks for it: without this line KeyObject is silently `any` (with skipLibCheck, which
      // `tsc --init` sets) or an error. The directive asks for it, as packages built on node's types
      // do; types of our own in place of node's would hide what a partner may actually pass.
      // packages/sdk/test/pack.test.ts compiles a consumer with 5.9 and the current TypeScript.
      banner: '/// <reference types="node" />',
    },
    tsconfig: path.join(ROOT, 'tsconfig.json'),
    esbuildOptions(options) {
      options.conditions = [SOURCE_CONDITION];
    },
    sourcemap: true,
    clean: true,
    silent: true,
  });
  const outputs = ['index.js', 'index.cjs', 'index.d.ts', 'index.d.cts'].map((name) =>
    path.join(dir, 'dist', name),
  );
  if (!quiet) for (const file of outputs) console.log(`built ${path.relative(ROOT, file)}`);
  return outputs;
}

const TARGETS = { server: buildBundles, sdk: buildSdk, 'partner-cli': buildPartnerCli } as const;

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const names = process.argv.slice(2);
  for (const name of names) {
    if (!(name in TARGETS))
      throw new Error(`unknown build target ${name}: ${Object.keys(TARGETS).join(', ')}`);
  }
  for (const name of names.length > 0 ? names : Object.keys(TARGETS)) {
    await TARGETS[name as keyof typeof TARGETS]();
  }
}
