import type { PeerView } from "@cohent/protocol";
import { resolve, type Resolution } from "../resolver.js";
import type { Tx } from "../store/db.js";
import type { Caller, Deps } from "./deps.js";
import { addEvent, lockRepository, recordDecision } from "./journal.js";
import { loadActiveIntents, loadCompletedIntents, loadIntent, toDecision, toPeerView, toResolverIntent } from "./views.js";

/**
 * Runs the resolver for one intent against every active intent of the
 * repository (and recently completed work), and records the answer when it
 * changed. Intent and poll both call this.
 */
export async function decide(tx: Tx, deps: Deps, caller: Caller, intentId: string, { force = false } = {}) {
  const me = await loadIntent(tx, intentId);
  if (!me) throw new Error(`intent ${intentId} vanished inside its transaction`);
  const active = await loadActiveIntents(tx, deps, caller.repo.id);
  const completed = await loadCompletedIntents(tx, caller.repo.id);
  const others = [...active, ...completed].filter((i) => i.id !== me.id);
  const resolution: Resolution = resolve(toResolverIntent(me), others.map(toResolverIntent));

  const byId = new Map(others.map((i) => [i.id, i]));
  const views = (ids: string[]): PeerView[] => ids.flatMap((id) => (byId.has(id) ? [toPeerView(byId.get(id)!, deps)] : []));
  const peers = resolution.rule === "completed-dependency" ? [] : views(resolution.peerIds);
  const completedViews = resolution.rule === "completed-dependency" ? views(resolution.peerIds) : undefined;

  const last = await tx.decision.findFirst({ where: { intentId }, orderBy: { createdAt: "desc" } });
  const changed = !last || last.action !== resolution.action || last.peerIds !== JSON.stringify(resolution.peerIds);
  let decision = last ? toDecision(last) : null;
  if (force || changed) {
    await lockRepository(tx, caller.repo.id);
    const row = await recordDecision(tx, deps, { repoId: caller.repo.id, intentId, action: resolution.action, peerIds: resolution.peerIds, reason: resolution.reason });
    decision = toDecision(row);
    await tx.intent.update({ where: { id: intentId }, data: { lastAction: resolution.action } });
    await addEvent(tx, deps, {
      repoId: caller.repo.id, intentId, kind: "decision", peerIds: resolution.peerIds,
      summary: `${resolution.action}${resolution.peerIds.length ? ` with ${resolution.peerIds.join(", ")}` : ""}`,
    });
  }
  return { me, resolution, decision: decision!, changed, peers, completed: completedViews, others };
}
