import { leaseCutoff } from "../core/lease.js";
import type { Deps } from "../operations/deps.js";
import { expireRequests } from "../operations/agent/once.js";
import { freeExpired, grantQueue, type RepoRef } from "../operations/shared/queue.js";

/** How often the sweeper deletes the request ids past their retention (operations/agent/once). */
const EXPIRE_REQUESTS_MS = 60_000;

/**
 * The lease sweeper. A session that stops calling shows as silent and then
 * expired by the server's clock alone (core/lease: derived from its last
 * call, nothing to write); when its lease has expired, the sweeper frees its
 * scopes on time, even if no one else ever claims there, and the release
 * event wakes the peers waiting on it.
 *
 * Safe with any number of instances: each release runs under the
 * repository's write lock and re-reads the expired claims there, so a claim
 * is released, and its event written, exactly once; the second instance
 * finds nothing left. A claim's own path (claimPaths) frees expired scopes
 * the same way, so the sweeper only bounds how late that happens.
 *
 * The same transaction tells each holder it lost its claim, drops the
 * waiters whose own lease expired, and grants the claim queue.
 */
export function startSweeper(deps: Deps, intervalMs: number): { stop(): void; sweep(): Promise<number> } {
  let running: Promise<number> | null = null;
  const sweepRepo = async (repo: RepoRef): Promise<number> => {
    // Cheap reads first, so an idle repository costs no write lock.
    const cutoff = leaseCutoff(deps.clock(), deps.lease);
    if (
      (await deps.store.claims.expired(repo.id, cutoff)).length === 0 &&
      (await deps.store.queue.expired(repo.id, cutoff)).length === 0
    )
      return 0;
    return deps.store.tx(async (t) => {
      await t.journal.lock(repo.id);
      const now = deps.clock();
      const freed = await freeExpired(t, deps, repo, now);
      await grantQueue(t, deps, repo, now);
      return freed;
    });
  };
  let expiredAt = 0;
  const sweep = async (): Promise<number> => {
    // Request ids past their retention, once a minute: one indexed DELETE of a minute's ids.
    if (Date.now() - expiredAt >= EXPIRE_REQUESTS_MS) {
      expiredAt = Date.now();
      await expireRequests(deps);
    }
    let total = 0;
    for (const repo of await deps.store.repos.list()) {
      const freed = await sweepRepo(repo);
      total += freed;
    }
    return total;
  };
  const tick = () => {
    if (running) return;
    running = sweep()
      .catch((err) => {
        deps.log.warn({ err: String(err) }, "lease sweep failed; next tick retries");
        return 0;
      })
      .finally(() => (running = null));
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return {
    stop: () => clearInterval(timer),
    sweep: async () => {
      while (running) await running;
      return sweep();
    },
  };
}

/** Often enough that a scope frees within a twentieth of the lease after it expires, at most every 5 s. */
export function sweepInterval(leaseMs: number, env = process.env): number {
  const fromEnv = Number(env.COHENT_SWEEP_MS);
  return fromEnv > 0 ? fromEnv : Math.min(5_000, Math.max(200, Math.floor(leaseMs / 20)));
}
