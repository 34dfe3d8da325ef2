import { leaseCutoff } from "../core/lease.js";
import type { Deps } from "../operations/deps.js";
import { expireRequests } from "../operations/agent/once.js";
import { freeExpired, grantQueue, type RepoRef } from "../operations/shared/queue.js";
import type { Pruned } from "../store/index.js";
import { PRUNED } from "../store/retention.js";

/** How often the sweeper deletes the request ids past their retention (operations/agent/once). */
const EXPIRE_REQUESTS_MS = 60_000;
/** How often the retention rule runs (the first pass soon after start), and its batches. */
const PRUNE_EVERY_MS = 10 * 60_000;
const PRUNE_BATCH = 500;
/** At most this many batches a table a pass (100,000 rows): a month's backlog goes over a few passes. */
const PRUNE_BATCHES = 200;
/** The retention rule's default: decisions, notices and usage rows older than this many days go. */
export const RETENTION_DAYS = 30;

/**
 * COHENT_RETENTION_DAYS: whole days to keep decisions, notices, packets and guard catches, 0 to keep
 * them forever. Anything else stops the server at start: a typo must not delete what was meant to stay.
 */
export function retentionDays(env = process.env): number {
  const raw = env.COHENT_RETENTION_DAYS;
  if (raw === undefined || raw === "") return RETENTION_DAYS;
  if (!/^\d{1,5}$/.test(raw.trim()))
    throw new Error(
      `COHENT_RETENTION_DAYS takes a whole number of days, 0 to keep everything (got ${raw.slice(0, 20)})`,
    );
  return Number(raw.trim());
}

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
export function startSweeper(
  deps: Deps,
  intervalMs: number,
  keepDays = retentionDays(),
): { stop(): void; sweep(): Promise<number>; prune(): Promise<Record<Pruned, number>> } {
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
  let expiredAt = -Infinity;
  const sweep = async (): Promise<number> => {
    // Request ids past their retention, once a minute by the server's clock: one indexed DELETE of a minute's ids.
    const at = deps.clock().getTime();
    if (at - expiredAt >= EXPIRE_REQUESTS_MS) {
      expiredAt = at;
      await expireRequests(deps);
    }
    let total = 0;
    for (const repo of await deps.store.repos.list()) {
      const freed = await sweepRepo(repo);
      total += freed;
    }
    return total;
  };
  /**
   * The retention rule: rows made more than `keepDays` before the server's clock go, in batches of
   * PRUNE_BATCH, each its own short statement, yielding between them so that agents' writes interleave.
   * Beside the lease sweep, never in its way. Safe with any number of instances: a row deleted twice is
   * deleted once.
   */
  let pruning: Promise<Record<Pruned, number>> | null = null;
  let prunedAt = 0;
  const prune = async (): Promise<Record<Pruned, number>> => {
    const gone = Object.fromEntries(PRUNED.map((t) => [t, 0])) as Record<Pruned, number>;
    if (keepDays <= 0) return gone;
    const before = new Date(deps.clock().getTime() - keepDays * 86_400_000);
    for (const table of PRUNED)
      for (let i = 0; i < PRUNE_BATCHES; i++) {
        const n = await deps.store.retention.prune(table, before, PRUNE_BATCH);
        gone[table] += n;
        if (n < PRUNE_BATCH) break;
        await new Promise((r) => setImmediate(r));
      }
    if (Object.values(gone).some((n) => n > 0))
      deps.log.info({ ...gone, keepDays }, "retention: old rows deleted");
    return gone;
  };
  const startPrune = () => {
    pruning ??= prune()
      .catch((err) => {
        deps.log.warn({ err: String(err) }, "retention pass failed; the next one retries");
        return Object.fromEntries(PRUNED.map((t) => [t, 0])) as Record<Pruned, number>;
      })
      .finally(() => (pruning = null));
    return pruning;
  };
  const tick = () => {
    if (keepDays > 0 && Date.now() - prunedAt >= PRUNE_EVERY_MS) {
      prunedAt = Date.now();
      void startPrune();
    }
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
    /** One retention pass now (after the one running, if any): what it deleted. */
    prune: async () => {
      while (pruning) await pruning;
      return prune();
    },
  };
}

/** Often enough that a scope frees within a twentieth of the lease after it expires, at most every 5 s. */
export function sweepInterval(leaseMs: number, env = process.env): number {
  const fromEnv = Number(env.COHENT_SWEEP_MS);
  return fromEnv > 0 ? fromEnv : Math.min(5_000, Math.max(200, Math.floor(leaseMs / 20)));
}
