import type Database from "better-sqlite3";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `once` until it does not fail with SQLITE_BUSY, in short pauses, up to `busyMs`; SQLITE_BUSY
 * after that. For the statements SQLite's own busy handler does not wait for, or that would wait
 * synchronously, blocking the event loop.
 */
export async function untilNotBusy<T>(once: () => T, busyMs: number): Promise<T> {
  const deadline = Date.now() + busyMs;
  for (let pause = 1; ; pause = Math.min(pause * 2, 25)) {
    try {
      return once();
    } catch (e) {
      if ((e as { code?: string }).code !== "SQLITE_BUSY" || Date.now() >= deadline) throw e;
    }
    await sleep(pause);
  }
}

/**
 * BEGIN IMMEDIATE without blocking the event loop: better-sqlite3's busy handler would wait
 * synchronously, so the connection's busy timeout is off while it tries.
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
  return () => untilNotBusy(tryBegin, busyMs);
}

/**
 * Switches the database to WAL (it stays so). On a file not yet in WAL the switch reads the header,
 * then upgrades to a write: two processes starting on a fresh file at once deadlock there, and
 * SQLite fails one at once with SQLITE_BUSY, whatever its busy timeout (measured: 27 of 60 such
 * pairs). So the switch is retried like a BEGIN.
 */
export function sqliteWal(conn: Database.Database, busyMs: number): Promise<void> {
  return untilNotBusy(() => void conn.pragma("journal_mode = WAL"), busyMs);
}
