import { scopeOverlap } from "@cohent/protocol/paths";
import type { FaultRecord, History, OpRecord } from "./history.js";

/**
 * The torture's checker: pure, a history in, the anomalies out. Conservative by design: an anomaly is
 * reported only when no order of the operations consistent with their real times (each one took effect
 * somewhere between its invoke and its answer) and no event the run cannot see (a lease lapsing, a stale
 * cache within its bound) explains what was observed.
 *
 * The claim model. A claim is granted when a `scope` with paths answers ok. Its holder certainly holds
 * it from that answer until the earliest of:
 *  - the invoke of the holder's next call that may change it (scope, publish, a closing or path-carrying
 *    checkpoint, a release), whatever its outcome;
 *  - the invoke of a person's command that frees claims (cancel, a release) on that session;
 *  - the moment its lease may have lapsed: leaseMs after the invoke of its latest ok call, less the
 *    instances' clock skew and the renewal's staleness (stored renewals are written every renewMs).
 * Two claims of different sessions whose paths overlap and whose certain intervals meet are an overlap.
 */

export type AnomalyKind =
  | "overlap"
  | "holder-not-told"
  | "lost-write"
  | "doubled-write"
  | "late-pause"
  | "non-retryable-in-outage"
  | "duplicate-burst"
  | "no-recovery";

export interface Anomaly {
  kind: AnomalyKind;
  message: string;
  ops: string[];
}

export interface Recovery {
  fault: string;
  target: string;
  startAt: number;
  /** From the fault's end to the first ok answer it concerns (invoked after the end); null: none came. */
  recoveryMs: number | null;
}

export interface CheckResult {
  anomalies: Anomaly[];
  recoveries: Recovery[];
  stats: {
    ops: number;
    ok: number;
    claims: number;
    /** Claims that may have been lost behind their holder's back and were taken: the holder's next call checked. */
    lostAndTaken: number;
    writes: number;
    pauses: number;
  };
}

interface Claim {
  op: OpRecord;
  session: string;
  paths: string[];
  epoch: number;
  start: number;
  end: number;
  endCause: "own" | "person" | "lease" | "end";
}

/** Calls that may change the caller's claim, whatever they answered. */
function changesClaim(o: OpRecord): boolean {
  if (o.op === "scope" || o.op === "publish" || o.op === "release") return true;
  if (o.op === "checkpoint")
    return !!o.args.paths?.length || o.args.status === "completed" || o.args.status === "abandoned";
  return false;
}

/** A call that claims paths when it answers ok: a scope with paths, a working or blocked checkpoint with paths. */
export function claimsPaths(o: OpRecord): boolean {
  if (!o.args.paths?.length) return false;
  return (
    o.op === "scope" ||
    (o.op === "checkpoint" && (o.args.status === "working" || o.args.status === "blocked"))
  );
}

/** A person's command that frees a session's claims. */
const freesClaims = (o: OpRecord) =>
  (o.op === "control" && o.args.control === "cancel") || o.op === "release";

const MARGIN_MS = 250;
/**
 * How long after its invoke an unanswered call may still take effect (a request held in a stalled
 * database connection past its client's timeout). The client gives up after seconds; this bound is the
 * checker's one assumption beyond the header's.
 */
export const LINGER_MS = 30_000;

/** Answers that say nothing of whether an earlier attempt of the same write ran (it may still be running). */
const INDEFINITE = new Set([
  "REQUEST_IN_FLIGHT",
  "DATABASE_UNAVAILABLE",
  "OVERLOADED",
  "INTERNAL",
  "RATE_LIMITED",
]);
/** An answer that settles a write: ok, or a refusal on its merits (replayed by its key, or run fresh). */
const settles = (o: OpRecord) =>
  o.outcome === "ok" ||
  (o.outcome === "fail" && !!o.code && !INDEFINITE.has(o.code) && !o.code.startsWith("HTTP_"));

/** Attempts of one logical write (same idempotency key), by key. */
function attemptsOf(ops: OpRecord[]): Map<string, OpRecord[]> {
  const m = new Map<string, OpRecord[]>();
  for (const o of ops)
    if (o.write) {
      let list = m.get(o.write);
      if (!list) m.set(o.write, (list = []));
      list.push(o);
    }
  return m;
}

export function leaseBudget(h: History["header"]): number {
  return h.leaseMs - h.skewMs - h.renewMs - MARGIN_MS;
}

