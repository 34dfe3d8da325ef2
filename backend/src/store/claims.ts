import type { PrismaTx } from "./db.js";
import { json, list, toPeerClaim } from "./rows.js";

/** Path claims: at most one per intent. */
export const claims = (c: PrismaTx) => ({
  pathsOf: async (intentId: string): Promise<string[] | null> => {
    const row = await c.claim.findUnique({ where: { intentId }, select: { paths: true } });
    return row ? list(row.paths) : null;
  },
  /** Every other intent's claim in the repository, oldest update first. */
  peers: async (repoId: string, exceptIntentId: string) =>
    (
      await c.claim.findMany({
        where: { repoId, intentId: { not: exceptIntentId } },
        include: { intent: { select: { person: true, client: true, model: true, record: true } } },
        orderBy: { updatedAt: "asc" },
      })
    ).map(toPeerClaim),
  /** Intents whose claim outlived their session's lease. */
  expired: async (repoId: string, cutoff: Date) =>
    (
      await c.claim.findMany({
        where: { repoId, intent: { session: { lastSeenAt: { lt: cutoff } } } },
        select: { intentId: true },
      })
    ).map((r) => r.intentId),
  set: async ({
    intentId,
    repoId,
    paths,
    at,
  }: {
    intentId: string;
    repoId: string;
    paths: string[];
    at: Date;
  }) => {
    const data = { paths: json(paths), updatedAt: at };
    await c.claim.upsert({ where: { intentId }, create: { intentId, repoId, ...data }, update: data });
  },
  /** True when there was a claim to release. */
  release: async (intentId: string) => (await c.claim.deleteMany({ where: { intentId } })).count > 0,
});
