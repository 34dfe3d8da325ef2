import type { PrismaTx } from "./db.js";
import { json, list, recordOf } from "./rows.js";

/** Who an intent is, with its session and lease: what the queue and the Scopes view name. */
const partySelect = {
  person: true,
  client: true,
  model: true,
  record: true,
  sessionId: true,
  session: { select: { lastSeenAt: true } },
} as const;
type PartyRow = {
  person: string;
  client: string | null;
  model: string | null;
  record: string | null;
  sessionId: string;
  session: { lastSeenAt: Date };
};
const toHolder = (intentId: string, r: PartyRow) => ({
  intentId,
  person: r.person,
  client: r.client,
  model: r.model,
  objective: recordOf(r.record)?.objective ?? null,
  sessionId: r.sessionId,
  lastSeenAt: r.session.lastSeenAt,
});
export type QueueParty = ReturnType<typeof toHolder>;

const inOrder = [{ createdAt: "asc" as const }, { id: "asc" as const }];

/** The claim queue (ClaimWait): at most one waiting claim per intent, in (createdAt, id) order. */
export const queue = (c: PrismaTx) => ({
  /** True when the repository has any waiter: the cheap check before a grant walk. */
  any: async (repoId: string) => !!(await c.claimWait.findFirst({ where: { repoId }, select: { id: true } })),
  /** The repository's queue in order, each waiter with its identity and its session's lease. */
  list: async (repoId: string) =>
    (
      await c.claimWait.findMany({
        where: { repoId },
        orderBy: inOrder,
        include: { intent: { select: partySelect } },
      })
    ).map((w) => ({
      id: w.id,
      intentId: w.intentId,
      paths: list(w.paths),
      createdAt: w.createdAt,
      party: toHolder(w.intentId, w.intent),
    })),
  of: async (intentId: string) => {
    const w = await c.claimWait.findUnique({ where: { intentId } });
    return w && { id: w.id, intentId, paths: list(w.paths), createdAt: w.createdAt };
  },
  /** The time of the queue's last entry: a new entry goes strictly after it. */
  tailAt: async (repoId: string) =>
    (
      await c.claimWait.findFirst({
        where: { repoId },
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        select: { createdAt: true },
      })
    )?.createdAt ?? null,
  /** Writes the intent's single entry (replacing any): a new entry takes the tail. */
  put: async (w: { id: string; repoId: string; intentId: string; paths: string[]; at: Date }) => {
    await c.claimWait.deleteMany({ where: { intentId: w.intentId } });
    await c.claimWait.create({
      data: { id: w.id, repoId: w.repoId, intentId: w.intentId, paths: json(w.paths), createdAt: w.at },
    });
  },
  /** Removes the intent's entry; its paths, or null when it had none. */
  remove: async (intentId: string): Promise<string[] | null> => {
    const w = await c.claimWait.findUnique({ where: { intentId }, select: { paths: true } });
    if (!w) return null;
    await c.claimWait.deleteMany({ where: { intentId } });
    return list(w.paths);
  },
  /** Takes the intent out of the queue, if it was in it (one statement: every successful claim runs it). */
  leave: async (intentId: string) => (await c.claimWait.deleteMany({ where: { intentId } })).count > 0,
  /** Waiters whose session's lease expired. */
  expired: async (repoId: string, cutoff: Date) =>
    (
      await c.claimWait.findMany({
        where: { repoId, intent: { session: { lastSeenAt: { lt: cutoff } } } },
        select: { intentId: true },
      })
    ).map((r) => r.intentId),
  /** Every live claim of the repository with its holder, oldest first: the Scopes view and the queue's notices. */
  holders: async (repoId: string) =>
    (
      await c.claim.findMany({
        where: { repoId },
        orderBy: [{ updatedAt: "asc" }, { intentId: "asc" }],
        include: { intent: { select: partySelect } },
      })
    ).map((k) => ({ ...toHolder(k.intentId, k.intent), paths: list(k.paths), since: k.updatedAt })),
  /** Several intents' identities, by id. */
  parties: async (ids: string[]) =>
    new Map(
      (ids.length
        ? await c.intent.findMany({
            where: { id: { in: [...new Set(ids)] } },
            select: { id: true, ...partySelect },
          })
        : []
      ).map((r) => [r.id, toHolder(r.id, r)]),
    ),
  /** One intent's identity, for a notice's peer or a view. */
  party: async (intentId: string) => {
    const r = await c.intent.findUnique({ where: { id: intentId }, select: partySelect });
    return r && toHolder(intentId, r);
  },
});
