import { noteWrote } from "../held/edits.js";
import { recordRead } from "./read-record.js";
import { readTargets } from "./read-targets.js";
import { classify } from "./tools.js";

/**
 * The stale-write check's recording after a call (PostToolUse, every
 * dialect): a read tool's files become what the session last read; an
 * edit's (or a patch's) targets too, since a session's own write is its
 * latest read, and the journal notes who left which bytes (held/edits.ts),
 * which is how a peer's later check names this session. Never throws.
 */

export interface Writer {
  id: string;
  state: { intentId?: string | null; client?: string | null };
}

/** Records what the call read or wrote. `cwd`: where its relative paths are read from. */
export function recordAfterCall(
  root: string,
  s: Writer,
  toolName: string,
  input: Record<string, unknown> | undefined,
  cwd: string,
  at = Date.now(),
): void {
  try {
    const call = classify(toolName, input ?? {});
    if (call.kind === "edit") {
      if (call.targets?.length) recordOwnWrites(root, s, call.targets, "edit", { cwd, at });
      return;
    }
    const reads = readTargets(toolName, input);
    if (reads.length) recordRead(root, s.id, reads, "read", { cwd, at });
  } catch {
    /* a lost record only spares a stale write its refusal */
  }
}

/** A session's own writes: its latest reads, and the journal's word that it left these bytes. */
export function recordOwnWrites(
  root: string,
  s: Writer,
  paths: readonly string[],
  how: "edit" | "shell",
  opts: { cwd?: string; at?: number } = {},
): void {
  const at = opts.at ?? Date.now();
  const wrote = recordRead(root, s.id, paths, "write", { ...opts, at });
  if (wrote.length)
    noteWrote(
      root,
      s.id,
      wrote,
      { intentId: s.state.intentId ?? null, client: s.state.client ?? null, how },
      at,
    );
}
