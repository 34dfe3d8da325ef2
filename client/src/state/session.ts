import { CohentError } from "@cohent/protocol/codes";
import { liveSessions, readRuntime } from "./runtime.js";

/**
 * The one session-selection policy, for every transport that no hook binds
 * (the CLI commands, the JSON agent CLI, the MCP server): which session a
 * call acts for, so that it and the client's hooks share one intent.
 */

/** Machine sessions of our own transports, never a hook's. */
const OWN = /^(mcp|cli|agent)-/;

const norm = (s: string | null | undefined) => (s ?? "").toLowerCase().replace(/[^a-z0-9]/g, "");

/** "Claude Code" (recorded by the hook) and "claude-code" (MCP clientInfo) are one client; "Codex" and "codex-mcp-client" too. */
export function sameClient(
  recorded: string | null | undefined,
  announced: string | null | undefined,
): boolean {
  const a = norm(recorded);
  const b = norm(announced);
  return a.length > 0 && b.length > 0 && (a.includes(b) || b.includes(a));
}

export interface SessionPolicy {
  /** The caller's client name, when it knows one: only that client's hook sessions (or unknown ones) are candidates. */
  client?: string | null;
  /** The transport's own session, used when no hook session is live. */
  own: string;
  /** A long-lived process keeps the hook session it chose while that lives. */
  sticky?: { bound: string | null };
  /** Several candidates: a one-shot command refuses (it cannot tell which agent ran it); a server acts as its own session. */
  onAmbiguity: "refuse" | "own";
}

/**
 * COHENT_SESSION wins; then the session bound before, while it lives; then
 * the one live hook session of this checkout; else the transport's own.
 */
export function selectSession(
  root: string,
  policy: SessionPolicy,
  env: NodeJS.ProcessEnv = process.env,
): { sessionId: string; warning?: string } {
  const named = env.COHENT_SESSION?.trim();
  if (named) return { sessionId: named };
  const rt = readRuntime(root);
  const live = liveSessions(rt);
  const sticky = policy.sticky;
  if (sticky?.bound && live.includes(sticky.bound)) return { sessionId: sticky.bound };
  const candidates = live.filter(
    (id) =>
      !OWN.test(id) &&
      (!policy.client ||
        rt.sessions[id]!.client === null ||
        sameClient(rt.sessions[id]!.client, policy.client)),
  );
  if (sticky) sticky.bound = candidates.length === 1 ? candidates[0]! : null;
  if (candidates.length === 1) return { sessionId: candidates[0]! };
  if (candidates.length === 0) return { sessionId: policy.own };
  if (policy.onAmbiguity === "refuse") {
    throw new CohentError(
      "INVALID_INPUT",
      `${candidates.length} agent sessions share this checkout and no hook bound this command to one of them. Run it through the agent's shell tool (its PreToolUse hook binds it), or prefix COHENT_SESSION=<session id>: ${candidates.join(", ")}.`,
    );
  }
  return {
    sessionId: policy.own,
    warning: `${candidates.length} hook sessions of this client share this checkout; this server acts as its own session ${policy.own}. Set COHENT_SESSION in the server's environment to join one of: ${candidates.join(", ")}.`,
  };
}

/** The own session of a one-shot command: one stable manual session per user (an instruction-only agent, or a person). */
export function cliSessionId(env: NodeJS.ProcessEnv = process.env): string {
  return `cli-${(env.USER ?? env.USERNAME ?? "user").replace(/[^A-Za-z0-9._-]/g, "-")}`;
}

/** The own session of an MCP server process. */
export function mcpSessionId(client: string | null, pid = process.pid): string {
  const slug =
    (client ?? "client")
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "")
      .slice(0, 40) || "client";
  return `mcp-${slug}-${pid}`;
}
