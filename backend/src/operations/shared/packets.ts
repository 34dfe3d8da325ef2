import { BOUNDS, type Notice, type Packet } from "@cohent/protocol";
import { newId } from "../../ids.js";
import { measure, renderPacket, type PacketParts } from "../../core/render.js";
import type { Tx } from "../../store/index.js";
import type { Caller, Deps } from "../deps.js";

/**
 * Renders, measures and stores a packet. Every packet is durable so that its ack can be recorded once.
 * It carries the intent's untold notices (the oldest BOUNDS.packetNotices), their lines opening its text,
 * and marks them told: each notice is told once. The untold counts held in memory (store/notices) spare
 * the query when the session has none.
 */
export async function issuePacket(
  t: Tx,
  deps: Deps,
  caller: Caller,
  parts: PacketParts,
  cursor?: number,
): Promise<Packet> {
  const id = newId("pkt");
  const untold = deps.store.notices.peekUntold(caller.session.id, caller.repo.id);
  const notices: Notice[] =
    untold && !untold.get(parts.intentId)
      ? []
      : await t.notices.tell(parts.intentId, BOUNDS.packetNotices, {
          id,
          repoId: caller.repo.id,
          at: deps.clock(),
        });
  const text = [...notices.map((n) => n.text), renderPacket(parts)].join("\n");
  const { chars, tokens } = measure(text);
  const peerIds = [...new Set([...parts.peers, ...(parts.completed ?? [])].map((p) => p.intentId))];
  // Without a cursor the insert takes the latest one itself: no round trip for it before the insert.
  const stored = await t.journal.addPacket({
    id,
    repoId: caller.repo.id,
    intentId: parts.intentId,
    sessionId: caller.session.id,
    kind: parts.kind,
    action: parts.action,
    cursor: cursor ?? null,
    chars,
    tokens,
    peerIds,
    at: deps.clock(),
  });

  const packet: Packet = {
    id,
    kind: parts.kind,
    intentId: parts.intentId,
    action: parts.action,
    cursor: cursor === undefined ? "" : String(cursor), // filled in below, once the insert answers
    peerIds,
    chars,
    tokens,
    text,
    peers: parts.peers,
    decisions: parts.decisions,
    changes: parts.changes,
  };
  if (parts.goal !== undefined) packet.goal = parts.goal;
  if (parts.completed) packet.completed = parts.completed;
  if (notices.length) packet.notices = notices;
  // Not waited for here: the transaction's COMMIT goes out with the insert (store/handle `finish`).
  if (cursor === undefined) t.journal.finish(stored.cursor.then((c) => void (packet.cursor = String(c))));
  return packet;
}
