import type { Logger } from "pino";
import type { Db } from "../store/db.js";
import type { LeaseConfig } from "../lease.js";

/** What every operation needs. Tests inject a real store and a controllable clock. */
export interface Deps {
  db: Db;
  clock: () => Date;
  lease: LeaseConfig;
  log: Logger;
}

/** An authenticated agent call: the repository, the token's person, the session. */
export interface Caller {
  repo: { id: string; name: string; goal: string; caseInsensitive: boolean };
  token: { id: string; person: string; client: string | null };
  session: {
    id: string;
    key: string;
    client: string | null;
    model: string | null;
    control: "active" | "paused" | "cancelled";
    controlReason: string | null;
    lastSeenAt: Date;
  };
}
