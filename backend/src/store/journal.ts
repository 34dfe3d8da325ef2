import type { Action, Decision } from "@cohent/protocol";
import type { PrismaTx } from "./db.js";
import { json, list, toDecision, type EventRow } from "./rows.js";

/** The journal: the repository lock, the change log, decisions, packets and guard catches. */
export interface Journal {
  /**
   * Takes the repository's write lock for the rest of the transaction (once):
   * bumping `claimVersion` holds the repository row's lock (PostgreSQL) or the
   * database write lock (SQLite) until commit. Every transaction that claims
   * paths or appends to the change log takes it first, so a repository's
   * claims are decided one at a time and its events commit in the order of
   * their sequence numbers: a cursor never moves past an event that commits
   * later, which concurrent instances on PostgreSQL would otherwise allow.
   */
  lock(repoId: string): Promise<void>;
  /** Appends to the change log (taking the lock); the event's sequence number is the cursor. */
  addEvent(e: { repoId: string; intentId: string; kind: string; summary: string; peerIds?: string[]; at: Date }): Promise<number>;
  latestSeq(repoId: string): Promise<number>;
  hasEventAfter(repoId: string, seq: number): Promise<boolean>;
  eventsAfter(repoId: string, seq: number, take: number): Promise<EventRow[]>;
  lastDecision(intentId: string): Promise<Decision | null>;
  addDecision(d: { id: string; repoId: string; intentId: string; action: Action; peerIds: string[]; reason: string; at: Date }): Promise<Decision>;
  addPacket(p: { id: string; repoId: string; intentId: string; sessionId: string; kind: string; action: string; cursor: number; chars: number; tokens: number; peerIds: string[]; at: Date }): Promise<void>;
  /** Records the characters injected, once: "missing" when the session has no such packet. */
  ackPacket(a: { id: string; sessionId: string; chars: number; at: Date }): Promise<"acked" | "already" | "missing">;
  addGuardCatch(g: { id: string; repoId: string; intentId: string; kind: string; paths: string[]; peerIds: string[]; at: Date }): Promise<void>;
}

export const journal = (c: PrismaTx): Journal => {
  let locked = false;
  const self: Journal = {
    lock: async (repoId) => {
      if (locked) return;
      await c.repository.update({ where: { id: repoId }, data: { claimVersion: { increment: 1 } } });
      locked = true;
    },
    addEvent: async ({ at, peerIds, summary, ...e }) => {
      await self.lock(e.repoId);
      const row = await c.event.create({ data: { ...e, summary: summary.slice(0, 500), peerIds: json(peerIds ?? []), createdAt: at }, select: { seq: true } });
      return row.seq;
    },
    latestSeq: async (repoId) =>
      (await c.event.findFirst({ where: { repoId }, orderBy: { seq: "desc" }, select: { seq: true } }))?.seq ?? 0,
    hasEventAfter: async (repoId, seq) => !!(await c.event.findFirst({ where: { repoId, seq: { gt: seq } }, select: { seq: true } })),
    eventsAfter: async (repoId, seq, take) =>
      (await c.event.findMany({ where: { repoId, seq: { gt: seq } }, orderBy: { seq: "asc" }, take })).map((e) => ({ ...e, peerIds: list(e.peerIds) })),
    lastDecision: async (intentId) => {
      const row = await c.decision.findFirst({ where: { intentId }, orderBy: { createdAt: "desc" } });
      return row ? toDecision(row) : null;
    },
    addDecision: async ({ at, peerIds, ...d }) => toDecision(await c.decision.create({ data: { ...d, peerIds: json(peerIds), createdAt: at } })),
    addPacket: async ({ at, peerIds, ...p }) => {
      await c.packet.create({ data: { ...p, peerIds: json(peerIds), createdAt: at } });
    },
    ackPacket: async ({ id, sessionId, chars, at }) => {
      const updated = await c.packet.updateMany({ where: { id, sessionId, ackedAt: null }, data: { ackedChars: chars, ackedAt: at } });
      if (updated.count === 1) return "acked";
      return (await c.packet.findFirst({ where: { id, sessionId }, select: { id: true } })) ? "already" : "missing";
    },
    addGuardCatch: async ({ at, paths, peerIds, ...g }) => {
      await c.guardCatch.create({ data: { ...g, paths: json(paths), peerIds: json(peerIds), createdAt: at } });
    },
  };
  return self;
};
