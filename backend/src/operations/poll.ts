import { BOUNDS, scopeOverlap, type Decision, type PeerView, type PollRequest, type PollResponse } from "@cohent/protocol";
import { leaseCutoff } from "../lease.js";
import type { Tx } from "../store/db.js";
import type { Caller, Deps } from "./deps.js";
import { decide } from "./decide.js";
import { issuePacket } from "./journal.js";
import { parseJson } from "./json.js";
import { intentInclude, ownIntent, recordOf, toChange, toPeerView } from "./views.js";

const SCAN = 500;

/**
 * The cheap answer to most polls. With no event after the cursor, nothing
 * an agent authored has changed; only time has passed, and the one thing
 * time changes is a lease. A lease that lapses can only remove peers, so it
 * can change the answer only if it removes a peer the last decision named.
 */
async function nothingNew(tx: Tx, deps: Deps, caller: Caller, intentId: string, cursor: number): Promise<boolean> {
  const me = await tx.intent.findUnique({ where: { id: intentId }, select: { repoId: true, sessionId: true } });
  if (!me || me.repoId !== caller.repo.id || me.sessionId !== caller.session.id) return false; // the full path reports it
  const newer = await tx.event.findFirst({ where: { repoId: caller.repo.id, seq: { gt: cursor } }, select: { seq: true } });
  if (newer) return false;
  const last = await tx.decision.findFirst({ where: { intentId }, orderBy: { createdAt: "desc" }, select: { peerIds: true } });
  const named = parseJson<string[]>(last?.peerIds, []);
  if (named.length === 0) return true;
  const lapsed = await tx.intent.count({
    where: { id: { in: named }, state: { not: "completed" }, session: { lastSeenAt: { lt: leaseCutoff(deps.clock(), deps.lease) } } },
  });
  return lapsed === 0;
}

/**
 * Poll: re-resolves the caller against every active intent, then returns
 * only what concerns it after its cursor: its own new decision, changes of
 * directly related peers (named in its decision, overlapping its scope,
 * linked by an output), and peers' decisions that name it. No change means
 * no packet: zero characters to inject.
 */
export async function poll(deps: Deps, caller: Caller, req: PollRequest): Promise<PollResponse> {
  const cursor = Number(req.cursor);
  return deps.db.tx(async (tx) => {
    if (await nothingNew(tx, deps, caller, req.intentId, cursor)) {
      return { cursor: String(cursor), control: caller.session.control, packet: null };
    }
    const me = await ownIntent(tx, caller, req.intentId, { open: false });
    const related = new Set<string>();
    let decision: Decision | null = null;
    let action = me.lastAction as Decision["action"];
    let reason = "Changes since your cursor.";
    let completed: PeerView[] | undefined;
    const mine = recordOf(me);
    if (!me.closedAt && mine) {
      const d = await decide(tx, deps, caller, me.id);
      action = d.resolution.action;
      reason = d.resolution.reason;
      if (d.changed) {
        decision = d.decision;
        completed = d.completed;
      }
      d.resolution.peerIds.forEach((id) => related.add(id));
      const myScope = parseJson<string[]>(me.claim?.paths, []);
      const names = new Set([...mine.outputs, ...mine.dependsOn, ...mine.deferred].map((n) => n.toLowerCase()));
      for (const peer of d.others) {
        const theirs = recordOf(peer);
        if (theirs && [...theirs.outputs, ...theirs.dependsOn, ...theirs.deferred].some((n) => names.has(n.toLowerCase()))) related.add(peer.id);
        const scope = parseJson<string[]>(peer.claim?.paths, []);
        if (myScope.length && scope.length && scopeOverlap(myScope, scope, { caseInsensitive: caller.repo.caseInsensitive }).length) related.add(peer.id);
      }
    }

    const events = await tx.event.findMany({ where: { repoId: caller.repo.id, seq: { gt: cursor } }, orderBy: { seq: "asc" }, take: SCAN });
    const relevant = events.filter((e) =>
      e.intentId === me.id ? e.kind === "decision" || e.kind === "control" : related.has(e.intentId) || parseJson<string[]>(e.peerIds, []).includes(me.id),
    );
    const shown = relevant.slice(0, BOUNDS.pollEvents);
    const next = shown.length < relevant.length ? shown[shown.length - 1]!.seq : (events[events.length - 1]?.seq ?? cursor);
    const control = caller.session.control;
    if (shown.length === 0 && !decision) return { cursor: String(next), control, packet: null };

    const touched = new Set(shown.map((e) => e.intentId).filter((id) => id !== me.id));
    const peerRows = touched.size
      ? await tx.intent.findMany({
          where: { id: { in: [...touched] } },
          include: intentInclude,
        })
      : [];
    const packet = await issuePacket(
      tx, deps, caller,
      {
        kind: "poll", intentId: me.id, action, reason, peers: peerRows.map((r) => toPeerView(r, deps)),
        decisions: decision ? [decision] : [], changes: shown.map(toChange), ...(completed ? { completed } : {}),
      },
      next,
    );
    return { cursor: String(next), control, packet };
  });
}
