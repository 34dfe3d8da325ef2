import type { IntentRequest, IntentResponse } from "@cohent/protocol";
import type { Caller, Deps } from "../deps.js";
import { closeIntent } from "../shared/claims.js";
import { decide } from "../shared/decide.js";
import { intentText } from "../shared/free-text.js";
import { issuePacket } from "../shared/packets.js";
import { ownHead } from "../shared/views.js";

/**
 * Intent: stores the agent's own structured record (never summarized),
 * runs the resolver and answers with the targeted packet.
 */
export async function intent(deps: Deps, caller: Caller, sent: IntentRequest): Promise<IntentResponse> {
  const { intentId, intent: record, usage } = intentText(sent);
  return deps.store.tx(
    async (t) => {
      await ownHead(t, caller, intentId);
      await t.journal.lock(caller.repo.id);
      const now = deps.clock();
      await t.intents.update(intentId, {
        record,
        state: record.state,
        updatedAt: now,
        ...(usage ? { usage } : {}),
      });
      await t.journal.addEvent({
        repoId: caller.repo.id,
        intentId,
        kind: "intent.updated",
        summary: `${caller.token.person}: ${record.objective}`,
        at: now,
      });
      const { resolution, decision, peers, completed } = await decide(t, deps, caller, intentId, {
        force: true,
        record,
      });
      if (record.state === "completed" || record.state === "abandoned") {
        await closeIntent(t, deps, caller, intentId, record.state, `${record.state} by its intent`);
      }
      const { action, reason, peerIds } = resolution;
      const packet = await issuePacket(t, deps, caller, {
        kind: "intent",
        intentId,
        action,
        reason,
        peers,
        decisions: [decision],
        changes: [],
        ...(completed ? { completed } : {}),
      });
      return { intentId, action, peerIds, reason, packet };
    },
    { batch: caller.repo.id },
  );
}
