import type { ContextRequest, ContextResponse, Decision } from "@cohent/protocol";
import { leaseCutoff } from "../../core/lease.js";
import { PUBLISH_INSTRUCTION } from "../../core/render.js";
import type { Caller, Deps } from "../deps.js";
import { decide } from "../shared/decide.js";
import { issuePacket } from "../shared/packets.js";
import { ownIntent, toPeerView } from "../shared/views.js";

const CONTEXT_PEERS = 8;

/**
 * Context: the current brief for an agent that asks for it (the adapter's
 * `context` command, the MCP tool): the goal, its intent's latest decision,
 * and the active peers, related ones first. Without an intent id it uses the
 * session's open intent, if any.
 */
export async function context(deps: Deps, caller: Caller, req: ContextRequest): Promise<ContextResponse> {
  const goal = caller.repo.goal || null;
  return deps.store.tx(async (t) => {
    const me = req.intentId
      ? await ownIntent(t, caller, req.intentId, { open: false })
      : await t.intents.latestOpenOfSession(caller.session.id);
    let decision: Decision | null = null;
    let action: ContextResponse["action"] = me?.lastAction ?? null;
    let reason = me ? `Your intent is ${me.state}.` : "No open work intent in this session.";
    let related: string[] = [];
    if (me && !me.closedAt && me.record) {
      const d = await decide(t, deps, caller, me.id);
      ({ decision } = d);
      ({ action, reason, peerIds: related } = d.resolution);
    }
    const rank = (id: string) => (related.includes(id) ? 0 : 1);
    const peers = (await t.intents.active(caller.repo.id, leaseCutoff(deps.clock(), deps.lease)))
      .filter((i) => i.id !== me?.id)
      .sort((a, b) => rank(a.id) - rank(b.id) || b.updatedAt.getTime() - a.updatedAt.getTime())
      .slice(0, CONTEXT_PEERS)
      .map((i) => toPeerView(i, deps));
    const cursor = await t.journal.latestSeq(caller.repo.id);
    const packet = await issuePacket(
      t,
      deps,
      caller,
      {
        kind: "context",
        intentId: me?.id ?? "",
        action: action ?? "plan",
        reason,
        goal,
        peers,
        decisions: decision ? [decision] : [],
        changes: [],
        ...(!me?.record ? { instruction: PUBLISH_INSTRUCTION } : {}),
      },
      cursor,
    );
    return { goal, intentId: me?.id ?? null, action, decision, peers, cursor: String(cursor), packet };
  });
}
