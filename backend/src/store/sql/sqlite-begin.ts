import type Database from "better-sqlite3";

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
