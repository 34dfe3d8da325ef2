import { BOUNDS, type Decision, type PeerView, type PollRequest, type PollResponse } from "@cohent/protocol";
import { leaseCutoff } from "../../core/lease.js";
import { isRelevant, relatedPeers } from "../../core/relevance.js";
import { indexNames, lookupOf } from "../../core/resolver-index.js";
import { toChange } from "../../core/render.js";
import { Gate } from "../../store/gate.js";
import type { Store, Tx } from "../../store/index.js";
import type { Caller, Deps } from "../deps.js";
import { afterPasses } from "../../live/per-pass.js";
import { recentOf } from "../../live/recent-events.js";
import { decide, readPeerDecision } from "../shared/decide.js";
import { issuePacket } from "../shared/packets.js";
import { ownIntent, toPeerView } from "../shared/views.js";
import { baseStore } from "../../store/identity.js";

const SCAN = 500;
/**
 * The quick path looks at no more than this many events; more goes the full way. An agent polling
 * every 5 s among 200 checkpointing peers finds ~350 events there: at 64, all those polls went the
 * full way (every active intent read and decoded, ~7 ms each), 3 in 5 of the full polls of
 * bench:load's agents run. Looking at an event costs a few comparisons.
 */
const TAIL = 1_024;

/**
 * Changes that leave every record and every intent's place (active,
 * completed) as it was, so they cannot change a decision: progress, other
 * decisions, a prompt not yet structured, claims (the resolver does not read
 * scope; a claim that overlaps another is refused). Of those, a poll reports
 * its own decisions and the changes of related peers.
 */
const KEEPS_DECISIONS = new Set([
  "checkpoint",
  "decision",
  "intent.published",
  "scope.claimed",
  "scope.released",
  // the claim queue's entries: claims and notices, never a record or an intent's place
  "scope.queued",
  "scope.granted",
  "queue.left",
  "release.requested",
  "notice",
]);

/**
 * What the last full poll of an intent learned: the peers related to it
 * (core/relevance), true of the room as of the change-log position `at`.
 * Per store, in memory; lost on restart (the next poll takes the full path).
 */
interface Learned {
  related: ReadonlySet<string>;
  stoodDown: ReadonlySet<string>;
  /** The folded names the caller's record looks up (core/resolver-index), and the peers they reached. */
  lookup: ReadonlySet<string>;
  candidates: ReadonlySet<string>;
  /** The peers its decision named (a lapse of one of them can change the answer); none when it was not resolved. */
  named: readonly string[];
  at: number;
}
const known = new WeakMap<Store, Map<string, Learned>>();

/**
 * A peer's folded names as of at least change-log position `seq`, shared by
 * every waiter that meets the same event (one read per event, not one per
 * waiter); null when the peer is gone.
 */
const peerNames = new WeakMap<Store, Map<string, Promise<ReadonlySet<string> | null>>>();
function namesAfter(store: Store, intentId: string, seq: number): Promise<ReadonlySet<string> | null> {
  let m = peerNames.get(baseStore(store));
  if (!m) peerNames.set(baseStore(store), (m = new Map()));
  if (m.size >= 5_000) m.clear();
  const key = `${intentId}@${seq}`;
  let names = m.get(key);
  if (!names) {
    names = store.intents
      .get(intentId)
      .then((r) => (r?.record ? new Set(indexNames(r.record).map((n) => n.name)) : null));
    m.set(key, names);
  }
  return names;
}

/**
 * Can a peer's new intent move the caller's decision? Only through a name
 * the caller looks up (the resolver loads no other peer: core/resolver-index,
 * and its property test). A peer that was no candidate at the last full poll,
 * is not related, and whose record now names nothing the caller looks up,
 * cannot: its event needs no resolve. Anything unknown takes the full path.
 */
