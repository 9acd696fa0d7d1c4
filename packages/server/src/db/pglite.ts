import {
  PGlite,
  type PGliteOptions,
  parse,
  protocol,
  type QueryOptions,
  type Results,
  type Transaction,
} from '@electric-sql/pglite';
import { statementName } from './pool.ts';

const { serialize } = protocol;

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/**
 * The embedded store, with the repeated parameterised statements parsed and planned once per
 * session as named prepared statements: what `db/pool.ts` does on PostgreSQL. PGlite's own `query`
 * parses, describes and plans every statement anew in five protocol calls; here a prepared one is
 * Bind, Describe, Execute and Sync in one call (docs/performance.md, "The embedded store"). Built on
 * the protocol API PGlite documents for subclasses (`execProtocolStream`, `_runExclusiveQuery`,
 * `_runExclusiveTransaction`), never by replacing its methods on an instance. Statements that
 * `statementName` leaves unnamed (no parameters, pattern matches, one-off shapes) and queries with a
 * blob go through PGlite's own `query`.
 */
export class NamingPGlite extends PGlite {
  /** The parameter types of each statement prepared in this session, by name. */
  readonly #prepared = new Map<string, number[]>();
  /**
   * A query's own parsers (drizzle passes nine with every query) over the session's. PGlite merges
   * them per query by spreading both maps: 318 entries, ~65 µs, as much as a whole named select
   * (docs/performance.md). Here the query's parsers sit on an object whose prototype is the
   * session's map, so what PGlite adds to its map later (array types) is still seen. Built per
   * query: drizzle makes a new options object for every query, so there is nothing to keep.
   */
  #parsingFor(options: QueryOptions | undefined) {
    if (!options?.parsers) return { parsers: this.parsers, options };
    return {
      parsers: Object.assign(Object.create(this.parsers) as Record<number, unknown>, options.parsers),
      options: { ...options, parsers: undefined },
    };
  }

  static async open(dataDir: string, options: PGliteOptions): Promise<NamingPGlite> {
    const db = new NamingPGlite(dataDir, options);
    await db.waitReady;
    return db;
  }

  override async query<T>(text: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>> {
    const name = this.#nameOf(text, params, options);
    if (!name) return super.query<T>(text, params, options);
    await this._checkReady();
    return this._runExclusiveTransaction(() => this.#run<T>(name, text, params!, options));
  }

  override async transaction<T>(callback: (tx: Transaction) => Promise<T>): Promise<T> {
    return super.transaction((tx) => {
      // PGlite's transaction object, with its queries named as well; the rest (exec, rollback,
      // closed, ...) is its own.
      const named: Transaction = Object.create(tx, {
        query: {
          value: async <R>(text: string, params?: unknown[], options?: QueryOptions): Promise<Results<R>> => {
            const name = this.#nameOf(text, params, options);
            if (!name) return tx.query<R>(text, params, options);
            if (tx.closed) throw new Error('Transaction is closed');
            return this.#run<R>(name, text, params!, options);
          },
        },
      });
      return callback(named);
    });
  }

  #nameOf(text: string, params: unknown[] | undefined, options: QueryOptions | undefined) {
    if (!params?.length || options?.blob) return undefined;
    return statementName(text, params.length);
  }

  /** Prepares `name` on first use, then binds and executes it; one protocol call per statement. */
  #run<T>(name: string, text: string, params: unknown[], options: QueryOptions | undefined) {
    return this._runExclusiveQuery(async () => {
      let types = this.#prepared.get(name);
      if (!types) {
        const described = await this.execProtocolStream(
          concat([
            serialize.parse({ name, text, types: options?.paramTypes }),
            serialize.describe({ type: 'S', name }),
            serialize.sync(),
          ]),
          { syncToFs: false },
        );
        types = parse.parseDescribeStatementResults(described);
        this.#prepared.set(name, types);
      }
      const values = params.map((value, i) => {
        if (value === null || value === undefined) return null;
        const oid = types[i]!;
        const serializer = options?.serializers?.[oid] ?? this.serializers[oid];
        return serializer ? serializer(value) : String(value);
      });
      const messages = await this.execProtocolStream(
        concat([
          serialize.bind({ statement: name, values }),
          serialize.describe({ type: 'P' }),
          serialize.execute({}),
          serialize.sync(),
        ]),
        { syncToFs: false },
      );
      if (!this.isInTransaction()) await this.syncToFs();
      const { parsers, options: rest } = this.#parsingFor(options);
      return parse.parseResults(messages, parsers as typeof this.parsers, rest)[0] as Results<T>;
    });
  }
}
