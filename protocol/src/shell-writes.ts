import { z } from "zod";
import type { Party } from "./console.js";

/**
 * Shell writes caught after the call (`guard`, kind `shell-write`): a shell
 * (or opaque MCP) call changed files that peers hold, which their own
 * guarded edits do not explain. The adapter told its model to undo it, kept
 * the bytes from before when it could, and reported it; the server told each
 * peer (a `shell-write` notice) and keeps what the Control Room shows.
 */

/** What a shell-write catch keeps beside its paths and peers (GuardCatch.detail, JSON): read back with this schema. */
export const ShellWriteDetail = z.object({
  /** The command, redacted and bounded (untrusted text); null when the report had none. */
  command: z.string().nullable(),
  restorable: z.boolean(),
  /** Noticed between calls: `person`, `client` and `model` are the session that noticed, not the writer (unknown). */
  between: z.boolean().optional(),
  /** The writer as its session was when it reported. */
  person: z.string(),
  client: z.string().nullable(),
  model: z.string().nullable(),
  /** Each peer told, with its changed paths. */
  peers: z.array(z.object({ intentId: z.string(), paths: z.array(z.string()) })),
  /** A person asked the writer's checkout, from the Control Room, to put the bytes back: when, and who. */
  restoreRequestedAt: z.string().optional(),
  restoreRequestedBy: z.string().optional(),
});
export type ShellWriteDetail = z.infer<typeof ShellWriteDetail>;

/** What a guard-files catch (`guard`, kind `guard-files`: a call changed the guard's own files) keeps beside its paths. */
export const GuardFilesDetail = z.object({
  /** The command, redacted and bounded (untrusted text); null when the report had none. */
  command: z.string().nullable(),
  /** Whether the adapter put every file back. */
  undone: z.boolean(),
  /** Each file as reported (redacted), with what changed when the adapter said. */
  files: z.array(z.object({ path: z.string(), change: z.string().nullable() })),
  person: z.string(),
  client: z.string().nullable(),
  model: z.string().nullable(),
});
export type GuardFilesDetail = z.infer<typeof GuardFilesDetail>;

/** One caught shell write, as the live page lists it. The command is untrusted text. */
export interface ShellWriteView {
  id: string;
  at: string;
  /** Who wrote: its intent (intentId "" when it had none yet), person, client and model; with `between`, who noticed. */
  writer: Party;
  /** Noticed between calls: no call explains the change (a background job, a process outside any agent), the writer is unknown. */
  between: boolean;
  /** The writer's sub-agent, when a sub-agent made the call. */
  agentId: string | null;
  command: string | null;
  /** Every changed path a peer holds. */
  paths: string[];
  /** Each peer whose claim it changed (and that was still open), with those of its paths. */
  peers: (Party & { paths: string[] })[];
  /** Whether the writer's checkout kept the bytes from before. */
  restorable: boolean;
  /** The exact commands that put them back, run in the writer's checkout; none when not restorable. */
  restore: string[];
  /** A person's request that the writer's adapter put them back at its next call (ShellWriteRestoreResult). */
  restoreRequested: { at: string; by: string } | null;
}

/**
 * POST /api/console/repos/:owner/:name/shell-writes/:id/restore (no body): a person asks the writer's
 * checkout to put a restorable catch's bytes back. The writer's intent gets a `restore-requested` notice,
 * which its adapter carries out when the packet arrives (its next tool call). A human command. Asked
 * again, it answers the first request (`already`) and tells nobody anything new.
 */
export interface ShellWriteRestoreResult {
  id: string;
  /** The intent told: the catch's, or its session's open one when that one had closed (`already`: the catch's). */
  intentId: string;
  paths: string[];
  requestedAt: string;
  requestedBy: string;
  already: boolean;
}
