import {
  OVERLAP_ACTIONS,
  REPLAN_ACTIONS,
  ruleOfKind,
  type MetricName,
  type RuleCount,
  type SeriesName,
} from "@cohent/protocol";

/** Guard catches that stopped a write on its paths (the others are kill-switch and intent refusals). */
export const PATH_CATCH_KINDS: ReadonlySet<string> = new Set([
  "scope-conflict",
  "outside-scope",
  "git-peer-changes",
  "shell-write",
  "guard-files",
]);

export interface MetricRows {
  decisions: { createdAt: Date; action: string }[];
  catches: { createdAt: Date; kind: string }[];
  packets: { createdAt: Date; tokens: number; ackedChars: number | null }[];
  commands: { createdAt: Date }[];
  /** Change-log entries of the kinds the queue metrics count (QUEUE_EVENT_KINDS). */
  events: { createdAt: Date; kind: string }[];
  /** Notices of the kinds the metrics count (METRIC_NOTICE_KINDS); `waitedMs` on a grant. */
  notices: { createdAt: Date; kind: string; waitedMs: number | null }[];
  /** Release requests, one per holder asked. */
  asks: { createdAt: Date; honouredAt: Date | null }[];
}

/** The change-log kinds and notice kinds the metrics read (the store selects only these). */
export const QUEUE_EVENT_KINDS = ["scope.queued"] as const;
export const METRIC_NOTICE_KINDS = ["scope-granted", "scope-lost"] as const;

type Source = "decision" | "catch" | "packet" | "command" | "event" | "notice" | "ask";

/**
 * Derived coordination metrics (never billing), each defined once, by what
 * one row adds to it; totals and time series both sum these:
 * - potentialOverlaps: decisions that named a peer plus refused or stopped path writes;
 * - redirections: pre-edit redirections (wait, duplicate, handoff);
 * - pathGuardCatches: writes stopped on paths: claims refused for an overlapping peer scope (counted by the
 *   server), writes outside the declared scope and shell writes over peers' claims (reported by the adapter);
 * - guardRefusals: every refusal the guard reported, path or not (edits before an intent, kill switch, …);
 * - packets, packetTokens, injectedChars (acknowledged characters);
 * - dependencyWaits: wait decisions; humanCommands: pause, cancel, resume, a person's release of a claim and
 *   a person's request to restore a caught shell write;
 * - waitsQueued: claims that joined the queue (or moved to its tail with new paths);
 * - grantedFromQueue: queued claims granted (their `scope-granted` notices);
 * - releaseRequests: release requests, one per holder asked; releasesHonoured: those whose holder then
 *   released or narrowed the asked paths itself (not by expiry or a person);
 * - lostClaimNotices: claims freed without their holder asking (lease expiry, a person's release, a cancel);
 * - shellWritesCaught: shell (or opaque MCP) calls that changed peers' claimed files, caught after the call.
 * The time in the queue (p50, p95) is not a sum: queueWait below, from the same grant notices.
 */
const DEFINITIONS = {
  potentialOverlaps: {
    decision: (d: { action: string }) => +OVERLAP_ACTIONS.has(d.action),
    catch: (c: { kind: string }) => +PATH_CATCH_KINDS.has(c.kind),
  },
  redirections: { decision: (d: { action: string }) => +REPLAN_ACTIONS.has(d.action) },
  pathGuardCatches: { catch: (c: { kind: string }) => +PATH_CATCH_KINDS.has(c.kind) },
  guardRefusals: { catch: () => 1 },
  packets: { packet: () => 1 },
  packetTokens: { packet: (p: { tokens: number }) => p.tokens },
  injectedChars: { packet: (p: { ackedChars: number | null }) => p.ackedChars ?? 0 },
  dependencyWaits: { decision: (d: { action: string }) => +(d.action === "wait") },
  humanCommands: { command: () => 1 },
  waitsQueued: { event: (e: { kind: string }) => +(e.kind === "scope.queued") },
  grantedFromQueue: { notice: (n: { kind: string }) => +(n.kind === "scope-granted") },
  releaseRequests: { ask: () => 1 },
  releasesHonoured: { ask: (a: { honouredAt: Date | null }) => +(a.honouredAt !== null) },
  lostClaimNotices: { notice: (n: { kind: string }) => +(n.kind === "scope-lost") },
  shellWritesCaught: { catch: (c: { kind: string }) => +(c.kind === "shell-write") },
} satisfies Record<MetricName, Partial<Record<Source, (row: never) => number>>>;

