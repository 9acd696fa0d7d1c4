import { readFileSync } from 'node:fs';
import path from 'node:path';
import { IntlMessageFormat } from 'intl-messageformat';
import { SERVER_FILES } from '../lib/package-paths.ts';

/*
 * The investor's languages (docs/languages.md). Every text a customer reads (USSD screens, SMS) is
 * an ICU message in the catalogue of its language, `messages/<language>.json`: a flat object of ids
 * to messages that a translator edits without touching code. Messages are compiled once, on first
 * use, by intl-messageformat (plurals, selects, numbers) with the language's own locale data from
 * Node's ICU.
 */

export const LANGUAGES = ['en', 'sw'] as const;
export type Language = (typeof LANGUAGES)[number];
export const DEFAULT_LANGUAGE: Language = 'en';

export function isLanguage(value: unknown): value is Language {
  return typeof value === 'string' && (LANGUAGES as readonly string[]).includes(value);
}

type Catalogue = Readonly<Record<string, string>>;

function load(language: Language): Catalogue {
  // Through the package's directory: bundled into packages/cli/dist, import.meta.url is elsewhere.
  const file = path.join(SERVER_FILES.i18nMessages, `${language}.json`);
  return JSON.parse(readFileSync(file, 'utf8')) as Catalogue;
}

/** Every catalogue, read at start-up: a missing or malformed file fails the process, not a screen. */
export const CATALOGUES: Readonly<Record<Language, Catalogue>> = {
  en: load('en'),
  sw: load('sw'),
};

const compiled = new Map<string, IntlMessageFormat>();

export type MessageValues = Record<string, string | number | boolean | Date | null | undefined>;

/**
 * The message `id` of `language`, with `values` put in. An id missing from a catalogue is a
 * programming error (the catalogue test checks both languages have the same ids), so it throws.
 */
export function message(language: Language, id: string, values?: MessageValues): string {
  const key = `${language}\u0000${id}`;
  let format = compiled.get(key);
  if (!format) {
    const source = CATALOGUES[language][id];
    if (source === undefined) throw new Error(`i18n: no message ${id} in ${language}`);
    format = new IntlMessageFormat(source, language);
    compiled.set(key, format);
  }
  return String(format.format(values));
}
