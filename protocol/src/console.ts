import { z } from "zod";
import { CONTROL_KINDS } from "./console-constants.js";
import type { REMOTE_WIRING, ReportedHost, Wiring } from "./hosts.js";
import type { Action, Control, Guard } from "./packets.js";
import type { ShellWriteView } from "./shell-writes.js";

export * from "./console-constants.js";

// The human side of the wire: pairing (the CLI asks, a person answers in the
// browser) and the Control Room's JSON and live stream. Inputs the backend
// validates are zod schemas; what it answers is plain types, read by the
// console with `import type`.

// ---- names and inputs ------------------------------------------------------

export const RepoName = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,100}\/[A-Za-z0-9_.-]{1,100}$/, "repositories are named owner/name");
export const Goal = z.string().max(2_000);
export const Person = z.string().trim().min(1).max(64);

export const ControlKind = z.enum(CONTROL_KINDS);
export type ControlKind = z.infer<typeof ControlKind>;

/** POST /api/console/sessions/:id/control */
export const ControlRequest = z.strictObject({
  kind: ControlKind,
  reason: z.string().trim().min(1).max(500).optional(),
});
export type ControlRequest = z.infer<typeof ControlRequest>;

/** POST /api/console/repos/:owner/:name/scopes/:intentId/release: a person frees a claim (a human command, like pause). */
export const ScopeReleaseRequest = z.strictObject({
  reason: z.string().trim().min(1).max(500).optional(),
});
export type ScopeReleaseRequest = z.infer<typeof ScopeReleaseRequest>;

/** POST /api/console/repos/:owner/:name/goal */
export const GoalRequest = z.strictObject({ goal: Goal });
export type GoalRequest = z.infer<typeof GoalRequest>;

// ---- pairing ---------------------------------------------------------------

/** POST /api/pairing: a CLI asks for a credential for one repository. */
export const PairingStart = z.strictObject({
  repo: RepoName,
  machine: z.string().trim().min(1).max(128),
  user: z.string().trim().min(1).max(64),
  client: z.string().trim().min(1).max(64).optional(),
});
export type PairingStart = z.infer<typeof PairingStart>;

/** POST /api/pairing/token: the CLI's poll. */
export const PairingPoll = z.strictObject({ deviceCode: z.string().min(1).max(200) });
export type PairingPoll = z.infer<typeof PairingPoll>;

/** A user code as a person types it ("wdjb mjht", "WDJB-MJHT") -> "WDJB-MJHT". */
export const UserCode = z
  .string()
  .trim()
  .toUpperCase()
  .transform((c) => c.replace(/[^A-Z]/g, ""))
  .pipe(z.string().length(8))
  .transform((c) => `${c.slice(0, 4)}-${c.slice(4)}`);

/** The answer to PairingStart. */
export interface PairingStarted {
  pairingId: string;
  userCode: string;
  verificationUri: string;
  deviceCode: string;
  /** Seconds between polls. */
  interval: number;
  expiresAt: string;
}

/** The answer to an approved PairingPoll: the agent token, shown once. */
export interface PairingIssued {
  token: string;
  repo: string;
  person: string;
}

export type PairingStatus = "pending" | "approved" | "denied" | "issued" | "expired";

export interface PairingView {
  id: string;
  repo: string;
  /** False when approving would register a new repository. */
  repoKnown: boolean;
  machine: string;
  user: string;
  client: string | null;
  userCode: string;
  status: PairingStatus;
  approvedBy: string | null;
  person: string | null;
  createdAt: string;
  expiresAt: string;
}

/** GET /api/console/pairings/:code: the request, and whether this person may approve it. */
export interface PairingReview extends PairingView {
  mayApprove: boolean;
}

// ---- sign-in -----------------------------------------------------------------

export type SignInMode = "local" | "github";

/** GET /api/console/me */
export type ConsoleMe =
  | { signedIn: true; mode: SignInMode; person: string; provider: SignInMode; csrfToken: string }
  | { signedIn: false; mode: SignInMode };

// ---- repositories and the overview (live work) ---------------------------------

export interface RepoSummary {
  name: string;
  goal: string;
  openIntents: number;
  activeTokens: number;
  people: string[];
  pendingPairings: number;
  lastActivityAt: string | null;
}

/** GET /api/console/repos */
export interface RepoList {
  repos: RepoSummary[];
  pairings: PairingView[];
}

/** A work intent as named on a console page, open or closed. */
export interface Party {
  intentId: string;
  person: string;
  client: string | null;
  model: string | null;
  objective: string | null;
}

export interface WorkOverlap {
  with: Party;
  paths: string[];
  /** Both sides claimed the paths (otherwise they were only named in prompts). */
  claimed: boolean;
}

