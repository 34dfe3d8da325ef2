import type Database from "better-sqlite3";
import type pg from "pg";
import { Gate } from "./gate.js";

/**
 * Prisma's driver adapters, wrapped so that the store's own transactions
 * (store/db `tx`: BEGIN … COMMIT on the driver connection, with prepared
 * statements) and Prisma share one connection without interleaving:
 *
 * - SQLite: one connection, so one turn (a Gate). A plain Prisma statement
 *   waits for the turn; a Prisma transaction takes it and begins with
 *   BEGIN IMMEDIATE (the write lock up front, so another process's lock is
 *   waited out for the busy timeout instead of failing an upgrade at once).
 * - Both: a Prisma transaction started while `joining` is set (the store's
 *   lazy Prisma handle, store/shell) does not begin one of its own: it runs
 *   its queries on the store's open transaction, and its commit and rollback
 *   are the store's to do (`usePhantomQuery`: Prisma sends no COMMIT).
 */

interface Query {
  sql: string;
  args: unknown[];
  argTypes: unknown[];
}
interface Queryable {
  queryRaw(q: Query): Promise<unknown>;
  executeRaw(q: Query): Promise<number>;
}
export interface Adapter extends Queryable {
  startTransaction(isolationLevel?: string): Promise<unknown>;
}

/** The isolation level the store's lazy Prisma handle asks for: "join the store's open transaction". */
export const JOIN_LEVEL = "SERIALIZABLE";

/** A transaction object Prisma runs on, whose queries go to `on` and whose end is someone else's. */
function joined(on: object, end: { commit(): Promise<void>; rollback(): Promise<void> }) {
  return Object.assign(Object.create(on) as object, { options: { usePhantomQuery: true } }, end);
}
const nothing = { commit: async () => {}, rollback: async () => {} };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * BEGIN IMMEDIATE without blocking the event loop: better-sqlite3's busy
 * handler would wait synchronously, so the wait is done here, in short
 * pauses, up to `busyMs`; SQLITE_BUSY after that.
 */
export function sqliteBegin(conn: Database.Database, busyMs: number) {
  const noWait = conn.prepare("PRAGMA busy_timeout = 0");
  const wait = conn.prepare(`PRAGMA busy_timeout = ${Math.floor(busyMs)}`);
  const begin = conn.prepare("BEGIN IMMEDIATE");
  const tryBegin = () => {
    noWait.get();
    try {
      begin.run();
    } finally {
      wait.get();
    }
  };
  return async () => {
    const deadline = Date.now() + busyMs;
    for (let pause = 1; ; pause = Math.min(pause * 2, 25)) {
      try {
        return tryBegin();
      } catch (e) {
        if ((e as { code?: string }).code !== "SQLITE_BUSY" || Date.now() >= deadline) throw e;
      }
      await sleep(pause);
    }
  };
}

export class SqliteTurns {
  readonly gate = new Gate();
  /** Set by the store's transaction while its lazy Prisma handle starts. */
  joining = false;
  #begin: (() => Promise<void>) | null = null;
  #ends: Record<"COMMIT" | "ROLLBACK", Database.Statement> | null = null;
  #conn: Database.Database | null = null;
  constructor(private readonly busyMs: number) {}

  #on(conn: Database.Database) {
    if (this.#conn !== conn) {
      this.#conn = conn;
      this.#begin = sqliteBegin(conn, this.busyMs);
      this.#ends = { COMMIT: conn.prepare("COMMIT"), ROLLBACK: conn.prepare("ROLLBACK") };
    }
  }

  /** BEGIN IMMEDIATE on `conn`; the caller holds the gate. */
  begin(conn: Database.Database): Promise<void> {
    this.#on(conn);
    return this.#begin!();
  }

  end(conn: Database.Database, how: "COMMIT" | "ROLLBACK") {
    if (how === "ROLLBACK" && !conn.inTransaction) return;
    this.#on(conn);
    this.#ends![how].run();
  }

  wrap(inner: Adapter, conn: Database.Database): Adapter {
    const { gate } = this;
    const turn =
      <A, R>(fn: (a: A) => Promise<R>) =>
      (a: A): Promise<R> =>
        gate.held ? gate.run(() => fn(a)) : fn(a);
    return Object.assign(Object.create(inner) as Adapter, {
      queryRaw: turn((q: Query) => inner.queryRaw(q)),
      executeRaw: turn((q: Query) => inner.executeRaw(q)),
      startTransaction: async (level?: string) => {
        if (level === JOIN_LEVEL && this.joining) {
          this.joining = false;
          return joined(inner, nothing);
        }
        await gate.acquire();
        try {
          await this.begin(conn);
        } catch (e) {
          gate.release();
          throw e;
        }
        const close = (how: "COMMIT" | "ROLLBACK") => async () => {
          try {
            this.end(conn, how);
          } finally {
            gate.release();
          }
        };
        return joined(inner, { commit: close("COMMIT"), rollback: close("ROLLBACK") });
      },
    });
  }
}

/** PostgreSQL: the pool is shared; only the lazy Prisma handle's transaction needs routing, to the store's client. */
export class PgJoins {
  /** Set by the store's transaction while its lazy Prisma handle starts. */
  joining: pg.PoolClient | null = null;
  /** Serializes the lazy handles' starts, so each joins its own transaction. */
  readonly starting = new Gate();

  wrap(inner: Adapter): Adapter {
    return Object.assign(Object.create(inner) as Adapter, {
      startTransaction: async (level?: string) => {
        const client = this.joining;
        if (level === JOIN_LEVEL && client) {
          this.joining = null;
          return joined(Object.create(inner, { client: { value: client } }) as object, nothing);
        }
        return inner.startTransaction(level);
      },
    });
  }
}
