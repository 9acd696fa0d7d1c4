import { esc } from './pages.ts';

/** Rows on one page of a console list; "Next" skips this many. */
export const PAGE_SIZE = 100;
/** The deepest offset a list reaches (bounded: narrow the filter to see older rows). */
export const MAX_OFFSET = 10_000;

/** `path` with the filter as its query (empty values and a zero offset left out). */
export function pageAddress(path: string, filter: Record<string, string | number | undefined>): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(filter))
    if (value !== undefined && value !== '' && value !== 0) query.set(key, String(value));
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}

/** The `offset` query value, or undefined when it is not a whole number from 0 to MAX_OFFSET. */
export function offsetOf(value: string | undefined): number | undefined {
  const offset = value ? Number(value) : 0;
  return Number.isInteger(offset) && offset >= 0 && offset <= MAX_OFFSET ? offset : undefined;
}

export const OFFSET_REFUSAL = `The offset must be a whole number from 0 to ${MAX_OFFSET}: narrow the filter to see older rows.`;

/**
 * "Previous" and "Next" links for a list read with `limit: PAGE_SIZE + 1` (`fetched` rows): more
 * than a page means there is a next one.
 */
export function pagingLinks(
  path: string,
  filter: Record<string, string | undefined>,
  offset: number,
  fetched: number,
): string {
  const links: string[] = [];
  if (offset > 0)
    links.push(
      `<a href="${esc(pageAddress(path, { ...filter, offset: Math.max(0, offset - PAGE_SIZE) }))}">Previous ${PAGE_SIZE}</a>`,
    );
  if (fetched > PAGE_SIZE && offset + PAGE_SIZE <= MAX_OFFSET)
    links.push(
      `<a href="${esc(pageAddress(path, { ...filter, offset: offset + PAGE_SIZE }))}" rel="next">Next ${PAGE_SIZE}</a>`,
    );
  return links.length > 0 ? `<nav aria-label="Pages" class="inline">${links.join(' ')}</nav>` : '';
}

/** The query's fields when each came once as text; undefined when one repeats (an array). */
export function singleValues(query: unknown): Record<string, string> | undefined {
  const fields = (query ?? {}) as Record<string, unknown>;
  return Object.values(fields).every((v) => typeof v === 'string')
    ? (fields as Record<string, string>)
    : undefined;
}

export const REPEATED_REFUSAL = 'Give each filter once.';
