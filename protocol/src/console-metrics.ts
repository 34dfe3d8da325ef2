/** Derived coordination metrics over a window (never billing). */
export interface Metrics {
  repo: string;
  since: string | null;
  potentialOverlaps: number;
  redirections: number;
  pathGuardCatches: number;
  guardRefusals: number;
  packets: number;
  packetTokens: number;
  injectedChars: number;
  dependencyWaits: number;
  humanCommands: number;
  /** Claims that joined the queue. */
  waitsQueued: number;
  /** Queued claims granted. */
  grantedFromQueue: number;
  /** Time from queueing to grant, of the claims granted in the window; null without any. */
  queueWaitP50Ms: number | null;
  queueWaitP95Ms: number | null;
  releaseRequests: number;
  /** Release requests whose holder released or narrowed the asked paths afterwards. */
  releasesHonoured: number;
  lostClaimNotices: number;
  /** Shell (or opaque MCP) calls caught after the fact changing files that peers hold. */
  shellWritesCaught: number;
  /** Sessions that called in the window, by whether the guard checks their tool calls now (EnforcementView). */
  guardedSessions: number;
  advisorySessions: number;
}
export type MetricName = Exclude<
  keyof Metrics,
  "repo" | "since" | "queueWaitP50Ms" | "queueWaitP95Ms" | "guardedSessions" | "advisorySessions"
>;

export type SeriesName =
  | "overlaps"
  | "redirections"
  | "waits"
  | "guardCatches"
  | "packets"
  | "packetTokens"
  | "injectedChars"
  | "commands"
  | "queued"
  | "releaseRequests"
  | "lostClaims"
  | "shellWrites";

/** GET /api/console/repos/:owner/:name/metrics: the totals and equal-width buckets, oldest first. */
export interface MetricsSeries {
  totals: Metrics;
  since: string;
  until: string;
  bucketMs: number;
  series: Record<SeriesName, number[]>;
  /**
   * The window's refusals by the guard's rule that made them (adapter/src/guard/rules.ts), most first: the
   * rule a report named, else its kind's (ruleOfKind: a claim the service refused is `scope-conflict`).
   * Writes caught after the call (shell-write, guard-files) are no refusal and are not among them.
   */
  refusalsByRule: RuleCount[];
}

/** How many refusals one rule of the guard made. */
export interface RuleCount {
  rule: string;
  count: number;
}
