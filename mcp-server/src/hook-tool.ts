import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ON_FAILURE_FROM, SPAWN_FREE_DIR } from "@cohent/client";

/**
 * The guard as a tool: Claude Code calls it as a PreToolUse or PostToolUse
 * hook handler of `type: "mcp_tool"` (init's wiring), and this server
 * answers through the adapter's own hook code, run in this process
 * (`HookRunner`, handed in by the adapter: this package never imports it).
 * Same decisions and reasons as the command hook, no process per call.
 *
 * Claude Code honours the handler's `"onFailure": "block"` from 2.1.332 on
 * (measured; 2.1.294 and 2.1.197 ignore it and let every failure through,
 * docs/clients.md). The wiring therefore keeps a shell-only
 * command gate beside the tool, which runs the full command hook unless
 * this server has marked the session as guarded here: the mark names the
 * session and the Claude Code process (our parent, the gate's parent too),
 * so a session resumed on another binary is not covered by a stale mark.
 * On a client that ignores onFailure, the tool answers no decision at once
 * and leaves the call to the command hook.
 */

/** The tool's name; `tools/list` does not show it (the hook calls it by name). */
export const HOOK_TOOL = "hook";

/** Runs one hook payload (JSON text) for the checkout at `root` as the `hook` command would, without its process. */
export type HookRunner = (
  payload: string,
  root: string,
  /** The client's version from MCP initialize: the hook has no other way to learn Claude Code's. */
  clientVersion: string | null,
) => Promise<{ stdout?: string; stderr?: string; exitCode: number }>;

export { ON_FAILURE_FROM };

/** Whether this client refuses a call when the handler fails: only then may the command hook stand aside. */
export function honoursOnFailure(client: { name?: string; version?: string } | undefined): boolean {
  if (client?.name !== "claude-code" || typeof client.version !== "string") return false;
  const v = /^(\d+)\.(\d+)\.(\d+)/.exec(client.version);
  if (!v) return false;
  const have = [Number(v[1]), Number(v[2]), Number(v[3])];
  for (let i = 0; i < 3; i++) if (have[i] !== ON_FAILURE_FROM[i]) return have[i]! > ON_FAILURE_FROM[i]!;
  return true;
}

/** The session ids the gate accepts: anything else is never marked (and the gate hands the call over). */
const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** Fields of the hook payload the wiring passes as JSON text (Claude Code has no placeholder for a whole object). */
const JSON_FIELDS = new Set(["tool_input", "tool_response"]);

/** The hook payload rebuilt from the tool's arguments: the fields the wiring lists, empty ones left out. */
export function payloadOf(args: Record<string, unknown>): Record<string, unknown> {
  const p: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) {
    if (v === "" || v === undefined || v === null) continue;
    if (JSON_FIELDS.has(k) && typeof v === "string") {
      try {
        p[k] = JSON.parse(v);
      } catch {
        p[k] = v;
      }
    } else p[k] = v;
  }
  if (typeof p.event === "string" && p.hook_event_name === undefined) p.hook_event_name = p.event;
  delete p.event;
  return p;
}

const text = (t: string): CallToolResult => ({ content: [{ type: "text", text: t }] });

/** Claude Code's refusal of a tool call, as the command hook's dialect writes it. */
const denyJson = (reason: string) =>
  JSON.stringify({
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: reason,
    },
  });

export interface HookTool {
  call(args: Record<string, unknown>): Promise<CallToolResult>;
  /** Removes this process's marks: the next calls of its sessions go to the command hook again. */
  close(): void;
}

/**
 * The tool for one server process. `client()` is the connected client's
 * name and version (MCP initialize); `root` the bound checkout.
 */
export function hookTool(o: {
  root: string;
  run: HookRunner;
  client: () => { name?: string; version?: string } | undefined;
  parentPid?: number;
}): HookTool {
  const parent = o.parentPid ?? process.ppid;
  const dir = join(o.root, SPAWN_FREE_DIR);
  const marked = new Set<string>();

  /** Best effort: a mark not written leaves the gate running the command hook, which is safe. */
  const mark = (session: unknown) => {
    if (typeof session !== "string" || !SESSION_ID.test(session) || marked.has(session)) return;
    try {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `${session}.${parent}`), `${process.pid}\n`);
      marked.add(session);
    } catch {
      /* read-only checkout: every call keeps its command hook too */
    }
  };

  return {
    async call(args) {
      const payload = payloadOf(args);
      const event = payload.hook_event_name;
      // A client that ignores onFailure: the command hook decides; answering here would only run the guard twice.
      const client = o.client();
      if (!honoursOnFailure(client)) return text("{}");
      try {
        const r = await o.run(JSON.stringify(payload), o.root, client?.version ?? null);
        // Marked after the first answer: that call ran here and, through the gate, in the command hook too.
        mark(payload.session_id);
        if (r.stdout?.trim()) return text(r.stdout.trim());
        if (r.exitCode !== 0 && event === "PreToolUse")
          return text(denyJson(r.stderr?.trim() || "Cohent refused this tool call."));
        return text("{}");
      } catch (err) {
        // Never a bare failure: a refusal names what went wrong (onFailure would refuse too, without the why).
        const why = err instanceof Error ? err.message.split("\n")[0]!.slice(0, 300) : String(err);
        return event === "PreToolUse"
          ? text(denyJson(`Cohent: the guard failed (${why}), so this tool call is refused.`))
          : text("{}");
      }
    },
    close() {
      for (const session of marked) rmSync(join(dir, `${session}.${parent}`), { force: true });
      marked.clear();
      // Marks of Claude Code processes gone: a pid reused by another binary must not find one.
      try {
        for (const name of readdirSync(dir)) {
          const pid = Number(name.slice(name.lastIndexOf(".") + 1));
          if (pid > 0 && !alive(pid)) rmSync(join(dir, name), { force: true });
        }
      } catch {
        /* no folder yet */
      }
    },
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
