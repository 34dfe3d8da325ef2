import { z } from "zod";
import { BOUNDS } from "./bounds.js";
import { IntentRecord } from "./intent.js";
import type { Operation } from "./operations.js";
import { CheckpointStatus, PathList } from "./requests.js";

/**
 * The inputs of the client-side operations (operations.ts), once: the agent
 * CLI and the MCP tools validate a request with these (strict at every level:
 * an unknown field is INVALID_INPUT), `agent schema` and tools/list publish
 * the JSON Schemas generated from them, and the adapter's operation layer
 * takes their types.
 */

/** Optional everywhere; when given it must normalize to the repository the process is bound to. */
const Repo = z.string().optional();
const Version = z.literal(1).optional();

export const PublishInput = z.strictObject({
  version: Version,
  repo: Repo,
  prompt: z.string().min(1).max(BOUNDS.promptChars).describe("The user's request, as given."),
  paths: PathList.optional().describe("Paths likely touched (hints)."),
});

export const IntentInput = z.strictObject({
  version: Version,
  repo: Repo,
  intent: IntentRecord,
});

export const ScopeInput = z.strictObject({
  version: Version,
  repo: Repo,
  paths: PathList.describe("Paths or globs; replaces your claim; [] releases it."),
  queue: z.boolean().optional().describe("On a conflict, queue; a later packet says granted."),
  /** Agent CLI only (MCP leaves it out): a tool call should not block for minutes. */
  wait: z
    .number()
    .int()
    .min(1)
    .max(BOUNDS.scopeWaitSeconds)
    .optional()
    .describe("Queue, then block up to this many seconds until granted."),
});

export const ReleaseInput = z.strictObject({
  version: Version,
  repo: Repo,
  paths: PathList.min(1),
  note: z.string().max(BOUNDS.releaseNoteChars).optional(),
});

export const CheckpointSource = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("staged") }),
  z.strictObject({ kind: z.literal("paths"), paths: PathList }),
]);

export const CheckpointInput = z.strictObject({
  version: Version,
  repo: Repo,
  status: CheckpointStatus,
  summary: z.string().max(BOUNDS.summaryChars).optional(),
  source: CheckpointSource.optional().describe(
    "staged: paths from git diff --cached; paths: your list (unverified).",
  ),
});

export const ContextInput = z.strictObject({
  version: Version,
  repo: Repo,
});

export const CommitInput = z.strictObject({
  version: Version,
  repo: Repo,
  // Its length is commit's to bound (commit.ts), not the listing's.
  message: z.string().trim().min(1),
  /** Unclaimed changed paths to include too; the scope's own changes always are. */
  paths: PathList.optional(),
});

export const OPERATION_INPUTS = {
  publish: PublishInput,
  intent: IntentInput,
  scope: ScopeInput,
  checkpoint: CheckpointInput,
  context: ContextInput,
  commit: CommitInput,
  "request-release": ReleaseInput,
} as const satisfies Record<Operation, z.ZodType>;

export type OperationInputs = { [K in Operation]: z.infer<(typeof OPERATION_INPUTS)[K]> };
