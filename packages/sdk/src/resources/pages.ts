import type { RequestOptions } from '../request-sender.ts';

type Page<T> = { data: T[]; pagination: { totalPages: number } };

/**
 * Every item of a paginated list, page after page (`limit` sets the page size, default 100): the
 * `listAll` of each resource, for `for await (const item of client.x.listAll(query))`.
 */
export async function* everyPage<T, Q extends { page?: number; limit?: number }>(
  list: (query: Q, options?: RequestOptions) => Promise<Page<T>>,
  query: Omit<Q, 'page'>,
  options?: RequestOptions,
): AsyncGenerator<T> {
  for (let page = 1; ; page++) {
    const { data, pagination } = await list({ limit: 100, ...query, page } as Q, options);
    yield* data;
    if (page >= pagination.totalPages || data.length === 0) return;
  }
}
