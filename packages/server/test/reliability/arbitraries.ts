/**
 * fast-check arbitraries shared by the property suites (the public API's and the admin API's):
 * strings that break things (NUL, lone surrogates, unicode, SQL, huge), body fields, raw bodies,
 * content types, path ids and query strings.
 */
import { createId } from '@partner-api/contract';
import fc from 'fast-check';

/** fast-check options: PROPERTY_RUNS (else the suite's default) and PROPERTY_SEED make a run reproducible. */
export function propertyOptions(defaultRuns: number) {
  const numRuns = Number(process.env.PROPERTY_RUNS ?? defaultRuns);
  const seed = process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : undefined;
  return { numRuns, seed, endOnFailure: true };
}

/** encodeURIComponent of any string (a lone surrogate becomes U+FFFD instead of throwing). */
export const encode = (value: string) =>
  encodeURIComponent(
    value.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'),
  );

export const printable = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
});
export const WEIRD = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\u202e\u0644\u0627',
  '𝕏𝕐ℤ',
  'Ａｍｉｎａ',
  "' OR 1=1 --",
  '"; drop table customers; --',
  '%',
  '_',
  '\\',
  '%_\\',
  '../../etc/passwd',
  '<script>alert(1)</script>',
  'null',
  'undefined',
  'true',
  '0',
  '-1',
  '1e309',
  'NaN',
  '__proto__',
  'constructor',
  'c000000000000000000000000',
  'C123456789012345678901234',
  'ussd_',
  'ussd_zz',
];
export const weird = fc.constantFrom(...WEIRD);
export const huge = fc.integer({ min: 101, max: 5000 }).map((n) => 'é'.repeat(n));
export const text = fc.oneof(
  { weight: 3, arbitrary: fc.string() },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme' }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary' }) },
  { weight: 3, arbitrary: weird },
  { weight: 1, arbitrary: huge },
);
export const scalar = fc.oneof(
  { weight: 4, arbitrary: text },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.array(fc.string(), { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }) },
);
/** A body field: its valid values, and "anything" (usually valid, otherwise any scalar). */
export type Field = { valid: fc.Arbitrary<unknown>; any: fc.Arbitrary<unknown> };
export const field = (valid: fc.Arbitrary<unknown>, plausible: fc.Arbitrary<unknown> = valid): Field => ({
  valid,
  any: fc.oneof({ weight: 3, arbitrary: plausible }, { weight: 2, arbitrary: scalar }),
});
/** A non-blank string of 1..max characters without NUL (what the bounded text fields accept). */
export const bounded = (max: number) =>
  fc.string({ minLength: 1, maxLength: max }).filter((v) => v.trim().length > 0 && !v.includes('\u0000'));
export const cuidLike = fc.oneof(
  fc.constant(createId()),
  fc.stringMatching(/^c[a-z0-9]{24}$/),
  fc.stringMatching(/^[cC][a-zA-Z0-9]{22,26}$/),
);

/**
 * A JSON body of the endpoint's fields: a valid one (required fields present, each value valid), or
 * any subset of the fields with any values, plus unknown keys now and then.
 */
export function objectBody(fields: Record<string, Field>, required: string[] = []) {
  const pick = (which: 'valid' | 'any') =>
    Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, f[which]])) as Record<
      string,
      fc.Arbitrary<unknown>
    >;
  const valid = fc.record(pick('valid'), { requiredKeys: required });
  const mixed = fc
    .tuple(
      fc.record(pick('any'), { requiredKeys: [] }),
      fc.dictionary(fc.oneof(fc.string(), weird), scalar, { maxKeys: 2 }),
      fc.boolean(),
    )
    .map(([known, extra, withExtra]) => (withExtra ? { ...extra, ...known } : known));
  return fc.oneof(
    { weight: 3, arbitrary: valid as fc.Arbitrary<Record<string, unknown>> },
    { weight: 3, arbitrary: mixed },
  );
}

/** The raw body: mostly JSON of the endpoint's fields, else any JSON, junk, truncated, empty or too large. */
export function rawBody(
  fields: Record<string, Field>,
  required: string[] = [],
): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 16, arbitrary: objectBody(fields, required).map((b) => JSON.stringify(b)) },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: fc.string() },
    { weight: 1, arbitrary: objectBody(fields, required).map((b) => JSON.stringify(b).slice(0, -1)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('', '{}', '[]', 'null', '{"a":', '\ufeff{}', '{"__proto__":{"x":1}}'),
    },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 102_300, max: 103_000 }).map((n) => `{"x":"${'y'.repeat(n)}"}`),
    },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

export const CONTENT_TYPES = [
  'application/json',
  'application/json',
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'application/vnd.api+json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'json',
  '',
  ';;;',
  'application/json, text/plain',
];
export const contentType = fc.oneof(
  { weight: 20, arbitrary: fc.constant('application/json') },
  { weight: 4, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
  { weight: 1, arbitrary: printable },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

/** A path segment: own, another organization's, nonexistent, near-miss or junk (encoded, or raw). */
export function pathId(known: string[]): fc.Arbitrary<{ segment: string; routable: boolean }> {
  const encoded = fc
    .oneof(
      { weight: 4, arbitrary: fc.constant(known[0]!) },
      { weight: 2, arbitrary: fc.constantFrom(...known) },
      { weight: 2, arbitrary: cuidLike },
      { weight: 3, arbitrary: text },
      { weight: 1, arbitrary: fc.integer({ min: 900, max: 1100 }).map((n) => 'c'.repeat(n)) },
    )
    .map((id) => ({ segment: encode(id), routable: id.length > 0 }));
  const raw = fc
    .constantFrom('', '..', '%', '%zz', '%E0%A4%A', 'a/b', 'a?b=1', 'a#b', '%2F', '%00', '.', '~', '*')
    .map((segment) => ({ segment, routable: false }));
  return fc.oneof({ weight: 8, arbitrary: encoded }, { weight: 1, arbitrary: raw });
}

/** A query string: known and unknown parameters, repeated ones, junk values, or raw junk. */
export function queryString(keys: string[]): fc.Arbitrary<string> {
  const value = fc.oneof(
    text,
    fc.constantFrom('1', '0', '-1', '100', '101', '1.5', 'true', 'false', 'NATIONAL_ID'),
  );
  const entries = fc.array(
    fc.tuple(
      fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...keys) }, { weight: 1, arbitrary: fc.string() }),
      value,
    ),
    { maxLength: 4 },
  );
  return fc.oneof(
    {
      weight: 6,
      arbitrary: entries.map((e) => e.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&')),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom('%', '&&&', 'a[b]=c', 'page[]=1', 'search=%E0%A4%A', '=', '?', 'search'),
    },
  );
}

/** Absent most of the time (undefined), present one time in five. */
export const sometimes = <T>(arbitrary: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arbitrary });
