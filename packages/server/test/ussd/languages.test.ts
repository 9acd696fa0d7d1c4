import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CATALOGUES, LANGUAGES } from '../../src/i18n/index.ts';
import { MAX_USSD_TEXT } from '../../src/services/ussd/menus.ts';
import { USSD_STATES } from '../../src/services/ussd/types.ts';
import { allScreens, digestOf } from './screens-walk.ts';

/**
 * Today's English screens, recorded from the code before the catalogues (every path of the walk,
 * as one digest, and every distinct text): the English screens must stay byte-identical.
 */
const recorded = JSON.parse(readFileSync(new URL('./fixtures/en-screens.json', import.meta.url), 'utf8')) as {
  digest: string;
  screens: number;
  texts: string[];
};

describe('USSD screens in every language, walked at their longest values', () => {
  const walks = Object.fromEntries(LANGUAGES.map((l) => [l, allScreens(l)]));

  it('English: every screen of the walk is the one recorded before the catalogues', () => {
    const en = walks.en!;
    const texts = [...new Set([...en.values()].map((s) => s.ussdText))].sort();
    expect(texts.filter((t) => !recorded.texts.includes(t))).toEqual([]);
    expect(texts).toEqual(recorded.texts);
    expect(en.size).toBe(recorded.screens);
    expect(digestOf(en)).toBe(recorded.digest);
  });

  for (const language of LANGUAGES) {
    it(`${language}: every state is reached and every screen fits ${MAX_USSD_TEXT} characters`, () => {
      const screens = [...walks[language]!.values()];
      expect(new Set(screens.map((s) => s.state))).toEqual(new Set(USSD_STATES));
      for (const s of screens)
        expect(s.ussdText.length, `${s.state}: ${s.ussdText}`).toBeLessThanOrEqual(MAX_USSD_TEXT);
    });
  }

  it('sw: the walk goes the same way as in English, with other texts', () => {
    const en = walks.en!;
    const sw = walks.sw!;
    expect([...sw.keys()]).toEqual([...en.keys()]);
    for (const [path, screen] of sw) {
      const english = en.get(path)!;
      expect(screen.state, path).toBe(english.state);
      expect(
        screen.menu.options.map((o) => o.key),
        path,
      ).toEqual(english.menu.options.map((o) => o.key));
    }
  });

  it('sw: no fixed option is shortened to fit, except where the English screen overflows too', () => {
    // `finish` shortens the longest labels, then cuts the text, when a screen would exceed 182
    // characters. List items (stocks, requests) are meant to shorten; a fixed option (Home, Confirm...)
    // shortened, or a text cut (which comes after every label is down to 4 characters), would mean
    // the Kiswahili does not fit. English overflows only at absurd values (16-digit holdings with
    // 120-character names after a notice): those paths are left out.
    const en = walks.en!;
    const full = new Set(
      Object.entries(CATALOGUES.sw)
        .filter(([id]) => id.startsWith('ussd.option.'))
        .map(([, m]) => m),
    );
    const shortened = [...walks.sw!]
      .filter(([path]) => en.get(path)!.ussdText.length < MAX_USSD_TEXT - 1)
      .filter(([, s]) =>
        s.menu.options.some((o) => !o.data && o.nextState !== 'REQUEST_DETAILS' && !full.has(o.label)),
      )
      .map(([path, s]) => `${path}\n${s.ussdText}`);
    expect(shortened).toEqual([]);
  });
});
