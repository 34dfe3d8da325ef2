import type { Action } from "@cohent/protocol";
import type { PrismaTx } from "./db.js";
import type { Touch } from "./index.js";
import { json, list, toDecision } from "./rows.js";

/** The journal: the repository lock, the change log, decisions, packets and guard catches. */
export const journal = (c: PrismaTx, touch: Touch = () => {}) => {
  let locked = false;
  let appended: { repoId: string; seq: number } | null = null;
  /**
   * Takes the repository's write lock for the rest of the transaction (once):
   * bumping `claimVersion` holds the repository row's lock (PostgreSQL) or the
   * database write lock (SQLite) until commit. Every transaction that claims
   * paths or appends to the change log takes it first, so a repository's
   * claims are decided one at a time and its events commit in the order of
   * their sequence numbers: a cursor never moves past an event that commits
   * later, which concurrent instances on PostgreSQL would otherwise allow.
   */
  const lock = async (repoId: string) => {
    if (locked) return;
    await c.repository.update({ where: { id: repoId }, data: { claimVersion: { increment: 1 } } });
    locked = true;
    touch(repoId, "events");
  };
  return {
    lock,
    /**
     * Whether this transaction holds the repository's lock already, so that what it reads is in
     * the order decisions are made: here once `lock` was taken (the prepared journal, store/hot,
     * knows better: on SQLite the transaction holds it from its BEGIN IMMEDIATE).
     */
    holds: (_repoId: string) => locked,
    /** Appends to the change log (under the lock); the event's sequence number is the cursor. */
    addEvent: async ({
      at,
      peerIds,
      summary,
      ...e
    }: {
      repoId: string;
      intentId: string;
      kind: string;
      summary: string;
      peerIds?: string[];
      at: Date;
    }) => {
      await lock(e.repoId);
      const row = await c.event.create({
        data: { ...e, summary: summary.slice(0, 500), peerIds: json(peerIds ?? []), createdAt: at },
        select: { seq: true },
      });
      appended = { repoId: e.repoId, seq: row.seq };
    },
    // Under the lock, the event this transaction appended last is the repository's latest: no re-read.
    latestSeq: async (repoId: string) =>
      appended?.repoId === repoId
        ? appended.seq
        : ((await c.event.findFirst({ where: { repoId }, orderBy: { seq: "desc" }, select: { seq: true } }))
            ?.seq ?? 0),
    /** The change log after `after`, without summaries, at most `take`: what the poll's quick path inspects. */
    tailAfter: async (repoId: string, after: number, take: number) =>
      (
        await c.event.findMany({
          where: { repoId, seq: { gt: after } },
          orderBy: { seq: "asc" },
          take,
          select: { seq: true, intentId: true, kind: true, peerIds: true, summary: true },
        })
      ).map((e) => ({ ...e, peerIds: list(e.peerIds) })),
    eventsAfter: async (repoId: string, seq: number, take: number) =>
      (await c.event.findMany({ where: { repoId, seq: { gt: seq } }, orderBy: { seq: "asc" }, take })).map(
        (e) => ({ ...e, peerIds: list(e.peerIds) }),
      ),
    lastDecision: async (intentId: string) => {
      const row = await c.decision.findFirst({ where: { intentId }, orderBy: { createdAt: "desc" } });
      return row && toDecision(row);
    },
    addDecision: async ({
      at,
      peerIds,
      ...d
    }: {
      id: string;
      repoId: string;
      intentId: string;
      action: Action;
      peerIds: string[];
      reason: string;
      at: Date;
    }) => toDecision(await c.decision.create({ data: { ...d, peerIds: json(peerIds), createdAt: at } })),
    addPacket: async ({
      at,
      peerIds,
      ...p
    }: {
      id: string;
      repoId: string;
      intentId: string;
      sessionId: string;
      kind: string;
      action: string;
      cursor: number;
      chars: number;
      tokens: number;
      peerIds: string[];
      at: Date;
    }) => {
      await c.packet.create({ data: { ...p, peerIds: json(peerIds), createdAt: at } });
    },
    /** Records the characters injected, once; "missing" when the session has no such packet. */
    ackPacket: async ({
      id,
      sessionId,
      chars,
      at,
    }: {
      id: string;
      sessionId: string;
      chars: number;
      at: Date;
    }) => {
      const updated = await c.packet.updateMany({
        where: { id, sessionId, ackedAt: null },
        data: { ackedChars: chars, ackedAt: at },
      });
      if (updated.count === 1) return "acked";
      return (await c.packet.findFirst({ where: { id, sessionId }, select: { id: true } }))
        ? "already"
        : "missing";
    },
    addGuardCatch: async ({
      at,
      paths,
      peerIds,
      ...g
    }: {
      id: string;
      repoId: string;
      intentId: string;
      agentId: string | null;
      kind: string;
      paths: string[];
      peerIds: string[];
      at: Date;
    }) => {
      await c.guardCatch.create({
        data: { ...g, paths: json(paths), peerIds: json(peerIds), createdAt: at },
      });
    },
  };
};
