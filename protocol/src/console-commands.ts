import { z } from "zod";
import { BOUNDS } from "./bounds.js";
import { CONTROL_KINDS } from "./console-constants.js";
import type { Control } from "./packets.js";

// What a person tells the service from the Control Room: the names it checks,
// the commands' bodies (zod, validated by the backend) and their answers.

export const RepoName = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,100}\/[A-Za-z0-9_.-]{1,100}$/, "repositories are named owner/name");
export const Goal = z.string().max(2_000);
export const Person = z.string().trim().min(1).max(64);

/**
 * A company's set-up in one file (`cohent repo add --file`, `cohent token issue --file`): one line
 * each, applied in one transaction or not at all, at most SETUP_LINES lines.
 */
export const SETUP_LINES = 100_000;
/** A line of `cohent repo add --file`: a JSON object, or the bare name. */
export const RepoSetupLine = z.strictObject({
  name: RepoName,
  goal: Goal.optional(),
  caseInsensitive: z.boolean().optional(),
});
export type RepoSetupLine = z.infer<typeof RepoSetupLine>;
/** A line of `cohent token issue --file`: one agent token for a person on a registered repository. */
export const TokenSetupLine = z.strictObject({
  repo: RepoName,
  person: Person,
  client: z.string().trim().min(1).max(BOUNDS.identityChars).optional(),
});
export type TokenSetupLine = z.infer<typeof TokenSetupLine>;

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

/** A human command as recorded: a control of the session, a person's release of one of its claims, or a restore request. */
export type CommandKind = ControlKind | "release" | "restore";

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