function bySession(ops: OpRecord[]): Map<string, OpRecord[]> {
  const m = new Map<string, OpRecord[]>();
  for (const o of ops) {
    if (!o.process.startsWith("agent:") && o.process !== "burst") continue;
    let list = m.get(o.session);
    if (!list) m.set(o.session, (list = []));
    list.push(o);
  }
  for (const list of m.values()) list.sort((a, b) => a.invokeAt - b.invokeAt);
  return m;
}

/** The claims each session certainly held, with the interval it certainly held each over. */
export function claimsOf(h: History): Claim[] {
  const budget = leaseBudget(h.header);
  const horizon = Math.max(0, ...h.ops.map((o) => o.completeAt ?? o.invokeAt));
  const people = h.ops.filter((o) => o.process === "person" && freesClaims(o));
  const attempts = attemptsOf(h.ops);
  const siblings = (o: OpRecord) => (o.write ? (attempts.get(o.write) ?? [o]) : [o]);
  /** Unanswered, and no attempt of the same write settled it: it may take effect later. */
  const dangling = (o: OpRecord) => o.outcome === "unknown" && !siblings(o).some(settles);
  const linger = h.header.lingerMs ?? LINGER_MS;
  const claims: Claim[] = [];
  for (const [session, ops] of bySession(h.ops)) {
    ops.forEach((g, i) => {
      if (!claimsPaths(g) || g.outcome !== "ok" || g.completeAt === null) return;
      // A retry's ok may replay its first attempt's grant: held since then, unless the lease could lapse
      // before this attempt renewed it (from the last call that surely renewed it before the first attempt).
      const first = Math.min(...siblings(g).map((s) => s.invokeAt));
      if (first < g.invokeAt) {
        const before = ops.filter((o) => o.outcome === "ok" && o.invokeAt <= first).at(-1);
        if (!before || g.invokeAt - before.invokeAt >= budget) return;
      }
      // An earlier call of the session's own that may still take effect and change the claim.
      if (
        ops.some(
          (u) =>
            u.invokeAt < g.invokeAt && changesClaim(u) && dangling(u) && u.invokeAt + linger > g.invokeAt,
        )
      )
        return;
      const start = g.completeAt;
      let end = horizon;
      let endCause: Claim["endCause"] = "end";
      const later = ops.slice(i + 1).filter((o) => o.invokeAt >= g.invokeAt);
      const own = later.find(changesClaim);
      if (own && own.invokeAt < end) [end, endCause] = [own.invokeAt, "own"];
      for (const p of people)
        if (p.session === session && (p.completeAt === null || p.completeAt >= first)) {
          const at = Math.max(start, p.invokeAt);
          if (at < end) [end, endCause] = [at, "person"];
        }
      // The lease: renewed (at least) at the invoke of each ok call; may lapse budget ms after the last.
      let renewed = g.invokeAt;
      for (const o of later) {
        if (o.invokeAt >= end) break;
        if (o.outcome !== "ok") continue;
        if (o.invokeAt - renewed >= budget) break;
        renewed = o.invokeAt;
      }
      if (renewed + budget < end) [end, endCause] = [Math.max(start, renewed + budget), "lease"];
      claims.push({ op: g, session, paths: g.args.paths!, epoch: g.epoch ?? 0, start, end, endCause });
    });
  }
  return claims.sort((a, b) => a.start - b.start);
}

const overlapping = (a: string[], b: string[]) => scopeOverlap(a, b).length > 0;

function checkOverlaps(claims: Claim[], out: Anomaly[]): void {
  const active: Claim[] = [];
  for (const c of claims) {
    for (let i = active.length - 1; i >= 0; i--) if (active[i]!.end <= c.start) active.splice(i, 1);
    for (const a of active)
      if (a.session !== c.session && Math.min(a.end, c.end) > c.start && overlapping(a.paths, c.paths))
        out.push({
          kind: "overlap",
          message: `${a.session} held [${a.paths.join(", ")}] (granted by ${a.op.id} on ${a.op.instance}, held until ${fmt(a.end)}) while ${c.session} was granted [${c.paths.join(", ")}] by ${c.op.id} on ${c.op.instance} at ${fmt(c.start)}`,
          ops: [a.op.id, c.op.id],
        });
    active.push(c);
  }
}

