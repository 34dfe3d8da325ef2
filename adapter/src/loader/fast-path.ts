import { detect, hostFlag } from "../hosts/detect.js";
import { agentIdOf, isSpawn } from "../guard/subagents.js";
import { toolKind } from "../guard/tools.js";
import { usageTarget } from "@cohent/client";
import type { Out } from "../hosts/dialect.js";

/** What the loader reads off a hook payload before the bundle loads. */
export interface HookPreview {
  /**
   * A call that hook.ts answers the same way whatever the session: a
   * PreToolUse of a tool that is neither an edit nor a shell (Read, Grep,
   * Cohent's own MCP tools) by the same tables (tools.ts, hosts/), or an
   * event of the host that the hook does not act on. A spawn (Agent, Task)
   * is not one: the hook counts it so that a main Stop waits for the
   * sub-agent. An unknown tool is not one either: the bundle refuses it.
   * The usage ledger, when on, records every hook call, so then the bundle
   * runs. The session's liveness is kept by the PostToolUse call that
   * follows every tool call.
   */
  needsNoDecision: boolean;
  /** What to print then: the host's explicit allow where silence would refuse (Cursor, OpenCode), else nothing. */
  stdout?: string;
  /**
   * Which code the call will run: the event, and for a tool event the tool's
   * kind. Each path keeps a V8 code cache of its own (code-cache.ts), holding
   * the functions its first run compiled: an edit's decision compiled from a
   * cache that a prompt's run wrote costs ~3 ms more (bench/adapter-coldstart.ts).
   */
  path: string;
  /**
   * The answer when the adapter's code cannot load (loader.ts): a tool call
   * refused in the host's dialect, any other event let be with the reason on
   * stderr, as hook.ts answers its own failures; a payload of no host Cohent
   * knows refused by exit 2.
   */
  unloadable(reason: string): Out;
}

const EVENT = /^[A-Za-z]{1,32}$/;
const refused = (reason: string): Out => ({ stderr: reason, exitCode: 2 });
const OTHER: HookPreview = { needsNoDecision: false, path: "hook-other", unloadable: refused };

export function previewHook(stdin: string, argv: readonly string[] = []): HookPreview {
  try {
    const raw = JSON.parse(stdin.charCodeAt(0) === 0xfeff ? stdin.slice(1) : stdin) as Record<
      string,
      unknown
    >;
    if (!raw || typeof raw !== "object" || Array.isArray(raw)) return OTHER;
    const found = detect(hostFlag(argv), raw, process.env);
    if (!found) return OTHER; // a host Cohent does not know: the bundle refuses with its reason
    const r = found.dialect.read(raw, process.env);
    if (!r)
      return {
        needsNoDecision: !usageTarget().file,
        path: "hook-other",
        unloadable: (reason) => ({ stderr: reason, exitCode: 0 }),
      };
    const p = r.p;
    const event =
      typeof p.hook_event_name === "string" && EVENT.test(p.hook_event_name) ? p.hook_event_name : "other";
    const tool = typeof p.tool_name === "string" ? p.tool_name : null;
    const kind = tool === null ? null : toolKind(tool);
    const path = `hook-${event}${event === "PreToolUse" || event === "PostToolUse" ? `-${kind ?? "other"}` : ""}`;
    const needsNoDecision =
      event === "PreToolUse" &&
      r.unknownTool === undefined &&
      tool !== null &&
      kind === null &&
      !isSpawn(tool, agentIdOf(p)) &&
      !usageTarget().file;
    const allow = needsNoDecision ? found.dialect.allow() : undefined;
    const unloadable = (reason: string): Out =>
      event === "PreToolUse" ? found.dialect.deny(reason) : { stderr: reason, exitCode: 0 };
    return { needsNoDecision, path, unloadable, ...(allow ? { stdout: allow } : {}) };
  } catch {
    return OTHER; // not JSON: the bundle refuses it with its reason
  }
}
