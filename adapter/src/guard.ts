/**
 * The PreToolUse guard table of the spec, as data. Rows are in the spec's
 * order; the first row whose condition holds and that blocks the tool's
 * kind decides. Shell tools are held only to the first three rows: Cohent
 * cannot see what a shell command will write, and scope is itself
 * declared through a shell command.
 */

export type ToolKind = "edit" | "shell";
export type Condition = "stopped" | "unreachable" | "unconfigured" | "intentNotReady" | "scopeConflict" | "outsideScope";
export type Verdict = "block" | "allow";

export const GUARD_TABLE: readonly { condition: Condition; spec: string; edit: Verdict; shell: Verdict }[] = [
  { condition: "stopped", spec: "Paused or cancelled from the control center", edit: "block", shell: "block" },
  { condition: "unreachable", spec: "Paired but the control plane is unreachable", edit: "block", shell: "block" },
  { condition: "unconfigured", spec: "Configuration unusable", edit: "block", shell: "block" },
  { condition: "intentNotReady", spec: "No prompt or semantic intent announced", edit: "block", shell: "allow" },
  { condition: "scopeConflict", spec: "Scope overlaps an active peer scope", edit: "block", shell: "allow" },
  { condition: "outsideScope", spec: "The write targets a path outside the declared scope", edit: "block", shell: "allow" },
];

export type GuardDecision = { permission: "allow" } | { permission: "deny"; condition: Condition; reason: string };

/** The conditions worth probing for a kind, in table order: only rows that could block it. */
export function conditionsFor(kind: ToolKind): Condition[] {
  return GUARD_TABLE.filter((row) => row[kind] === "block").map((row) => row.condition);
}

/**
 * Reads the table. `probe` answers whether a condition holds, with the
 * reason to show the agent (a string) or null. Probes run lazily in table
 * order, so a network probe never runs once an earlier row has decided.
 */
export async function decide(kind: ToolKind, probe: (c: Condition) => Promise<string | null> | string | null): Promise<GuardDecision> {
  for (const row of GUARD_TABLE) {
    if (row[kind] !== "block") continue;
    const reason = await probe(row.condition);
    if (reason !== null) return { permission: "deny", condition: row.condition, reason: reason.trim() || row.spec };
  }
  return { permission: "allow" };
}

/** Edit tools: Cohent can read their targets. */
export const EDIT_TOOLS: ReadonlySet<string> = new Set(["Write", "Edit", "NotebookEdit", "MultiEdit", "apply_patch"]);

/** The opaque set: tools whose effects Cohent cannot see; held to the kill switch only. */
export const OPAQUE_TOOLS: ReadonlySet<string> = new Set([
  "Bash", "BashOutput", "KillShell", "PowerShell", "shell", "exec_command", "unified_exec", "write_stdin",
  "run_terminal_cmd", "terminal", "Monitor", "TaskStop",
]);

/**
 * Cohent's own MCP tools (a server entry named "cohent", as `init` writes it)
 * are exempt like the adapter's own command, so that the protocol cannot
 * lock itself out: they only talk to the service, which refuses a paused
 * session's claims itself.
 */
export const OWN_MCP_PREFIX = "mcp__cohent__";

/** Edit, shell (opaque), or neither (reads, Cohent's own MCP tools, tools the table does not cover). */
export function toolKind(toolName: string): ToolKind | null {
  if (EDIT_TOOLS.has(toolName)) return "edit";
  if (toolName.startsWith(OWN_MCP_PREFIX)) return null;
  if (OPAQUE_TOOLS.has(toolName) || toolName.startsWith("mcp__")) return "shell";
  return null;
}