export const METRIC_NAMES = Object.keys(DEFINITIONS) as MetricName[];

/** Sums every metric into `buckets` slots; `slot` places a row by its time. One bucket gives the totals. */
export function tally(
  rows: MetricRows,
  buckets = 1,
  slot: (at: Date) => number = () => 0,
): Record<MetricName, number[]> {
  const out = Object.fromEntries(METRIC_NAMES.map((n) => [n, new Array<number>(buckets).fill(0)])) as Record<
    MetricName,
    number[]
  >;
  const add = <R extends { createdAt: Date }>(kind: Source, list: R[]) => {
    for (const name of METRIC_NAMES) {
      const count = (DEFINITIONS[name] as Partial<Record<string, (row: R) => number>>)[kind];
      if (!count) continue;
      for (const row of list) out[name][slot(row.createdAt)]! += count(row);
    }
  };
  add("decision", rows.decisions);
  add("catch", rows.catches);
  add("packet", rows.packets);
  add("command", rows.commands);
  add("event", rows.events);
  add("notice", rows.notices);
  add("ask", rows.asks);
  return out;
}

export const totals = (rows: MetricRows): Record<MetricName, number> =>
  Object.fromEntries(Object.entries(tally(rows)).map(([k, v]) => [k, v[0]!])) as Record<MetricName, number>;

/** Nearest-rank percentile of sorted values; null without any. */
const percentile = (sorted: readonly number[], p: number): number | null =>
  sorted.length ? sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]! : null;

/** Time from queueing to grant of the claims granted in the window (p50, p95), from the grant notices. */
export function queueWait(rows: Pick<MetricRows, "notices">): {
  queueWaitP50Ms: number | null;
  queueWaitP95Ms: number | null;
} {
  const waits = rows.notices
    .filter((n) => n.kind === "scope-granted" && n.waitedMs !== null)
    .map((n) => n.waitedMs!)
    .sort((a, b) => a - b);
  return { queueWaitP50Ms: percentile(waits, 0.5), queueWaitP95Ms: percentile(waits, 0.95) };
}

/** The console's series names, each one of the metrics above. */
export const SERIES = {
  overlaps: "potentialOverlaps",
  redirections: "redirections",
  waits: "dependencyWaits",
  guardCatches: "pathGuardCatches",
  packets: "packets",
  packetTokens: "packetTokens",
  injectedChars: "injectedChars",
  commands: "humanCommands",
  queued: "waitsQueued",
  releaseRequests: "releaseRequests",
  lostClaims: "lostClaimNotices",
  shellWrites: "shellWritesCaught",
} as const satisfies Record<SeriesName, MetricName>;

/**
 * Refusals by the guard's rule that made them, most first (then by name): the rule a report named, else
 * its kind's (a claim the service refused itself is the guard's `scope-conflict` rule).
 */
export function refusalsByRule(
  rows: readonly { kind: string; rule: string | null; count: number }[],
): RuleCount[] {
  const counts = new Map<string, number>();
  for (const r of rows) {
    const rule = r.rule ?? ruleOfKind(r.kind) ?? r.kind;
    counts.set(rule, (counts.get(rule) ?? 0) + r.count);
  }
  return [...counts]
    .map(([rule, count]) => ({ rule, count }))
    .sort((a, b) => b.count - a.count || (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0));
}
