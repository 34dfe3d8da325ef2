import type { IntentRecord, PeerView } from "@cohent/protocol";
import { leaseCutoff } from "../../core/lease.js";
import { resolve } from "../../core/resolver.js";
import { lookupOf } from "../../core/resolver-index.js";
import { newId } from "../../ids.js";
import type { ActivePeer, IntentRow, Tx } from "../../store/index.js";
import type { Caller, Deps } from "../deps.js";
import { toPeerView, toResolverIntent } from "./views.js";

const sameIds = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Runs the resolver for one intent against its candidate peers (or, with
 * `all`, every active intent and the completed work it depends on), and records the
 * answer when it changed. Intent, context and poll call this.
 */
export async function decide(
  t: Tx,
  deps: Deps,
  caller: Caller,
  intentId: string,
  {
    force = false,
    all = false,
    record,
  }: {
    force?: boolean;
    all?: boolean;
    /** The intent's record, when the caller has just written it: its candidates are read with the intent. */
    record?: IntentRecord;
  } = {},
) {
  const repoId = caller.repo.id;
  const read = () => readDecision(t, deps, caller, intentId, { force, all, record });
  let seen = await read();
  // A decision is recorded in the repository's order, under the lock claims take (journal `lock`):
  // read before it, the peers may miss a decision committed since (on PostgreSQL, by another
  // instance), and recording from that read would contradict it. So an answer about to be recorded
  // is worked out again under the lock. One that is not recorded (a poll whose answer stands, the
  // common case) takes no lock: a poll stays a read.
  if ((force || seen.changed) && !t.journal.holds(repoId)) {
    await t.journal.lock(repoId);
    seen = await read();
  }
  const { me, last, others, resolution, changed } = seen;

  const byId = new Map(others.map((i) => [i.id, i]));
  const views = (ids: string[]): PeerView[] =>
    ids.flatMap((id) => (byId.has(id) ? [toPeerView(byId.get(id)!, deps)] : []));
  const onCompleted = resolution.rule === "completed-dependency";

  let decision = last;
  if (force || changed) {
    const now = deps.clock();
    const { action, peerIds, reason } = resolution;
    await t.journal.lock(repoId);
    decision = await t.journal.addDecision({
      id: newId("dec"),
      repoId,
      intentId,
      action,
      peerIds,
      reason,
      at: now,
    });
    await t.intents.update(intentId, { lastAction: action });
    await t.journal.addEvent({
      repoId,
      intentId,
      kind: "decision",
      peerIds,
      at: now,
      summary: `${action}${peerIds.length ? ` with ${peerIds.join(", ")}` : ""}`,
    });
  }
  return {
    me,
    resolution,
    decision: decision!,
    changed,
    peers: onCompleted ? [] : views(resolution.peerIds),
    completed: onCompleted ? views(resolution.peerIds) : undefined,
    others,
  };
}

type ReadOptions = {
  force?: boolean;
  all?: boolean;
  record?: IntentRecord;
  /** The intent's row as the caller has just read it on the same handle: not read again. */
  me?: IntentRow;
};

/**
 * The resolver's answer for one intent as the store now reads, and whether it differs from the last one
 * recorded (`changed`), recording nothing: `decide` records it.
 */
export const readDecision = (t: Tx, deps: Deps, caller: Caller, intentId: string, opts: ReadOptions = {}) =>
  readWith(t, deps, caller, intentId, opts, (repoId, cutoff) => t.intents.active(repoId, cutoff));

/**
 * `readDecision` with the peers' resolver fields only (store `activePeers`: their records from memory):
 * for a poll outside any transaction (operations/agent/poll), which takes a transaction only when it
 * must write, and reads again there.
 */
export const readPeerDecision = (
  t: Tx,
  deps: Deps,
  caller: Caller,
  intentId: string,
  opts: ReadOptions = {},
) => readWith(t, deps, caller, intentId, opts, (repoId, cutoff) => t.intents.activePeers(repoId, cutoff));

async function readWith<P extends ActivePeer>(
  t: Tx,
  deps: Deps,
  caller: Caller,
  intentId: string,
  { force = false, all = false, record, me: read }: ReadOptions,
  active: (repoId: string, cutoff: Date) => Promise<P[]>,
) {
  const repoId = caller.repo.id;
  const cutoff = leaseCutoff(deps.clock(), deps.lease);
  // Only the peers sharing a name with my record can match a rule (the IntentName index);
  // `all` loads every active intent too, for callers that relate peers by paths as well.
  // Completed peers come from the index either way, so both paths see the same completed work.
  const candidates = (r: IntentRecord) => t.intents.candidates(repoId, lookupOf(r), cutoff);
  // The reads that do not wait for each other go together (one round trip on PostgreSQL). Forced, the
  // answer is recorded whatever the last one was.
  const [me, last, early] = await Promise.all([
    read ?? t.intents.get(intentId),
    force ? null : t.journal.lastDecision(intentId),
    record ? candidates(record) : null,
  ]);
  if (!me) throw new Error(`intent ${intentId} vanished inside its transaction`);
  const found = early ?? (me.record ? await candidates(me.record) : []);
  const others: (P | IntentRow)[] = (
    all ? [...(await active(repoId, cutoff)), ...found.filter((i) => i.state === "completed")] : found
  ).filter((i) => i.id !== me.id);
  const resolution = resolve(toResolverIntent(me), others.map(toResolverIntent));
  const changed = !last || last.action !== resolution.action || !sameIds(last.peerIds, resolution.peerIds);
  return { me, last, others, resolution, changed };
}
