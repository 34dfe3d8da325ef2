import type { IntentRequest, IntentResponse } from "@cohent/protocol";
import type { Caller, Deps } from "./deps.js";
import { closeIntent } from "./claims.js";
import { decide } from "./decide.js";
import { addEvent, issuePacket, lockRepository } from "./journal.js";
import { toJson } from "./json.js";
import { ownIntent } from "./views.js";

/**
 * Intent: stores the agent's own structured record as JSON (never
 * summarized), runs the resolver and answers with the targeted packet.
 */
export async function intent(deps: Deps, caller: Caller, req: IntentRequest): Promise<IntentResponse> {
  return deps.db.tx(async (tx) => {
    await ownIntent(tx, caller, req.intentId);
    await lockRepository(tx, caller.repo.id);
    const now = deps.clock();
    const data: { record: string; state: string; updatedAt: Date; usage?: string } = {
      record: toJson(req.intent), state: req.intent.state, updatedAt: now,
    };
    if (req.usage) data.usage = toJson(req.usage);
    await tx.intent.update({ where: { id: req.intentId }, data });
    await addEvent(tx, deps, {
      repoId: caller.repo.id, intentId: req.intentId, kind: "intent.updated",
      summary: `${caller.token.person}: ${req.intent.objective}`,
    });
    const { resolution, decision, peers, completed } = await decide(tx, deps, caller, req.intentId, { force: true });
    if (req.intent.state === "completed" || req.intent.state === "abandoned") {
      await closeIntent(tx, deps, caller, req.intentId, req.intent.state, `${req.intent.state} by its intent`);
    }
    const parts = { kind: "intent" as const, intentId: req.intentId, action: resolution.action, reason: resolution.reason, peers, decisions: [decision], changes: [], ...(completed ? { completed } : {}) };
    const packet = await issuePacket(tx, deps, caller, parts);
    return { intentId: req.intentId, action: resolution.action, peerIds: resolution.peerIds, reason: resolution.reason, packet };
  });
}
