import type { PairingView } from "./console-access.js";
import type { CommandKind } from "./console-commands.js";
import type { EnforcementView } from "./console-enforcement.js";
import type { DecisionView, Work } from "./console-work.js";
import type { Control, Guard } from "./packets.js";
import type { ShellWriteView } from "./shell-writes.js";

// The repositories, and one repository's live pages: its overview, read in
// one request and read again whenever the live stream says it changed.

export interface RepoSummary {
  name: string;
  goal: string;
  openIntents: number;
  activeTokens: number;
  people: string[];
  pendingPairings: number;
  lastActivityAt: string | null;
}

/** GET /api/console/repos?q=&page=&limit=: one page of the repositories whose name holds `q`, by name. */
export interface RepoList {
  repos: RepoSummary[];
  pairings: PairingView[];
  /** The search, trimmed ("" lists every repository). */
  q: string;
  page: number;
  limit: number;
  /** Repositories that match `q` and the person may see, on every page. */
  total: number;
  /** ceil(total / limit), at least 1. */
  pages: number;
}

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
  /** Why it is paused or cancelled (a person's words, or the guard's when a call changed its files); null when active. */
  controlReason: string | null;
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

// ---- live stream ---------------------------------------------------------------

/** The data of a LIVE_EVENT: an opaque version that moves whenever anything the console shows changed. */
export interface LiveChange {
  version: string;
  /** On a change-log entry (whose SSE id is the resume point, sent back as Last-Event-ID): its repository, sequence number and kind. */
  repo?: string;
  seq?: number;
  kind?: string;
}
