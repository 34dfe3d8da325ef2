import { existsSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { COPILOT_HOOKS_FILE } from "../guard/guard-files.js";
import { redact, SessionFile, reportHost } from "@cohent/client";
import type { Watch } from "./deadline.js";
import { adapterFailed, hookFailed, PAYLOAD_NOT_JSON } from "../guard/guard.js";
import { deny, render, scrubbed, SILENT, type Answer } from "./hook-answer.js";
import type { StopCall } from "./hook-stop.js";
import { agentIdOf, liveOf } from "../guard/subagents.js";
import { HOSTS, type Wiring } from "@cohent/protocol/hosts";
import { detect, unknownHostReason } from "../hosts/detect.js";
import type { Dialect, Env, HookEvent } from "../hosts/dialect.js";
import { clientOf, type HookPayload } from "../guard/tools.js";

/**
 * `hook`: one hook payload on stdin, one answer on stdout, for every client
 * that has hooks. A transport: it reads the payload in its host's dialect
 * (hosts/), calls the guard or the operation layer, and renders the answer
 * in that dialect. A deny always carries a non-empty reason where the
 * host's model reads it (every host fails open on anything less). runtime.json is read once per call and written at
 * most once (SessionFile), also when the call fails or runs out of time:
 * the missed-publish mark and the sub-agent tracking ride on that one write.
 */

/** The answer, and what it did, so that the caller never re-reads its own output. */
export interface HookResult extends Answer {
  event: string;
  client: string | null;
  model: string | null;
  /** The sub-agent that made the call, if one did. */
  agentId: string | null;
}

export interface Call extends StopCall {
  p: HookPayload;
  cwd: string;
  scriptUrl: string;
  dialect: Dialect;
  /** The client's name as sessions record it ("Copilot CLI"). */
  client: string | null;
  /** A tool of a known host that no table of its dialect knows. */
  unknownTool?: string;
}

export type Handlers = Partial<Record<string, (c: Call) => Promise<Answer>>>;

/** The adapter's hook handlers, by event (hook-events.ts). */
export interface HookPart {
  handlers: Handlers;
}

/** Events a sub-agent's own session sends that are its parent's business, not a person's prompt or a session of its own. */
const PARENTS_EVENTS: ReadonlySet<string> = new Set(["UserPromptSubmit", "SessionStart", "SessionEnd"]);

/** Whether a payload a hook of unknown host got is a tool call (refused) rather than an event (left alone). */
const looksLikeToolCall = (raw: Record<string, unknown>) =>
  "tool_name" in raw || "toolName" in raw || "tool_input" in raw || ("input" in raw && "output" in raw);

/**
 * Runs one hook payload. Never throws: an internal failure on PreToolUse is
 * a deny with its reason. `host` is the wiring's `--host` (null: an older
 * wiring, read by shape). `watch` (deadline.ts) learns the dialect and the
 * event, and how to save the session if the deadline fires first.
 */
export async function runHook(
  part: HookPart,
  stdin: string,
  root: string | null,
  scriptUrl: string,
  watch?: Watch,
  host: string | null = null,
  env: Env = process.env,
  /** How the call arrived when not through a command hook (hook-in-process.ts): what the host report says. */
  via?: { wiring: Wiring; hostVersion: string | null },
): Promise<HookResult> {
  const none = { event: "unknown", client: null, model: null, agentId: null };
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(stdin.charCodeAt(0) === 0xfeff ? stdin.slice(1) : stdin) as Record<string, unknown>;
    if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw new Error("not an object");
  } catch {
    return { ...none, stderr: PAYLOAD_NOT_JSON, exitCode: 2, injected: 0 };
  }
  const found = detect(host, raw, env, () => !!root && existsSync(join(root, COPILOT_HOOKS_FILE)));
  if (!found) {
    // No dialect to answer in: exit 2 with the reason on stderr, the refusal every hooked client reads.
    const refuse = looksLikeToolCall(raw);
    return {
      ...none,
      ...(refuse ? { stderr: unknownHostReason(host ?? ""), exitCode: 2 } : SILENT),
      injected: 0,
    };
  }
  const { dialect } = found;
  if (watch) watch.dialect = dialect;
  let reading;
  try {
    reading = dialect.read(raw, env);
  } catch {
    reading = null;
  }
  const p: HookPayload = reading?.p ?? {};
  let event = (reading ? p.hook_event_name : undefined) ?? "";
  if (watch) watch.event = event || "other";
  let agentId = agentIdOf(p);
  const clientName =
    env.COHENT_CLIENT ||
    (host === null && (dialect.host === "claude" || dialect.host === "codex")
      ? clientOf(p, env as NodeJS.ProcessEnv)
      : HOSTS[dialect.host]);
  const about = () => ({
    event: event || "unknown",
    client: clientName,
    model: typeof p.model === "string" ? p.model : null,
    agentId,
  });
  const handler = reading ? part.handlers[event] : undefined;
  // Copilot runs its own wiring and Claude's for every call: the Claude entry then only guards.
  if (!handler || (found.guardOnly && event !== "PreToolUse"))
    return { ...about(), ...render(dialect, null, SILENT) };
  const sessionId = typeof p.session_id === "string" && p.session_id ? p.session_id : "unknown-session";
  let s: SessionFile | null = null;
  try {
    s = root ? new SessionFile(root, sessionId) : null;
    // OpenCode's sub-agent is a child session: recorded at its start, its calls are then its parent's, as agentId.
    if (s && reading!.childOf) {
      s.set({ parent: reading!.childOf });
      s.save();
      return { ...about(), ...SILENT };
    }
    if (s?.state.parent) {
      agentId = s.id;
      s = new SessionFile(root!, s.state.parent);
      if (PARENTS_EVENTS.has(event)) return { ...about(), ...render(dialect, null, SILENT) };
      if (event === "Stop") event = "SubagentStop";
      p.agent_id = agentId;
    }
    const version =
      reading!.version ?? via?.hostVersion ?? dialect.version(env) ?? s?.state.hostVersion ?? null;
    if (s && reading!.version && reading!.version !== s.state.hostVersion)
      s.set({ hostVersion: reading!.version });
    // A modified wiring stays reported as modified, whichever way the call came in.
    const wiring = via && found.wiring === "fail-closed" ? via.wiring : found.wiring;
    reportHost({ host: dialect.host, hostVersion: version, wiring });
    if (watch && s) watch.save = () => s!.save();
    // The event's own handler: a child's Stop is its parent's SubagentStop by now.
    const answer = await part.handlers[event]!({
      p,
      root,
      s,
      cwd: p.cwd && isAbsolute(p.cwd) ? p.cwd : process.cwd(),
      scriptUrl,
      agentId,
      live: liveOf(p.background_tasks),
      dialect,
      client: clientName,
      ...(reading!.unknownTool !== undefined ? { unknownTool: reading!.unknownTool } : {}),
    });
    s?.save();
    return { ...about(), ...scrubbed(render(dialect, event as HookEvent, answer), root) };
  } catch (err) {
    const message = redact(err instanceof Error ? err.message : String(err));
    try {
      s?.save(); // the missed-publish mark, at least
    } catch {
      /* the failure was the save itself */
    }
    const answer: Answer =
      event === "PreToolUse"
        ? // Outside the decision's rules (none was reached), named for the ledger and doctor --cost all the same.
          deny({
            permission: "deny",
            condition: "unconfigured",
            reason: adapterFailed(message),
            rule: "adapter-failed",
          })
        : { stderr: hookFailed(message), exitCode: 0, injected: 0 };
    return { ...about(), ...scrubbed(render(dialect, event as HookEvent, answer), root) };
  }
}
