import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/**
 * SQLite's WAL checkpoints off the request path. By default the connection
 * that commits copies the log back into the database file once it passes
 * 1,000 pages, fsyncs included, inside that write (~15 % of a write's time
 * under load). Here a worker thread, on a connection of its own, runs a
 * PASSIVE checkpoint every 200 ms: it blocks neither writers nor readers.
 * The writing connection keeps an automatic checkpoint at BACKSTOP_PAGES:
 * it bounds the log if the worker falls behind or is gone, and, since the
 * worker has copied nearly everything by then, it is the cheap checkpoint
 * that lets the log start over. Durability is unchanged: a commit is in
 * the log before it is acknowledged, and the log is what recovery replays.
 */
const EVERY_MS = 200;
export const BACKSTOP_PAGES = 8_000;

// CommonJS, evaluated in the worker: no file of its own to bundle or resolve.
const SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.file, { timeout: 0 });
const checkpoint = db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
const tick = () => {
  try {
    checkpoint.get();
  } catch {} // busy or closing: the next tick, or the writer's backstop, does it
};
const timer = setInterval(tick, workerData.everyMs);
parentPort.on("message", () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface WalCheckpointer {
  stop(): Promise<void>;
}

/**
 * Starts the worker for the database at `file`; null when a worker cannot start. Either way the
 * writer's backstop still checkpoints; `onError` hears why the worker is not doing it.
 */
export function startWalCheckpointer(
  file: string,
  onError: (err: Error) => void = () => {},
): WalCheckpointer | null {
  let worker: Worker;
  try {
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    worker = new Worker(SOURCE, { eval: true, workerData: { driver, file, everyMs: EVERY_MS } });
  } catch (err) {
    onError(err as Error);
    return null;
  }
  worker.on("error", onError); // it never takes the server down
  worker.unref();
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  return {
    stop: async () => {
      worker.postMessage("stop");
      const timer = setTimeout(() => void worker.terminate(), 2_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
