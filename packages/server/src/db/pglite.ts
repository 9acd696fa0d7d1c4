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
import { turnEnding } from './turn.ts';

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
 *
 * Outside a transaction, the named statements asked for during one event-loop turn run together
 * when the turn ends (its check phase, `setImmediate`), in one protocol call: each statement is its
 * own Bind, Describe, Execute and Sync, so each is still its own autocommit transaction, and an
 * error ends at its own Sync and fails that statement alone, as it would alone. They run in the
 * order they were asked for. One call into the engine for the turn's statements, instead of one
 * each with its two mutexes and promise chain, and the engine's work kept together instead of
 * interleaved with the requests' JavaScript (docs/performance.md, "The embedded store"). Statements
 * asked by turn-end work (db/turn.ts) run in the same check phase, not the next.
 */
export class NamingPGlite extends PGlite {
  /** The parameter types of each statement prepared in this session, by name. */
  readonly #prepared = new Map<string, number[]>();
  /** The named statements asked for outside a transaction during this loop turn, in order. */
  #turn: Asked[] | undefined;
  /**
   * A query's own parsers (drizzle passes nine with every query) over the session's. PGlite merges
   * them per query by spreading both maps: 318 entries, ~65 µs, as much as a whole named select
   * (docs/performance.md, "The embedded store"). Here the query's parsers sit on an object whose
   * prototype is the session's map, so what PGlite adds to its map later (array types) is still
   * seen. Built per query: drizzle makes a new options object for every query, so there is nothing
   * to keep.
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
    return new Promise<Results<T>>((resolve, reject) => {
      if (!this.#turn) {
        this.#turn = [];
        // Asked by turn-end work (a coalesced read): at once, after the microtasks already queued.
        if (turnEnding()) queueMicrotask(() => this.#runTurn());
        else setImmediate(() => this.#runTurn());
      }
      this.#turn.push({ name, text, params: params!, options, resolve: resolve as Asked['resolve'], reject });
    });
  }

  /**
   * The turn's statements: each prepared if it is new (a statement that cannot be prepared fails
   * alone), then all bound and executed in one protocol call, and each caller answered with its own
   * statement's result or error once the call is over.
   */
  #runTurn(): void {
    const asked = this.#turn!;
    this.#turn = undefined;
    const settle: (() => void)[] = [];
    const run = async () => {
      const bound: { asked: Asked; bind: Uint8Array }[] = [];
      for (const one of asked) {
        try {
          bound.push({ asked: one, bind: this.#bindMessages(one.name, await this.#prepare(one), one) });
        } catch (error) {
          settle.push(() => one.reject(error));
        }
      }
      if (bound.length === 0) return;
      const messages = await this.execProtocolStream(concat(bound.map((b) => b.bind)), {
        syncToFs: false,
        throwOnError: false,
      });
      let from = 0;
      for (const { asked: one } of bound) {
        let end = from;
        while (end < messages.length && messages[end]!.name !== 'readyForQuery') end++;
        const own = messages.slice(from, end + 1);
        from = end + 1;
        const failure = own.find((m) => m.name === 'error');
        if (failure) {
          settle.push(() => one.reject(failure));
          continue;
        }
        try {
          const result = this.#results(own, one.options);
          settle.push(() => one.resolve(result));
        } catch (error) {
          settle.push(() => one.reject(error));
        }
      }
      if (!this.isInTransaction()) await this.syncToFs();
    };
    this._runExclusiveTransaction(() => this._runExclusiveQuery(run)).then(
      () => {
        for (const answer of settle) answer();
      },
      (error: unknown) => {
        // The call itself failed (the engine, not a statement): every statement not yet answered fails.
        for (const one of asked) one.reject(error);
      },
    );
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

  /** The parameter types of a statement, preparing it on first use (one protocol call). */
  async #prepare({ name, text, options }: Pick<Asked, 'name' | 'text' | 'options'>): Promise<number[]> {
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
    return types;
  }

  /** Bind, Describe, Execute and Sync of a prepared statement, its parameters serialised by their types. */
  #bindMessages(name: string, types: number[], { params, options }: Pick<Asked, 'params' | 'options'>) {
    const values = params.map((value, i) => {
      if (value === null || value === undefined) return null;
      const oid = types[i]!;
      const serializer = options?.serializers?.[oid] ?? this.serializers[oid];
      return serializer ? serializer(value) : String(value);
    });
    return concat([
      serialize.bind({ statement: name, values }),
      serialize.describe({ type: 'P' }),
      serialize.execute({}),
      serialize.sync(),
    ]);
  }

  #results<T>(messages: Parameters<typeof parse.parseResults>[0], options: QueryOptions | undefined) {
    const { parsers, options: rest } = this.#parsingFor(options);
    return parse.parseResults(messages, parsers as typeof this.parsers, rest)[0] as Results<T>;
  }

  /** A named statement inside a transaction: prepared if new, then bound and executed at once. */
  #run<T>(name: string, text: string, params: unknown[], options: QueryOptions | undefined) {
    return this._runExclusiveQuery(async () => {
      const types = await this.#prepare({ name, text, options });
      const messages = await this.execProtocolStream(this.#bindMessages(name, types, { params, options }), {
        syncToFs: false,
      });
      return this.#results<T>(messages, options);
    });
  }
}

type Asked = {
  name: string;
  text: string;
  params: unknown[];
  options: QueryOptions | undefined;
  resolve: (result: Results<unknown>) => void;
  reject: (error: unknown) => void;
};
