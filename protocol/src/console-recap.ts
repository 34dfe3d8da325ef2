import type { CommitView } from "./console-work.js";

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