/**
 * A claim that may have been freed behind its holder's back (a lease lapse, a person's release) and then
 * granted to another session: the holder's next call at least staleMs after that grant must show a
 * higher lease epoch (the fence), or the holder was not told and may act on a claim it lost.
 */
function checkTold(h: History, claims: Claim[], out: Anomaly[]): number {
  let checked = 0;
  const sessions = bySession(h.ops);
  for (const c of claims) {
    if (c.endCause !== "lease" && c.endCause !== "person") continue;
    const taker = claims.find(
      (d) => d.session !== c.session && d.start >= c.end && overlapping(c.paths, d.paths),
    );
    if (!taker) continue;
    const ops = sessions.get(c.session) ?? [];
    const after = ops.filter((o) => o.invokeAt > c.op.invokeAt);
    const own = after.find(changesClaim);
    const due = taker.start + h.header.staleMs;
    const next = after.find(
      (o) => o.invokeAt >= due && o.epoch !== undefined && (!own || o.invokeAt <= own.invokeAt),
    );
    if (next) checked++;
    if (next && next.epoch! <= c.epoch)
      out.push({
        kind: "holder-not-told",
        message: `${c.session} lost [${c.paths.join(", ")}] (granted by ${c.op.id}, epoch ${c.epoch}) to ${taker.session} (${taker.op.id} at ${fmt(taker.start)}), yet its call ${next.id} at ${fmt(next.invokeAt)} still shows epoch ${next.epoch}`,
        ops: [c.op.id, taker.op.id, next.id],
      });
  }
  return checked;
}

/** Every acknowledged write is stored exactly once; no write, acknowledged or not, twice. */
function checkWrites(h: History, out: Anomaly[]): number {
  if (!h.final) return 0;
  const writes = new Map<string, { ops: OpRecord[]; marker: string; table: "checkpoints" | "intents" }>();
  for (const o of h.ops) {
    if (!o.write || (o.op !== "checkpoint" && o.op !== "publish")) continue;
    const marker = o.op === "checkpoint" ? o.args.summary : o.args.prompt;
    if (!marker) continue;
    let w = writes.get(o.write);
    if (!w)
      writes.set(
        o.write,
        (w = { ops: [], marker, table: o.op === "checkpoint" ? "checkpoints" : "intents" }),
      );
    w.ops.push(o);
  }
  for (const [key, w] of writes) {
    const stored = h.final[w.table][w.marker] ?? 0;
    const acked = w.ops.some((o) => o.outcome === "ok");
    if (acked && stored === 0)
      out.push({
        kind: "lost-write",
        message: `${w.ops[0]!.op} ${JSON.stringify(w.marker)} (write ${key}) was acknowledged but the final read has none`,
        ops: w.ops.map((o) => o.id),
      });
    else if (stored > 1)
      out.push({
        kind: "doubled-write",
        message: `${w.ops[0]!.op} ${JSON.stringify(w.marker)} (write ${key}, ${w.ops.length} attempt(s), ${acked ? "acknowledged" : "never acknowledged"}) is stored ${stored} times`,
        ops: w.ops.map((o) => o.id),
      });
  }
  return writes.size;
}

/** A pause acknowledged before a claim was invoked (and no resume invoked in between) refuses it. */
function checkPauses(h: History, out: Anomaly[]): number {
  const attempts = attemptsOf(h.ops);
  /** A retry may replay its first attempt's answer: the call was invoked when its first attempt was. */
  const firstInvoke = (o: OpRecord) =>
    Math.min(o.invokeAt, ...(o.write ? (attempts.get(o.write) ?? []) : []).map((s) => s.invokeAt));
  const controls = h.ops
    .filter((o) => o.process === "person" && o.op === "control")
    .sort((a, b) => a.invokeAt - b.invokeAt);
  const pauses = controls.filter(
    (o) => o.args.control === "pause" && o.outcome === "ok" && o.completeAt !== null,
  );
  for (const p of pauses) {
    const resume = controls.find(
      (r) => r.session === p.session && r.args.control === "resume" && r.invokeAt > p.invokeAt,
    );
    const until = resume?.invokeAt ?? Infinity;
    for (const o of h.ops)
      if (
        o.session === p.session &&
        o.process !== "person" &&
        (o.op === "scope" || claimsPaths(o)) &&
        o.outcome === "ok" &&
        firstInvoke(o) > p.completeAt! &&
        o.invokeAt < until
      )
        out.push({
          kind: "late-pause",
          message: `${p.session} was paused (${p.id}, acknowledged at ${fmt(p.completeAt!)}), yet its claim ${o.id} invoked at ${fmt(o.invokeAt)} was granted`,
          ops: [p.id, o.id],
        });
  }
  return pauses.length;
}

