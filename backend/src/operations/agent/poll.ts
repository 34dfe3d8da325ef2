import { BOUNDS, type Decision, type PeerView, type PollRequest, type PollResponse } from "@cohent/protocol";
import { leaseCutoff } from "../../core/lease.js";
import { isRelevant, relatedPeers } from "../../core/relevance.js";
import { toChange } from "../../core/render.js";
import type { Tx } from "../../store/index.js";
import type { Caller, Deps } from "../deps.js";
import { decide } from "../shared/decide.js";
import { issuePacket } from "../shared/packets.js";
import { ownIntent, toPeerView } from "../shared/views.js";

const SCAN = 500;

/**
 * The cheap answer to most polls. With no event after the cursor, nothing
 * an agent authored has changed; only time has passed, and the one thing
 * time changes is a lease. A lease that lapses can only remove peers, so it
 * can change the answer only if it removes a peer the last decision named.
 */
async function nothingNew(t: Tx, deps: Deps, caller: Caller, intentId: string, cursor: number): Promise<boolean> {
  const me = await t.intents.owner(intentId);
  if (!me || me.repoId !== caller.repo.id || me.sessionId !== caller.session.id) return false; // the full path reports it
  if (await t.journal.hasEventAfter(caller.repo.id, cursor)) return false;
  const named = (await t.journal.lastDecision(intentId))?.peerIds ?? [];
  return named.length === 0 || (await t.intents.countLapsed(named, leaseCutoff(deps.clock(), deps.lease))) === 0;
}

/**
 * Poll: re-resolves the caller against every active intent, then returns
 * only what concerns it after its cursor (core/relevance). No change means
 * no packet: zero characters to inject.
 */
export async function poll(deps: Deps, caller: Caller, req: PollRequest): Promise<PollResponse> {
  const cursor = Number(req.cursor);
  const control = caller.session.control;
  return deps.store.tx(async (t) => {
    if (await nothingNew(t, deps, caller, req.intentId, cursor)) return { cursor: String(cursor), control, packet: null };
    const me = await ownIntent(t, caller, req.intentId, { open: false });
    let related = new Set<string>();
    let decision: Decision | null = null;
    let action = me.lastAction;
    let reason = "Changes since your cursor.";
    let completed: PeerView[] | undefined;
    if (!me.closedAt && me.record) {
      const d = await decide(t, deps, caller, me.id);
      ({ action, reason } = d.resolution);
      if (d.changed) ({ decision, completed } = d);
      related = relatedPeers({ ...me, record: me.record }, d.others, d.resolution.peerIds, { caseInsensitive: caller.repo.caseInsensitive });
    }

    const events = await t.journal.eventsAfter(caller.repo.id, cursor, SCAN);
    const relevant = events.filter((e) => isRelevant(e, me.id, related));
    const shown = relevant.slice(0, BOUNDS.pollEvents);
    const next = shown.length < relevant.length ? shown[shown.length - 1]!.seq : (events[events.length - 1]?.seq ?? cursor);
    if (shown.length === 0 && !decision) return { cursor: String(next), control, packet: null };

    const touched = [...new Set(shown.map((e) => e.intentId).filter((id) => id !== me.id))];
    const peers = (await t.intents.byIds(touched)).map((r) => toPeerView(r, deps));
    const packet = await issuePacket(
      t, deps, caller,
      { kind: "poll", intentId: me.id, action, reason, peers, decisions: decision ? [decision] : [], changes: shown.map(toChange), ...(completed ? { completed } : {}) },
      next,
    );
    return { cursor: String(next), control, packet };
  });
}
