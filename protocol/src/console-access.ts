import { z } from "zod";
import { RepoName } from "./console-commands.js";

// How people and CLIs get in: a person signs in to the Control Room, and a CLI
// pairs (it asks for a credential, a person answers in the browser).

// ---- sign-in -----------------------------------------------------------------

export type SignInMode = "local" | "github";

/** GET /api/console/me */
export type ConsoleMe =
  | { signedIn: true; mode: SignInMode; person: string; provider: SignInMode; csrfToken: string }
  | { signedIn: false; mode: SignInMode };

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
