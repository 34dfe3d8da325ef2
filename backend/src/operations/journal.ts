import { type Action, type Packet } from "@cohent/protocol";
import { newId } from "../ids.js";
import { measure, renderPacket, type PacketParts } from "../render.js";
import type { Tx } from "../store/db.js";
import type { Caller, Deps } from "./deps.js";
import { toJson } from "./json.js";

const locked = new WeakSet<object>();

/**
 * Takes the repository's write lock for the rest of the transaction (once):
 * bumping `claimVersion` holds the repository row's lock (PostgreSQL) or the
 * database write lock (SQLite) until commit. Every transaction that claims
 * paths or appends to the change log takes it first, so a repository's
 * claims are decided one at a time and its events commit in the order of
 * their sequence numbers: a cursor never moves past an event that commits
 * later, which concurrent instances on PostgreSQL would otherwise allow.
 */
export async function lockRepository(tx: Tx, repoId: string): Promise<void> {
  if (locked.has(tx)) return;
  await tx.repository.update({ where: { id: repoId }, data: { claimVersion: { increment: 1 } } });
  locked.add(tx);
}

/** Appends to the change log; the event's sequence number is the cursor. */
export async function addEvent(
  tx: Tx,
  deps: Deps,
  e: { repoId: string; intentId: string; kind: string; summary: string; peerIds?: string[] },
): Promise<number> {
  await lockRepository(tx, e.repoId);
  const row = await tx.event.create({
    data: { repoId: e.repoId, intentId: e.intentId, kind: e.kind, summary: e.summary.slice(0, 500), peerIds: toJson(e.peerIds ?? []), createdAt: deps.clock() },
    select: { seq: true },
  });
  return row.seq;
}

export async function latestCursor(tx: Tx, repoId: string): Promise<number> {
  const last = await tx.event.findFirst({ where: { repoId }, orderBy: { seq: "desc" }, select: { seq: true } });
  return last?.seq ?? 0;
}

export async function recordDecision(
  tx: Tx,
  deps: Deps,
  d: { repoId: string; intentId: string; action: Action; peerIds: string[]; reason: string },
) {
  return tx.decision.create({
    data: { id: newId("dec"), repoId: d.repoId, intentId: d.intentId, action: d.action, peerIds: toJson(d.peerIds), reason: d.reason, createdAt: deps.clock() },
  });
}

/** Renders, measures and stores a packet. Every packet is durable so that its ack can be recorded once. */
export async function issuePacket(tx: Tx, deps: Deps, caller: Caller, parts: PacketParts, cursor?: number): Promise<Packet> {
  const text = renderPacket(parts);
  const { chars, tokens } = measure(text);
  const at = cursor ?? (await latestCursor(tx, caller.repo.id));
  const peerIds = [...new Set([...parts.peers, ...(parts.completed ?? [])].map((p) => p.intentId))];
  const id = newId("pkt");
  await tx.packet.create({
    data: {
      id, repoId: caller.repo.id, intentId: parts.intentId, sessionId: caller.session.id, kind: parts.kind,
      action: parts.action, cursor: at, chars, tokens, peerIds: toJson(peerIds), createdAt: deps.clock(),
    },
  });
  const packet: Packet = {
    id, kind: parts.kind, intentId: parts.intentId, action: parts.action, cursor: String(at), peerIds, chars, tokens, text,
    peers: parts.peers, decisions: parts.decisions, changes: parts.changes,
  };
  if (parts.goal !== undefined) packet.goal = parts.goal;
  if (parts.completed) packet.completed = parts.completed;
  return packet;
}