/** Faults that are not outages: no recovery to time, no window in which errors must be retryable. */
const NOT_OUTAGES = new Set(["burst", "clock-skew"]);

/** How long after a fault an operation still counts as inside it (an instance restarting, a pool reconnecting). */
export const OUTAGE_TAIL_MS = 10_000;

function checkErrors(h: History, out: Anomaly[]): void {
  for (const o of h.ops) {
    if (o.outcome !== "fail" || o.retryable !== false) continue;
    const fault = h.faults.find(
      (f) => !NOT_OUTAGES.has(f.fault) && o.invokeAt >= f.startAt && o.invokeAt <= f.endAt + OUTAGE_TAIL_MS,
    );
    if (fault)
      out.push({
        kind: "non-retryable-in-outage",
        message: `${o.op} ${o.id} by ${o.process} on ${o.instance} during ${fault.fault} (${fault.target}) answered ${o.status} ${o.code}, which is not retryable`,
        ops: [o.id],
      });
  }
}

/** Sessions that declared one and the same intent at once: at most one of them proceeds. */
function checkBursts(h: History, out: Anomaly[]): void {
  const byObjective = new Map<string, OpRecord[]>();
  for (const o of h.ops)
    if (o.process === "burst" && o.op === "intent" && o.outcome === "ok" && o.args.objective) {
      let list = byObjective.get(o.args.objective);
      if (!list) byObjective.set(o.args.objective, (list = []));
      list.push(o);
    }
  for (const [objective, ops] of byObjective) {
    const proceeded = ops.filter((o) => o.result?.action === "proceed");
    if (proceeded.length > 1)
      out.push({
        kind: "duplicate-burst",
        message: `${proceeded.length} of ${ops.length} identical intents ${JSON.stringify(objective)} were told to proceed`,
        ops: proceeded.map((o) => o.id),
      });
  }
}

/** The faults' recovery times: to the first ok answer, invoked after the fault ended, from what it hit. */
function recoveries(h: History, out: Anomaly[]): Recovery[] {
  return h.faults
    .filter((f) => !NOT_OUTAGES.has(f.fault))
    .map((f) => {
      const concerns = (o: OpRecord) =>
        f.fault === "kill-instance"
          ? o.instance === f.target
          : f.fault === "stop-agent"
            ? o.process === f.target
            : true;
      const first = h.ops
        .filter((o) => o.outcome === "ok" && o.invokeAt >= f.endAt && o.completeAt !== null && concerns(o))
        .reduce<number | null>((m, o) => (m === null || o.completeAt! < m ? o.completeAt! : m), null);
      const r: Recovery = {
        fault: f.fault,
        target: f.target,
        startAt: f.startAt,
        recoveryMs: first === null ? null : first - f.endAt,
      };
      const lastInvoke = Math.max(0, ...h.ops.map((o) => o.invokeAt));
      // Only a fault followed by calls that could have succeeded counts as not recovered.
      if (first === null && lastInvoke > f.endAt + OUTAGE_TAIL_MS)
        out.push({
          kind: "no-recovery",
          message: `after ${f.fault} (${f.target}) ended at ${fmt(f.endAt)}, nothing it concerns answered ok again`,
          ops: [],
        });
      return r;
    });
}

const fmt = (ms: number) => `${(ms / 1000).toFixed(3)} s`;

export function checkHistory(h: History): CheckResult {
  const anomalies: Anomaly[] = [];
  const claims = claimsOf(h);
  checkOverlaps(claims, anomalies);
  const lostAndTaken = checkTold(h, claims, anomalies);
  const writes = checkWrites(h, anomalies);
  const pauses = checkPauses(h, anomalies);
  checkErrors(h, anomalies);
  checkBursts(h, anomalies);
  const rec = recoveries(h, anomalies);
  return {
    anomalies,
    recoveries: rec,
    stats: {
      ops: h.ops.length,
      ok: h.ops.filter((o) => o.outcome === "ok").length,
      claims: claims.length,
      lostAndTaken,
      writes,
      pauses,
    },
  };
}

export type { FaultRecord };
