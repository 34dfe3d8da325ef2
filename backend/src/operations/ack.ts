import { CohentError, type AckRequest, type AckResponse } from "@cohent/protocol";
import type { Caller, Deps } from "./deps.js";

/** Ack: records the characters actually injected, once per packet (a conditional update, so twice is refused). */
export async function ack(deps: Deps, caller: Caller, req: AckRequest): Promise<AckResponse> {
  return deps.db.tx(async (tx) => {
    const updated = await tx.packet.updateMany({
      where: { id: req.packetId, sessionId: caller.session.id, ackedAt: null },
      data: { ackedChars: req.chars, ackedAt: deps.clock() },
    });
    if (updated.count === 1) return { packetId: req.packetId, chars: req.chars };
    const exists = await tx.packet.findFirst({ where: { id: req.packetId, sessionId: caller.session.id }, select: { id: true } });
    throw new CohentError(exists ? "PACKET_ALREADY_ACKED" : "PACKET_NOT_FOUND");
  });
}
