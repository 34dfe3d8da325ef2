import type { EnforcementView } from "./console-enforcement.js";
import type { Action, Control, Guard } from "./packets.js";

// One open work intent as the live page shows it, with what names it: its
// peers (Party), its overlaps and collisions, its sub-agents and commits.

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