export interface WorkCollision {
  at: string;
  kind: string;
  paths: string[];
  refused: Party;
  /** The refused side's sub-agent, when a sub-agent made the call. */
  agentId: string | null;
  holders: Party[];
}

/** A sub-agent of one work intent, as its refused calls show it (a sub-agent's calls are its parent session's). */
export interface WorkSubagent {
  agentId: string;
  refusals: number;
  lastKind: string;
  lastAt: string;
}

/** A commit made through Cohent for an intent (`commit`), as its checkpoint recorded it. */
export interface CommitView {
  hash: string;
  paths: string[];
  summary: string;
  at: string;
}

/**
 * Whether a session's tool calls are checked by the guard ("guarded") or only
 * asked to follow the protocol ("advisory"), and why (backend core/enforcement):
 * - guarded `fail-closed`: the host's own wiring, as init wrote it, and a tool call of it reached the guard;
 * - guarded `foreign-measured`: another client's configuration that this host was measured to honour and
 *   fail closed on (Claude Code's settings read by Copilot CLI), and a tool call reached the guard;
 * - advisory `not-reported`: no hook said which client it runs in (a custom integration over HTTP or MCP, or
 *   an older adapter); `unknown-host`: the hook could not tell; `wiring-modified`: the checkout's guard wiring
 *   differs from what init wrote; `foreign-unproven`: another client's configuration, not measured to fail
 *   closed in this host; `host-version`: a version of the host reported to ignore a deny or fail open (Copilot
 *   CLI 1.0.65 to 1.0.73); `no-guard-call`: its hook reported, but no edit or shell call has reached the guard yet;
 *   `remote-mcp`: a remote agent over the backend's /mcp endpoint, coordinated, but nothing checks its writes.
 */
export type EnforcementLevel = "guarded" | "advisory";
export type EnforcementWhy =
  | "fail-closed"
  | "foreign-measured"
  | "not-reported"
  | "unknown-host"
  | "wiring-modified"
  | "foreign-unproven"
  | "host-version"
  | "no-guard-call"
  | "remote-mcp";
export interface EnforcementView {
  level: EnforcementLevel;
  why: EnforcementWhy;
  /** One sentence for people. */
  reason: string;
  /** The host its hook reported; null when none did. */
  host: ReportedHost | null;
  /** "Claude Code", …, or "unknown client". */
  hostName: string;
  hostVersion: string | null;
  /** "remote": a session of the /mcp endpoint, which no hook guards. */
  wiring: Wiring | typeof REMOTE_WIRING | null;
  /** The first guarded tool call (a kill-switch read or poll of its hook) the service saw; null before. */
  guardSeenAt: string | null;
}