async function reaches(store: Store, learned: Learned, peerId: string, seq: number): Promise<boolean> {
  if (learned.candidates.has(peerId) || learned.related.has(peerId)) return true;
  const names = await namesAfter(store, peerId, seq);
  if (!names) return true;
  for (const n of names) if (learned.lookup.has(n)) return true;
  return false;
}
/**
 * The named peers' oldest last call, read again at most every NAMED_MS per decision (the `named` list of
 * what its last full poll learned: a new decision of the intent goes the full path, and brings a new list).
 * The store's own cache keeps it only until the next event, so every write sent each waiter whose decision
 * named a peer to the database (a pooled read each on PostgreSQL). A peer's renewal seen that much later
 * only sends a poll the full way; a lapse is checked against the current time at every poll.
 */
const NAMED_MS = 5_000;
const namedSeen = new WeakMap<readonly string[], { at: number; value: Promise<NamedPeers> }>();
type NamedPeers = Awaited<ReturnType<Store["intents"]["namedPeers"]>>;
function namedOf(store: Store, named: readonly string[] | null, intentId: string, repoId: string) {
  if (!named) return store.intents.namedPeers(intentId, repoId);
  const held = namedSeen.get(named);
  if (held && Date.now() - held.at < NAMED_MS) return held.value;
  const value = store.intents.namedPeers(intentId, repoId);
  namedSeen.set(named, { at: Date.now(), value });
  value.catch(() => namedSeen.delete(named));
  return value;
}

/** A decision event's summary starts with its action (shared/decide). */
const STANDS_DOWN = /^(duplicate|handoff)\b/;
const knownOf = (store: Store) => {
  let m = known.get(baseStore(store));
  if (!m) known.set(baseStore(store), (m = new Map()));
  return m;
};

/**
 * The cheap answer to most polls, outside any transaction, from the store's
 * memory while nothing changed (store/hot): the cursor to answer when
 * nothing concerns the caller, else null (the full path decides).
 *
 * Nothing concerns the caller when every event since what its last full
 * poll knew keeps decisions as they were (KEEPS_DECISIONS) and, after its
 * cursor, is neither its own decision nor a related peer's change nor one
 * naming it: its own checkpoints and claims never force the full path.
 * Time changes one more thing, a lease: a lapse can only remove peers, so it
 * changes the answer only if it removes a peer the last decision named.
 */
async function quiet(deps: Deps, caller: Caller, intentId: string, cursor: number): Promise<number | null> {
  const { store } = deps;
  const repoId = caller.repo.id;
  const me = await store.intents.owner(intentId);
  if (!me || me.repoId !== repoId || me.sessionId !== caller.session.id) return null; // the full path reports it
  // Untold notices make a packet (from memory while none was written or told: store/notices).
  if ((await store.notices.untold(caller.session.id, repoId)).get(intentId)) return null;
  let next = cursor;
  const learned = knownOf(store).get(intentId);
  const head = await store.changes.cursor(repoId);
  if (head > cursor) {
    if (!learned) return null;
    // From memory, shared by every waiter (live/recent-events); the store's read when too far back.
    const from = Math.min(cursor, learned.at);
    const tail =
      (await recentOf(store).after(repoId, from, TAIL, head)) ??
      (await store.journal.tailAfter(repoId, from, TAIL));
    if (tail.length >= TAIL) return null;
    for (const e of tail) {
      // Its own decision made elsewhere (intent, context) since the last full poll: what it named may have moved.
      if (e.kind === "decision" && e.intentId === intentId && e.seq > learned.at) return null;
      if (!KEEPS_DECISIONS.has(e.kind)) {
        // A peer's intent declared, changed or closed, that no name of ours reaches: the common case of a busy room.
        const declared = e.kind.startsWith("intent.") && e.intentId !== intentId;
        if (!declared || (await reaches(store, learned, e.intentId, e.seq))) return null;
        next = Math.max(next, e.seq);
        continue;
      }
      // A peer standing down, or taking its outputs back, changes who produces them (core/resolver).
      if (
        e.kind === "decision" &&
        e.intentId !== intentId &&
        (STANDS_DOWN.test(e.summary) || learned.stoodDown.has(e.intentId))
      )
        return null;
      if (e.seq > cursor && isRelevant(e, intentId, learned.related)) return null;
      next = Math.max(next, e.seq);
    }
    // Nothing up to here moved what the full poll learned: it holds as of here too, so the next
    // quick path reads only what comes after (and a busy room never pushes it past TAIL).
    const last = tail[tail.length - 1]?.seq ?? learned.at;
    const m = knownOf(store);
    if (last > learned.at && m.get(intentId) === learned) m.set(intentId, { ...learned, at: last });
  }
  // A lapse of a peer its decision named can change the answer; when it named none (the usual case), no read.
  if (learned?.named?.length !== 0) {
    const { named, oldestSeen } = await namedOf(store, learned?.named ?? null, intentId, repoId);
    if (named.length && oldestSeen && oldestSeen < leaseCutoff(deps.clock(), deps.lease)) return null;
  }
  return next;
}

