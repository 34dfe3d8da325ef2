import { realpathSync } from "node:fs";
import { isAbsolute, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { ClientError } from "../envelope.js";
import { topLevel } from "../git.js";
import { liveSessions, readRuntime } from "../runtime.js";

/**
 * Which repository and which session a machine transport acts for. One MCP
 * process is bound for its lifetime to one real, normalized Git top-level;
 * a request may name it again but never switch it; a client's filesystem
 * roots must contain it.
 */

/** The bound repository for `dir` (resolved against `cwd`). */
export function bindRepository(dir: string, cwd = process.cwd()): string {
  return topLevel(isAbsolute(dir) ? dir : resolve(cwd, dir));
}

/** A request's `repo` must normalize to the bound top-level. */
export function checkRepo(bound: string, requested: string | undefined, cwd = process.cwd()): void {
  if (requested === undefined) return;
  let top: string;
  try {
    top = bindRepository(requested, cwd);
  } catch {
    throw new ClientError("REPOSITORY_MISMATCH", `repo ${JSON.stringify(requested.slice(0, 200))} is not this server's repository (${bound}); omit repo, or start another server for that repository.`);
  }
  if (top !== bound) throw new ClientError("REPOSITORY_MISMATCH", `repo ${JSON.stringify(requested.slice(0, 200))} is the repository ${top}, not this server's ${bound}; omit repo, or start another server for that repository.`);
}

function realOrResolved(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}

/** Whether `repo` lies inside one of the client's file roots (other URI schemes contain nothing). */
export function insideRoots(repo: string, roots: readonly { uri: string }[]): boolean {
  return roots.some(({ uri }) => {
    if (!uri.startsWith("file:")) return false;
    let dir: string;
    try {
      dir = realOrResolved(fileURLToPath(uri));
    } catch {
      return false;
    }
    return repo === dir || repo.startsWith(dir.endsWith(sep) ? dir : dir + sep);
  });
}

const norm = (s: string | null | undefined) => (s ?? "").toLowerCase().replace(/[^a-z0-9]/g, "");

/** "Claude Code" (recorded by the hook) and "claude-code" (MCP clientInfo) are one client; "Codex" and "codex-mcp-client" too. */
export function sameClient(recorded: string | null | undefined, announced: string | null | undefined): boolean {
  const a = norm(recorded);
  const b = norm(announced);
  return a.length > 0 && b.length > 0 && (a.includes(b) || b.includes(a));
}

/** Machine sessions of our own transports, never a hook's. */
const OWN = /^(mcp|cli|agent)-/;

/**
 * The session an MCP process acts for, so that its tools and the client's
 * hooks share one intent: COHENT_SESSION; else the hook session it bound
 * before, while it lives; else the one live hook session of this checkout
 * from the same client (or of unknown client); else its own
 * `mcp-<client>-<pid>` session.
 */
export function resolveMcpSession(
  root: string,
  client: string | null,
  state: { bound: string | null; own: string },
  env: NodeJS.ProcessEnv = process.env,
): { sessionId: string; warning?: string } {
  const named = env.COHENT_SESSION?.trim();
  if (named) return { sessionId: named };
  const rt = readRuntime(root);
  const live = liveSessions(rt);
  if (state.bound && live.includes(state.bound)) return { sessionId: state.bound };
  const candidates = live.filter((id) => !OWN.test(id) && (rt.sessions[id]!.client === null || sameClient(rt.sessions[id]!.client, client)));
  if (candidates.length === 1) {
    state.bound = candidates[0]!;
    return { sessionId: state.bound };
  }
  state.bound = null;
  if (candidates.length > 1) {
    return {
      sessionId: state.own,
      warning: `${candidates.length} hook sessions of this client share this checkout; this server acts as its own session ${state.own}. Set COHENT_SESSION in the server's environment to join one of: ${candidates.join(", ")}.`,
    };
  }
  return { sessionId: state.own };
}

export function ownSessionId(client: string | null, pid = process.pid): string {
  const slug = (client ?? "client").toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 40) || "client";
  return `mcp-${slug}-${pid}`;
}
