import { OVERLAP_ACTIONS, REPLAN_ACTIONS, type MetricName, type SeriesName } from "@cohent/protocol";

/** Guard catches that stopped a write on its paths (the others are kill-switch and intent refusals). */
export const PATH_CATCH_KINDS: ReadonlySet<string> = new Set([
  "scope-conflict",
  "outside-scope",
  "git-peer-changes",
]);

export interface MetricRows {
  decisions: { createdAt: Date; action: string }[];
  catches: { createdAt: Date; kind: string }[];
  packets: { createdAt: Date; tokens: number; ackedChars: number | null }[];
  commands: { createdAt: Date }[];
}

/**
 * Derived coordination metrics (never billing), each defined once, by what
 * one row adds to it; totals and time series both sum these:
 * - potentialOverlaps: decisions that named a peer plus refused or stopped path writes;
 * - redirections: pre-edit redirections (wait, duplicate, handoff);
 * - pathGuardCatches: writes stopped on paths: claims refused for an overlapping peer scope (counted by the
 *   server) and writes outside the declared scope (reported by the adapter);
 * - guardRefusals: every refusal the guard reported, path or not (edits before an intent, kill switch, …);
 * - packets, packetTokens, injectedChars (acknowledged characters);
 * - dependencyWaits: wait decisions; humanCommands: pause, cancel and resume.
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
} satisfies Record<
  MetricName,
  Partial<Record<"decision" | "catch" | "packet" | "command", (row: never) => number>>
>;

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
  const add = <R extends { createdAt: Date }>(
    kind: "decision" | "catch" | "packet" | "command",
    list: R[],
  ) => {
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
  return out;
}

export const totals = (rows: MetricRows): Record<MetricName, number> =>
  Object.fromEntries(Object.entries(tally(rows)).map(([k, v]) => [k, v[0]!])) as Record<MetricName, number>;

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
} as const satisfies Record<SeriesName, MetricName>;