/** One open work intent on the live page. Prompt and summaries are untrusted text. */
export interface Work {
  intentId: string;
  sessionId: string;
  person: string;
  client: string | null;
  model: string | null;
  prompt: string;
  objective: string | null;
  outputs: string[];
  dependsOn: string[];
  capabilities: string[];
  state: string;
  lastAction: Action;
  scope: string[];
  pathHints: string[];
  overlaps: WorkOverlap[];
  collisions: WorkCollision[];
  subagents: WorkSubagent[];
  lastCheckpoint: { status: string; summary: string; at: string } | null;
  /** Commits made through Cohent for this intent, oldest first. */
  commits: CommitView[];
  guard: Guard;
  /** Whether the guard checks this session's tool calls, and why. */
  enforcement: EnforcementView;
  lastCallAt: string;
  control: Control;
  controlReason: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface DecisionView {
  id: string;
  action: Action;
  reason: string;
  at: string;
  subject: Party;
  peers: Party[];
}

/** A human command as recorded: a control of the session, a person's release of one of its claims, or a restore request. */
export type CommandKind = ControlKind | "release" | "restore";

export interface CommandView {
  id: string;
  kind: CommandKind;
  actor: string;
  reason: string | null;
  at: string;
  sessionId: string;
  person: string;
  client: string | null;
}

export interface SessionView {
  id: string;
  key: string;
  person: string;
  client: string | null;
  model: string | null;
  control: Control;
  guard: Guard;
  enforcement: EnforcementView;
  lastSeenAt: string;
  intents: { id: string; state: string; lastAction: string }[];
}

export interface TokenView {
  id: string;
  person: string;
  client: string | null;
  createdAt: string;
  revokedAt: string | null;
  lastCallAt: string | null;
  /** Set when the token was issued through pairing. */
  machine: string | null;
  approvedBy: string | null;
}

/**
 * "Guard wiring modified": a checkout whose adapter found, at a session start
 * (or `doctor`), that what `cohent init` wrote and wired differs. One per
 * checkout, until a later report from it finds the wiring intact. The files
 * and phrases are the adapter's (peer text, bounded and validated).
 */
export interface WiringAlarmView {
  /** Opaque: a hash of the machine and the checkout's directory. */
  checkout: string;
  person: string;
  /** The machine the reporting token was paired from, when it was. */
  machine: string | null;
  tokenId: string;
  /** The session whose start (or doctor run) reported it last. */
  sessionId: string;
  sessionKey: string | null;
  client: string | null;
  changes: { file: string; change: string }[];
  reportedAt: string;
}

/** GET /api/console/repos/:owner/:name: everything the repository's live pages show, in one read. */
export interface Overview {
  repo: { name: string; goal: string; createdAt: string };
  serverTime: string;
  work: Work[];
  decisions: DecisionView[];
  commands: CommandView[];
  sessions: SessionView[];
  tokens: TokenView[];
  pairings: PairingView[];
  /** Checkouts whose guard wiring is modified, newest report first. */
  wiring: WiringAlarmView[];
  /** Shell writes caught in the last day, newest first (at most 20). */
  shellWrites: ShellWriteView[];
}

/** Answers of the console's state changes. */
export interface ControlResult {
  id: string;
  control: Control;
  reason: string | null;
}
export interface GoalResult {
  repo: string;
  goal: string;
}
export interface RevokeResult {
  id: string;
  revokedAt: string | null;
}

// ---- scopes (contention) ------------------------------------------------------

/** An intent as the Scopes view names it: a holder or a waiter. */
export interface ScopeParty {
  intentId: string;
  sessionId: string;
  person: string;
  client: string | null;
  model: string | null;
  objective: string | null;
}

/** One waiter in the claim queue, in queue order. */
export interface ScopeWaiterView extends ScopeParty {
  paths: string[];
  /** 1 is next. */
  place: number;
  since: string;
}

/** An open release request: `from` asks the holder to let go of `paths`. The note is untrusted text. */
export interface ReleaseRequestView {
  id: string;
  from: ScopeParty;
  paths: string[];
  note: string;
  at: string;
}

/** One live claim with its holder, the queue behind it, and the release requests asked of it. */
export interface ScopeClaimView extends ScopeParty {
  paths: string[];
  since: string;
  guard: Guard;
  /** The holder's lease has lapsed (silent or expired): the claim frees at expiry. */
  lapsed: boolean;
  waiters: ScopeWaiterView[];
  releaseRequests: ReleaseRequestView[];
}

/** A claim freed without its holder asking (lease expiry, a person's release, a cancel), recently. */
export interface LostClaimView extends ScopeParty {
  paths: string[];
  reason: string;
  at: string;
}

/** GET /api/console/repos/:owner/:name/scopes: the Scopes view, in one read. */
export interface ScopesView {
  repo: string;
  serverTime: string;
  claims: ScopeClaimView[];
  /** Every waiter, in queue order (also listed under each claim it waits for). */
  queue: ScopeWaiterView[];
  lost: LostClaimView[];
}

export interface ScopeReleaseResult {
  intentId: string;
  released: string[];
  /** Waiters granted by this release. */
  granted: string[];
}

// ---- metrics -------------------------------------------------------------------

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
}

// ---- recap ---------------------------------------------------------------------

export interface RecapItem {
  intentId: string;
  person: string;
  client: string | null;
  model: string | null;
  objective: string;
  state: string;
  outputs: string[];
  paths: string[];
  summary: string | null;
  /** Commits made through Cohent for this intent, oldest first. */
  commits: CommitView[];
  at: string;
}
export type BlockedItem = RecapItem & { blockers: string[] };
export type WaitingItem = RecapItem & {
  dependsOn: string[];
  waitingOn: { person: string; objective: string }[];
};

/** A deterministic account of a time window, built only from intents, checkpoints and decisions. */
export interface Recap {
  repo: string;
  since: string;
  until: string;
  completed: RecapItem[];
  blocked: BlockedItem[];
  waiting: WaitingItem[];
  inProgress: RecapItem[];
  abandoned: RecapItem[];
  people: string[];
  humanCommands: number;
}

/** GET /api/console/repos/:owner/:name/recap */
export interface RecapResponse {
  recap: Recap;
  /** The text form `cohent recap` prints. */
  text: string;
}

// ---- live stream ---------------------------------------------------------------

/** The data of a LIVE_EVENT: an opaque version that moves whenever anything the console shows changed. */
export interface LiveChange {
  version: string;
  /** On a change-log entry (whose SSE id is the resume point, sent back as Last-Event-ID): its repository, sequence number and kind. */
  repo?: string;
  seq?: number;
  kind?: string;
}
