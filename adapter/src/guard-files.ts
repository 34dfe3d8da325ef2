import { mcpEntries } from "./mcp-setup.js";

/**
 * The guard's own files: what `cohent init` writes and wires. An agent that
 * edits them can switch the guard off for every agent in the checkout (a
 * hook entry removed, the adapter replaced), so they are not the agents' to
 * change: a person changes them with `cohent init`. One table, read by the
 * edit and shell guards and by the wiring fingerprint.
 *
 * - `whole`: the file (or, ending in "/", every file below the folder) is
 *   Cohent's, or holds Cohent's hook or MCP entries among other settings.
 * - `section`: an instruction file in which init manages one marked section.
 */
export interface GuardFile {
  path: string;
  kind: "whole" | "section";
}

export const GUARD_FILES: readonly GuardFile[] = [
  { path: ".cohent/", kind: "whole" },
  { path: ".codex/hooks.json", kind: "whole" },
  { path: ".claude/settings.json", kind: "whole" },
  // Not written by init, but Claude Code reads hooks (and `disableAllHooks`) from it too.
  { path: ".claude/settings.local.json", kind: "whole" },
  { path: ".cursor/rules/cohent.mdc", kind: "whole" },
  ...[...new Set(mcpEntries("/").map((e) => e.file))].map((path) => ({ path, kind: "whole" as const })),
  { path: "AGENTS.md", kind: "section" },
  { path: ".github/copilot-instructions.md", kind: "section" },
];
