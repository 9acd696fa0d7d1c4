import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildTestApp } from '@partner-api/testkit/app.ts';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { openApiDocumentOf } from '../../src/routes/docs.ts';
import { GENERATED_CLIENT, generateClientTypes } from './generate-client.ts';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const SDK_TYPES = fileURLToPath(new URL('./sdk-types.ts', import.meta.url));

/** Type-checks files with the repository's compiler options; `extra` are in-memory files. */
function typeErrors(files: string[], extra: Record<string, string> = {}): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(ROOT, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  )!;
  const host = ts.createCompilerHost(config.options);
  const readFile = host.readFile.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.fileExists = (name) => name in extra || ts.sys.fileExists(name);
  host.readFile = (name) => extra[name] ?? readFile(name);
  host.getSourceFile = (name, language, ...rest) =>
    name in extra
      ? ts.createSourceFile(name, extra[name]!, language)
      : getSourceFile(name, language, ...rest);
  const program = ts.createProgram(
    [...files, ...Object.keys(extra)],
    { ...config.options, noEmit: true },
    host,
  );
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

describe('a client generated from the document (openapi-typescript)', () => {
  it('is the committed generated/api.d.ts (regenerate with UPDATE_OPENAPI_TYPES=1)', async () => {
    const t = await buildTestApp('pglite');
    const generated = await generateClientTypes(openApiDocumentOf(t.app)!);
    await t.close();
    if (process.env.UPDATE_OPENAPI_TYPES === '1') writeFileSync(GENERATED_CLIENT, generated);
    expect(
      existsSync(GENERATED_CLIENT),
      'generated/api.d.ts is missing: run with UPDATE_OPENAPI_TYPES=1',
    ).toBe(true);
    expect(readFileSync(GENERATED_CLIENT, 'utf8')).toBe(generated);
  });

  it("type-checks against the SDK's request and response shapes", () => {
    expect(typeErrors([SDK_TYPES])).toEqual([]);
  });

  it('does catch a request shape the document would refuse', () => {
    const probe = path.join(path.dirname(SDK_TYPES), 'probe.ts');
    const errors = typeErrors([], {
      [probe]: [
        "import type { components } from './generated/api.d.ts';",
        "export const wrong: components['schemas']['UssdProcessRequest'] = { sessionId: 'ussd_1', choice: 1 };",
        "export const unknown: components['schemas']['CustomerCreate'] = { firstName: 'A', lastName: 'B', nickname: 'C' };",
      ].join('\n'),
    });
    expect(errors).toHaveLength(2);
  });
});
