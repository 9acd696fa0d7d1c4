import { readdirSync, readFileSync } from 'node:fs';
import { ACCOUNT_LANGUAGES } from '@partner-api/contract';
import { IntlMessageFormat } from 'intl-messageformat';
import { describe, expect, it } from 'vitest';
import { CATALOGUES, LANGUAGES, message } from '../../src/i18n/index.ts';

/** The argument names of a message, as its ICU syntax tree holds them (selects and plurals too). */
function argumentsOf(source: string, language: string): string[] {
  const names = new Set<string>();
  const visit = (nodes: unknown[]) => {
    for (const node of nodes as {
      type: number;
      value?: unknown;
      options?: Record<string, { value: unknown[] }>;
    }[]) {
      if (node.type !== 0 && node.type !== 7 && typeof node.value === 'string') names.add(node.value);
      for (const option of Object.values(node.options ?? {})) visit(option.value);
    }
  };
  visit(new IntlMessageFormat(source, language).getAst());
  return [...names].sort();
}

/** The `ussd.*` ids the USSD code names: `t('x')`, `ussdMessage(language, 'x')`, `notice('x')`. */
function idsInUssdCode(): Set<string> {
  const dir = new URL('../../src/services/ussd/', import.meta.url);
  const ids = new Set<string>();
  for (const file of readdirSync(dir)) {
    const source = readFileSync(new URL(file, dir), 'utf8');
    for (const [, id] of source.matchAll(/\bt\('([\w.]+)'/g)) ids.add(`ussd.${id}`);
    for (const [, id] of source.matchAll(/ussdMessage\(\s*[\w.' ]+,\s*'([\w.]+)'/g)) ids.add(`ussd.${id}`);
    for (const [, id] of source.matchAll(/\bnotice\('([\w.]+)'/g)) ids.add(`ussd.notice.${id}`);
  }
  return ids;
}

describe('message catalogues', () => {
  const en = CATALOGUES.en;

  it('every language has the same ids as English', () => {
    for (const language of LANGUAGES)
      expect(Object.keys(CATALOGUES[language]).sort()).toEqual(Object.keys(en).sort());
  });

  it('every message parses, and takes the same values in every language', () => {
    for (const [id, source] of Object.entries(en)) {
      const names = argumentsOf(source, 'en');
      for (const language of LANGUAGES)
        expect(argumentsOf(CATALOGUES[language][id]!, language), `${language} ${id}`).toEqual(names);
    }
  });

  it('every ussd id the code names is in the catalogues, and every ussd id of the catalogues is used', () => {
    const used = idsInUssdCode();
    const ussd = Object.keys(en).filter((id) => id.startsWith('ussd.'));
    expect([...used].filter((id) => !(id in en))).toEqual([]);
    expect(ussd.filter((id) => !used.has(id))).toEqual([]);
  });

  it('plurals follow the language: Kiswahili ombi / maombi', () => {
    expect(message('sw', 'ussd.portfolio.openCount', { count: 1 })).toBe('Ombi 1 lililo wazi');
    expect(message('sw', 'ussd.portfolio.openCount', { count: 2 })).toBe('Maombi 2 yaliyo wazi');
    expect(message('en', 'ussd.portfolio.openCount', { count: 1 })).toBe('Open requests: 1');
  });

  it('the API offers exactly the languages that have a catalogue', () => {
    expect([...ACCOUNT_LANGUAGES]).toEqual([...LANGUAGES]);
  });

  it('a missing id is a programming error', () => {
    expect(() => message('sw', 'ussd.no.such.id')).toThrow('i18n: no message ussd.no.such.id in sw');
  });
});
