import type { PeerClaim } from "../core/arbitrate.js";
import type { PrismaTx } from "./db.js";
import { json, list, toPeerClaim } from "./rows.js";

/** Path claims: at most one per intent. */
export interface Claims {
  pathsOf(intentId: string): Promise<string[] | null>;
  /** Every other intent's claim in the repository, oldest update first. */
  peers(repoId: string, exceptIntentId: string): Promise<PeerClaim[]>;
  /** Intents whose claim outlived their session's lease. */
  expired(repoId: string, cutoff: Date): Promise<string[]>;
  set(c: { intentId: string; repoId: string; paths: string[]; at: Date }): Promise<void>;
  /** True when there was a claim to release. */
  release(intentId: string): Promise<boolean>;
}

export const claims = (c: PrismaTx): Claims => ({
  pathsOf: async (intentId) => {
    const row = await c.claim.findUnique({ where: { intentId }, select: { paths: true } });
    return row ? list(row.paths) : null;
  },
  peers: async (repoId, exceptIntentId) =>
    (
      await c.claim.findMany({
        where: { repoId, intentId: { not: exceptIntentId } },
        include: { intent: { select: { person: true, client: true, model: true, record: true } } },
        orderBy: { updatedAt: "asc" },
      })
    ).map(toPeerClaim),
  expired: async (repoId, cutoff) =>
    (
      await c.claim.findMany({ where: { repoId, intent: { session: { lastSeenAt: { lt: cutoff } } } }, select: { intentId: true } })
    ).map((r) => r.intentId),
  set: async ({ intentId, repoId, paths, at }) => {
    await c.claim.upsert({
      where: { intentId },
      create: { intentId, repoId, paths: json(paths), updatedAt: at },
      update: { paths: json(paths), updatedAt: at },
    });
  },
  release: async (intentId) => (await c.claim.deleteMany({ where: { intentId } })).count > 0,
});
