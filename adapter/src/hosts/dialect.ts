import { isAbsolute, resolve } from "node:path";
import type { Host } from "@cohent/protocol/host-names";
import type { Wiring } from "@cohent/protocol/hosts";
import type { HookPayload } from "../guard/tools.js";

/**
 * A host's dialect: how one client's hook payload reads as the guard's own
 * (Claude-shaped) call, and how an answer is said back in that client's
 * words. Pure: the readers and renderers take the payload and the
 * environment, and touch nothing else. What each client sends and honours
 * is measured (test/clients/MORE-CLIENTS-MEASURED.md); Cursor's is
 * documented only.
 */

/** The events the hook acts on, in Claude Code's names (hook.ts HANDLERS). */
export type HookEvent =
  "SessionStart" | "UserPromptSubmit" | "PreToolUse" | "PostToolUse" | "Stop" | "SubagentStop" | "SessionEnd";

/** One payload read: the call in the guard's terms, or null for an event the hook does not act on. */
export interface Reading {
  /** The payload in Claude Code's shape, with the tool named as the guard's tables name it. */
  p: HookPayload;
  /** A tool of this host that no table of its dialect knows: refused, named in the reason. */
  unknownTool?: string;
  /** A sub-agent's session of this host's own (OpenCode) begins: the hook records its parent. */
  childOf?: string;
  /** This host's version, when the payload says it (Cursor's cursor_version, OpenCode's session info). */
  version?: string | null;
}

export type Env = Readonly<Record<string, string | undefined>>;

/** The hook's output for one answer: what main.ts writes and exits with. */
export interface Out {
  stdout?: string;
  stderr?: string;
  exitCode: number;
}

export interface Dialect {
  readonly host: Host;
  /** A name for reasons and logs: "Copilot CLI (through .claude/settings.json)". */
  readonly label: string;
  read(raw: Record<string, unknown>, env: Env): Reading | null;
  /** The refusal of a tool call, with the reason where the model reads it. */
  deny(reason: string): Out;
  /** The stdout of an allowed tool call: an explicit allow where silence would refuse (Cursor's failClosed, OpenCode's plugin). */
  allow(): string | undefined;
  /** Context handed to the model at this event, or undefined where the host reads none (the packet then waits). */
  context(event: HookEvent, text: string): string | undefined;
  /**
   * A PostToolUse answer that puts a problem with the call that just ran in
   * front of the model at once (Claude Code's and Codex's `decision: "block"`);
   * absent where the host has none (the context, else the next refusal, carries it).
   */
  caught?(reason: string): string;
  /** The host's version from its environment (Copilot sets COPILOT_CLI_BINARY_VERSION). */
  version(env: Env): string | null;
}

/** How the call reached the hook: the dialect, and the wiring it came through. */
export interface Detected {
  dialect: Dialect;
  wiring: Wiring;
  /** Copilot CLI runs both its own wiring and Claude's: this Claude entry only guards, the native one does the rest. */
  guardOnly: boolean;
}

// ---- helpers the dialects share ----

export const str = (v: unknown): string | undefined => (typeof v === "string" && v ? v : undefined);
export const obj = (v: unknown): Record<string, unknown> =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** A tool as the guard's tables name it: the canonical name and input (tools.ts classify reads these). */
export interface Mapped {
  name: string;
  input: Record<string, unknown>;
  /** The directory a shell tool's input names for the call to run in (Gemini's `dir_path`, OpenCode's `workdir`). */
  dir?: unknown;
}

/**
 * Where a call runs: the directory its tool names, resolved against the
 * payload's cwd as the client resolves it, else the payload's cwd. Codex
 * does this itself (its hook's `cwd` is the shell call's `workdir` joined
 * to the session's), so every dialect hands the guard the same thing: the
 * call's own directory, against which its paths are read.
 */
export function runsIn(cwd: string | undefined, dir: unknown): string | undefined {
  const d = str(dir);
  if (!d) return cwd;
  if (isAbsolute(d)) return resolve(d);
  // A relative directory with nothing to resolve it against: the hook's own directory stands (hook.ts).
  return cwd ? resolve(cwd, d) : cwd;
}

/** The file a tool input names under one of these keys, as Claude's `file_path`. */
export function fileInput(input: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  for (const k of keys) {
    const v = str(input[k]);
    if (v) return { file_path: v };
  }
  return {};
}

/** A tool that only reads (or talks to the client itself): the guard lets it through with no decision. */
export const READ: Mapped = { name: "Read", input: {} };

/**
 * A read tool that names its file: a read all the same to the guard, with
 * the path kept as Claude's `file_path`, so that the stale-write check
 * records what the session read (read-targets.ts).
 */
export const readOf = (input: Record<string, unknown>, keys: readonly string[]): Mapped => ({
  name: "Read",
  input: fileInput(input, keys),
});

/** A host's MCP tool as Claude names one, so that the opaque rule and Cohent's own-server exemption apply alike. */
export const mcpTool = (server: string, tool: string, input: Record<string, unknown>): Mapped => ({
  name: `mcp__${server}__${tool}`,
  input,
});

/** Claude Code's PreToolUse deny, the shape Claude, Codex and Copilot's Claude-compatible reader honour. */
export const claudeDeny = (reason: string) => ({
  hookSpecificOutput: {
    hookEventName: "PreToolUse",
    permissionDecision: "deny",
    permissionDecisionReason: reason,
  },
});

export const claudeContext = (event: string, text: string) =>
  JSON.stringify({ hookSpecificOutput: { hookEventName: event, additionalContext: text } });
