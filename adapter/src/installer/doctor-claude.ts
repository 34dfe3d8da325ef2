import { readdirSync } from "node:fs";
import { join } from "node:path";
import { SPAWN_FREE_DIR, liveSessions, type Runtime } from "@cohent/client";

/**
 * doctor's line on Claude Code's live sessions: which wiring guards each
 * (claude-wiring.ts). A session the MCP server marked is guarded there (an
 * mcp_tool handler Claude Code refuses on when it fails, no process per
 * call); any other is guarded by the command hook the gate runs: Claude
 * Code older than 2.1.332 (which ignores onFailure), its MCP server not
 * connected or not approved, or no tool call yet.
 */

/** The marks on disk, `<session>.<pid>` (the gate reads them; nothing else here needs the pid). */
export function spawnFreeMarks(root: string): string[] {
  try {
    return readdirSync(join(root, SPAWN_FREE_DIR));
  } catch {
    return [];
  }
}

export function claudeSessionsCheck(
  rt: Runtime,
  marks: readonly string[],
  now: number,
): { name: string; status: "ok"; detail: string } | null {
  const claude = liveSessions(rt, now).filter((id) => rt.sessions[id]?.client === "Claude Code");
  if (claude.length === 0) return null;
  const marked = new Set(marks.map((m) => m.slice(0, m.lastIndexOf("."))));
  const line = (id: string) => {
    const v = rt.sessions[id]?.hostVersion;
    return marked.has(id)
      ? `${id}${v ? ` (${v})` : ""}: in Cohent's MCP server, no process per tool call`
      : `${id}${v ? ` (${v})` : ""}: by the command hook (Claude Code older than 2.1.332 ignores onFailure, or its MCP server is not connected yet)`;
  };
  const shown = claude.slice(0, 5).map(line);
  const more = claude.length > 5 ? `; and ${claude.length - 5} more` : "";
  return { name: "claude sessions", status: "ok", detail: `${shown.join("; ")}${more}.` };
}
