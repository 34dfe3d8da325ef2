import { leaseCutoff } from "../core/lease.js";
import type { Deps } from "../operations/deps.js";

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
 */
export function startSweeper(deps: Deps, intervalMs: number): { stop(): void; sweep(): Promise<number> } {
  let running: Promise<number> | null = null;
  const sweepRepo = async (repoId: string): Promise<number> => {
    // A cheap read first, so an idle repository costs no write lock.
    if ((await deps.store.claims.expired(repoId, leaseCutoff(deps.clock(), deps.lease))).length === 0)
      return 0;
    return deps.store.tx(async (t) => {
      await t.journal.lock(repoId);
      const now = deps.clock();
      let freed = 0;
      for (const intentId of await t.claims.expired(repoId, leaseCutoff(now, deps.lease))) {
        if (!(await t.claims.release(intentId))) continue;
        await t.journal.addEvent({
          repoId,
          intentId,
          kind: "scope.released",
          summary: "lease expired; scope freed",
          at: now,
        });
        freed++;
      }
      return freed;
    });
  };
  const sweep = async (): Promise<number> => {
    let total = 0;
    for (const repo of await deps.store.repos.list()) {
      const freed = await sweepRepo(repo.id);
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
