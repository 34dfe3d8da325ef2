import type { Packet } from "@cohent/protocol";
import { newId } from "../../ids.js";
import { measure, renderPacket, type PacketParts } from "../../core/render.js";
import type { Tx } from "../../store/index.js";
import type { Caller, Deps } from "../deps.js";

/** Renders, measures and stores a packet. Every packet is durable so that its ack can be recorded once. */
export async function issuePacket(
  t: Tx,
  deps: Deps,
  caller: Caller,
  parts: PacketParts,
  cursor?: number,
): Promise<Packet> {
  const text = renderPacket(parts);
  const { chars, tokens } = measure(text);
  const at = cursor ?? (await t.journal.latestSeq(caller.repo.id));
  const peerIds = [...new Set([...parts.peers, ...(parts.completed ?? [])].map((p) => p.intentId))];
  const id = newId("pkt");
  await t.journal.addPacket({
    id,
    repoId: caller.repo.id,
    intentId: parts.intentId,
    sessionId: caller.session.id,
    kind: parts.kind,
    action: parts.action,
    cursor: at,
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
    cursor: String(at),
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
  return packet;
}
