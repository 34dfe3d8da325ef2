import type Database from "better-sqlite3";
import type pg from "pg";
import type { ChangeKind, Changes } from "./changes.js";
import type { Memory } from "./memory.js";
import type { Exec } from "./sql/exec.js";

/** What a write tells the change notification: it touched this repository's change log or its control state. */
export type Touch = (repoId: string, kind: ChangeKind) => void;

/** An open store transaction: its connection, and what the members of its batch share. */
export interface Raw {
  sqlite?: Database.Database;
  pg?: pg.PoolClient;
  /** Repositories whose row lock (store/journal `lock`) this transaction holds: a batch's members share it. */
  held?: Set<string>;
  /** PostgreSQL: change hints to NOTIFY once, just before this transaction commits. */
  hints?: Set<string>;
}

/**
 * What every concern's methods run on: the statements of one connection, and
 * whether that is an open transaction's (`tx`) or the read connection outside
 * any (null; each statement commits on its own, and the caches of store/memory
 * may answer instead).
 */
export interface Handle {
  x: Exec;
  tx: Raw | null;
  touch: Touch;
  changes: Changes;
  /** The store's caches (store/memory). */
  mem: Memory;
  /**
   * Work the transaction's answer still needs from its statements' answers (a packet's cursor): the
   * store awaits it after COMMIT, before the transaction returns, so the transaction need not wait
   * for those answers before COMMIT is sent. Inside a transaction only.
   */
  finish(p: Promise<unknown>): void;
  /** Writes outside a transaction: each in one transaction of its own on the store's write connection. */
  write<T>(fn: (x: Exec) => Promise<T>): Promise<T>;
}