/**
 * Poll: re-resolves the caller against every active intent, then returns
 * only what concerns it after its cursor (core/relevance). No change means
 * no packet: zero characters to inject.
 *
 * The full path is a read first, outside any transaction: it holds no
 * connection's turn on SQLite (one connection, every write waits for it)
 * and no pooled client on PostgreSQL, while it resolves against every active
 * intent (O(active) per poll: 200 waiters' first polls, each ~12 ms inside a
 * transaction, queued every write behind 2.5 s of them). Only an answer that
 * writes (a decision that changed, a packet) takes the transaction, and works
 * it out again there.
 */
export async function poll(deps: Deps, caller: Caller, req: PollRequest): Promise<PollResponse> {
  const unchanged = await quiet(deps, caller, req.intentId, Number(req.cursor));
  if (unchanged !== null) return { cursor: String(unchanged), control: caller.session.control, packet: null };
  const turn = fullTurns(deps.store);
  await turn.acquire();
  try {
    // Behind what the event loop has pending (the requests that arrived meanwhile), not ahead of it.
    await nextTurn();
    // Read before the rest: what it then learns is true at least as of here.
    const at = await deps.store.changes.cursor(caller.repo.id);
    const read = await fullPoll(deps.store, deps, caller, req, at, false);
    return read ?? (await deps.store.tx(async (t) => (await fullPoll(t, deps, caller, req, at, true))!));
  } finally {
    turn.release();
  }
}

/**
 * The full path's turns, one at a time per store. A full poll resolves against every active intent
 * (~12 ms with 200 of them); on SQLite its statements are synchronous, so it never yields to the
 * event loop, and 200 waiters' first polls (or one wake-up that sends them all the full way) ran as
 * one block of seconds in which no other request, a kill-switch read included, was even read. In
 * turns, each after a pass of the event loop, a request waits at most for one of them.
 */
const turnsOf = new WeakMap<Store, Gate>();
const fullTurns = (store: Store) => {
  let g = turnsOf.get(baseStore(store));
  if (!g) turnsOf.set(baseStore(store), (g = new Gate()));
  return g;
};

/**
 * The rest of a full poll after PASSES passes of the event loop (live/per-pass: one new connection
 * is taken in per pass). With one pass between the parts, 200 long-polls' first full polls let one
 * connection in per part (~3 ms): the accept queue stood 170 deep and the kill-switch read waited
 * 0.4-0.6 s at the window's start. Only outside a transaction.
 */
const PASSES = 32;
const nextTurn = () => afterPasses(PASSES);

/**
 * The full path on `t`. Without `write` (the store, outside a transaction) it answers only when nothing is
 * to be written, from the events up to `at` (read before it: every one of them is in what it read; a later
 * one stays after the answer's cursor), else null.
 */
