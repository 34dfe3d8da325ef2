import type { ContextRequest, ContextResponse, Decision } from "@cohent/protocol";
import { PUBLISH_INSTRUCTION } from "../render.js";
import type { Caller, Deps } from "./deps.js";
import { decide } from "./decide.js";
import { issuePacket, latestCursor } from "./journal.js";
import { loadActiveIntents, ownIntent, recordOf, toPeerView } from "./views.js";

const CONTEXT_PEERS = 8;

/**
 * Context: the current brief for an agent that asks for it (the adapter's
 * `context` command, the MCP tool): the goal, its intent's latest decision,
 * and the active peers, related ones first. Without an intent id it uses the
 * session's open intent, if any.
 */
export async function context(deps: Deps, caller: Caller, req: ContextRequest): Promise<ContextResponse> {
  return deps.db.tx(async (tx) => {
    const me = req.intentId
      ? await ownIntent(tx, caller, req.intentId, { open: false })
      : await tx.intent.findFirst({ where: { sessionId: caller.session.id, closedAt: null }, orderBy: { createdAt: "desc" } });
    let decision: Decision | null = null;
    let action: ContextResponse["action"] = me ? (me.lastAction as ContextResponse["action"]) : null;
    let reason = me ? `Your intent is ${me.state}.` : "No open work intent in this session.";
    let related: string[] = [];
    if (me && !me.closedAt && recordOf(me)) {
      const d = await decide(tx, deps, caller, me.id);
      decision = d.decision;
      action = d.resolution.action;
      reason = d.resolution.reason;
      related = d.resolution.peerIds;
    }
    const rank = (id: string) => (related.includes(id) ? 0 : 1);
    const peers = (await loadActiveIntents(tx, deps, caller.repo.id))
      .filter((i) => i.id !== me?.id)
      .sort((a, b) => rank(a.id) - rank(b.id) || b.updatedAt.getTime() - a.updatedAt.getTime())
      .slice(0, CONTEXT_PEERS)
      .map((i) => toPeerView(i, deps));
    const cursor = await latestCursor(tx, caller.repo.id);
    const needsIntent = !me || !recordOf(me);
    const packet = await issuePacket(
      tx, deps, caller,
      {
        kind: "context", intentId: me?.id ?? "", action: action ?? "plan", reason, goal: caller.repo.goal || null, peers,
        decisions: decision ? [decision] : [], changes: [], ...(needsIntent ? { instruction: PUBLISH_INSTRUCTION } : {}),
      },
      cursor,
    );
    return { goal: caller.repo.goal || null, intentId: me?.id ?? null, action, decision, peers, cursor: String(cursor), packet };
  });
}
