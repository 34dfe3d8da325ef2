import type { Logger } from "pino";
import type { LeaseConfig } from "../core/lease.js";
import type { Control } from "@cohent/protocol";
import type { Repo, Store } from "../store/index.js";

/** What every operation needs. Tests inject a real store and a controllable clock. */
export interface Deps {
  store: Store;
  clock: () => Date;
  lease: LeaseConfig;
  log: Logger;
}

/** An authenticated agent call: the repository, the token's person, the session. */
export interface Caller {
  repo: Pick<Repo, "id" | "name" | "goal" | "caseInsensitive">;
  token: { id: string; person: string; client: string | null };
  session: {
    id: string;
    key: string;
    client: string | null;
    model: string | null;
    control: Control;
    controlReason: string | null;
    lastSeenAt: Date;
    /** The lease epoch (store/sessions fence). */
    epoch: number;
  };
  /** The sub-agent this call is for (x-cohent-agent); its work is the session's, tagged where it is recorded. */
  agentId?: string | null;
}
