import { CohentError, type AckRequest, type AckResponse } from "@cohent/protocol";
import type { Caller, Deps } from "../deps.js";

/** Ack: records the characters actually injected, once per packet (a conditional update, so twice is refused). */
export async function ack(deps: Deps, caller: Caller, req: AckRequest): Promise<AckResponse> {
  const outcome = await deps.store.tx(
    (t) =>
      t.journal.ackPacket({
        id: req.packetId,
        sessionId: caller.session.id,
        chars: req.chars,
        at: deps.clock(),
      }),
    { batch: caller.repo.id },
  );
  if (outcome === "acked") return { packetId: req.packetId, chars: req.chars };
  throw new CohentError(outcome === "already" ? "PACKET_ALREADY_ACKED" : "PACKET_NOT_FOUND");
}