async function fullPoll(
  t: Tx,
  deps: Deps,
  caller: Caller,
  req: PollRequest,
  at: number,
  write: boolean,
): Promise<PollResponse | null> {
  const cursor = Number(req.cursor);
  const control = caller.session.control;
  const me = await ownIntent(t, caller, req.intentId, { open: false });
  let related = new Set<string>();
  let stoodDown = new Set<string>();
  let lookup = new Set<string>();
  let candidates = new Set<string>();
  // An intent closed or without a record is not resolved below: a peer's lapse cannot move its answer,
  // so it names no one (null sent every waiter of a superseded intent to the database at each look:
  // a third of the quick polls, 240 reads a second, in bench:load's 200 agents on PostgreSQL).
  let named: string[] = [];
  let decision: Decision | null = null;
  let action = me.lastAction;
  let reason = "Changes since your cursor.";
  let completed: PeerView[] | undefined;
  if (!me.closedAt && me.record) {
    let d: Awaited<ReturnType<typeof readPeerDecision>>;
    if (write) {
      const decided = await decide(t, deps, caller, me.id, { all: true });
      if (decided.changed) ({ decision, completed } = decided);
      d = { ...decided, last: decided.decision };
    } else {
      // Outside a transaction: the row just read (after `at`) is the one the resolver starts from, not read twice.
      d = await readPeerDecision(t, deps, caller, me.id, { all: true, me });
      if (d.changed) return null;
      await nextTurn();
    }
    ({ action, reason } = d.resolution);
    named = d.resolution.peerIds; // recorded as the last decision when it changed, equal to it when not
    stoodDown = new Set(
      d.others.filter((o) => o.lastAction === "duplicate" || o.lastAction === "handoff").map((o) => o.id),
    );
    related = relatedPeers({ ...me, record: me.record }, d.others, d.resolution.peerIds, {
      caseInsensitive: caller.repo.caseInsensitive,
    });
    if (!write) await nextTurn();
    const l = lookupOf(me.record);
    lookup = new Set([...l.active.flatMap((k) => k.names), ...l.completed]);
    candidates = new Set(
      d.others
        .filter((o) => o.record && indexNames(o.record).some((n) => lookup.has(n.name)))
        .map((o) => o.id),
    );
  }
  const learned = knownOf(deps.store);
  if (learned.size >= 20_000) learned.clear(); // memory, not state: start over rather than grow
  learned.set(me.id, { related, stoodDown, lookup, candidates, named, at });

  // Outside a transaction the change log held in memory (live/recent-events), up to `at`: it
  // answers only when none is shown, so never renders one (a rendered change takes its time from eventsAfter).
  type Event = Awaited<ReturnType<Tx["journal"]["eventsAfter"]>>[number];
  const outside = async () =>
    (await recentOf(deps.store).after(caller.repo.id, cursor, SCAN, at)) ??
    (await t.journal.tailAfter(caller.repo.id, cursor, SCAN));
  const events = write
    ? await t.journal.eventsAfter(caller.repo.id, cursor, SCAN)
    : ((await outside()).filter((e) => e.seq <= at) as Event[]);
  const relevant = events.filter((e) => isRelevant(e, me.id, related));
  const notices = await t.notices.hasUntold(me.id);
  const shown = relevant.slice(0, BOUNDS.pollEvents);
  const next =
    shown.length < relevant.length
      ? shown[shown.length - 1]!.seq
      : (events[events.length - 1]?.seq ?? cursor);
  if (shown.length === 0 && !decision && !notices) return { cursor: String(next), control, packet: null };
  if (!write) return null;
  if (shown.length === 0 && !decision) reason = "Notices for you.";

  const touched = [...new Set(shown.map((e) => e.intentId).filter((id) => id !== me.id))];
  const peers = (await t.intents.byIds(touched)).map((r) => toPeerView(r, deps));
  const packet = await issuePacket(
    t,
    deps,
    caller,
    {
      kind: "poll",
      intentId: me.id,
      action,
      reason,
      peers,
      decisions: decision ? [decision] : [],
      changes: shown.map(toChange),
      ...(completed ? { completed } : {}),
    },
    next,
  );
  return { cursor: String(next), control, packet };
}
