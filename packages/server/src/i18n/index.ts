import { IntlMessageFormat } from 'intl-messageformat';
import en from './messages/en.json' with { type: 'json' };
import sw from './messages/sw.json' with { type: 'json' };

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

/**
 * Every catalogue, imported as a module: the production bundle (scripts/build.ts, esbuild) carries
 * them inside, so no file has to be found next to it at run time; a malformed file fails the build
 * and the start, not a screen.
 */
export const CATALOGUES: Readonly<Record<Language, Catalogue>> = { en, sw };

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
