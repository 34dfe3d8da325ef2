import pg from "pg";
import type { Logger } from "pino";
import type { Provider } from "../store/db.js";

/**
 * Wake-ups for waiters (agents' long-polls, the console's live stream).
 * A wake-up is only a hint that a repository may have changed: waiters then
 * run the cursor query, which alone decides what is new. So a missed hint
 * only delays an answer, by at most `backstopMs`, and never loses one.
 *
 * - In process: every write this instance acknowledges wakes its waiters at once.
 * - Across instances on PostgreSQL: `NOTIFY cohent_wake, '<repoId>'` after the
 *   write commits, and one LISTEN connection per instance. NOTIFY takes an
 *   instance-wide lock at commit, so it is sent outside the write transaction
 *   and never relied on.
 * - Everything else (the admin CLI's separate process, a lost notification,
 *   a lease that lapses with the clock): the backstop interval.
 */
export const WAKE_CHANNEL = "cohent_wake";
/** `*`: something changed in a repository the hint does not name (a sweep, a console command). */
export const ANY_REPO = "*";

export interface Wake {
  /** Wakes this instance's waiters on `repoId` and, on PostgreSQL, every other instance's. */
  notify(repoId: string): void;
  /** Resolves when `repoId` may have changed, at the backstop, when `signal` aborts, or after `ms`. */
  wait(repoId: string, ms: number, signal?: AbortSignal): Promise<void>;
  /** Subscribes to every hint; returns the unsubscribe. */
  onAny(fn: (repoId: string) => void): () => void;
  close(): Promise<void>;
}

export function createWake(opts: {
  provider: Provider;
  url: string;
  log: Logger;
  backstopMs?: number;
}): Wake {
  const backstopMs = opts.backstopMs ?? 1_000;
  const listeners = new Set<(repoId: string) => void>();
  const fire = (repoId: string) => {
    for (const fn of [...listeners]) fn(repoId);
  };
  let closed = false;
  let listener: pg.Client | null = null;
  let notifier: pg.Pool | null = null;

  if (opts.provider === "postgres") {
    notifier = new pg.Pool({ connectionString: opts.url, max: 2, idleTimeoutMillis: 10_000 });
    notifier.on("error", () => {});
    const connect = async () => {
      if (closed) return;
      const client = new pg.Client({ connectionString: opts.url });
      client.on("notification", (n) => fire(n.payload || ANY_REPO));
      client.on("error", (err) => {
        opts.log.warn({ err: String(err) }, "wake listener lost; reconnecting");
        listener = null;
        void client.end().catch(() => {});
        setTimeout(() => void connect(), 1_000).unref();
      });
      try {
        await client.connect();
        await client.query(`LISTEN ${WAKE_CHANNEL}`);
        listener = client;
        fire(ANY_REPO); // whatever happened while it was away
      } catch (err) {
        opts.log.warn({ err: String(err) }, "wake listener cannot connect; retrying");
        void client.end().catch(() => {});
        setTimeout(() => void connect(), 1_000).unref();
      }
    };
    void connect();
  }

  return {
    notify(repoId) {
      fire(repoId);
      // Other instances: a hint, sent after commit; a failure only delays them to their backstop.
      notifier?.query("SELECT pg_notify($1, $2)", [WAKE_CHANNEL, repoId]).catch(() => {});
    },
    wait(repoId, ms, signal) {
      return new Promise<void>((resolve) => {
        if (signal?.aborted) return resolve();
        const done = () => {
          clearTimeout(timer);
          listeners.delete(onWake);
          signal?.removeEventListener("abort", done);
          resolve();
        };
        const onWake = (r: string) => {
          if (r === repoId || r === ANY_REPO) done();
        };
        const timer = setTimeout(done, Math.max(0, Math.min(ms, backstopMs)));
        listeners.add(onWake);
        signal?.addEventListener("abort", done, { once: true });
      });
    },
    onAny(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    async close() {
      closed = true;
      await listener?.end().catch(() => {});
      await notifier?.end().catch(() => {});
    },
  };
}
