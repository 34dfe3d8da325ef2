import { existsSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { COPILOT_HOOKS_FILE } from "../guard/guard-files.js";
import { normalizeRepoPath } from "@cohent/protocol/paths";
import * as client from "../service/client.js";
import { notExemptNote, parseExemptCommand } from "../guard/exemption.js";
import type { Watch } from "./deadline.js";
import {
  adapterFailed,
  hookFailed,
  missedPublish,
  NOTICE,
  PAYLOAD_NOT_JSON,
  publishBound,
  publishMark,
} from "../guard/guard.js";
import { guard, guardFilesCheck } from "../guard/guard-shell.js";
import { deny, inject, render, scrubbed, SILENT, type Answer } from "./hook-answer.js";
import { quietCheckout, sessionEnd, stop, subagentStop, track, type StopCall } from "./hook-stop.js";
import { perform } from "../operations.js";
import { redact } from "../redact.js";
import { relay } from "./relay.js";
import { SessionFile } from "../state/runtime.js";
import {
  agentIdOf,
  backgroundTaskOf,
  isSpawn,
  isTaskNotification,
  liveOf,
  seen,
  shellStarted,
  spawned,
  turnStarted,
} from "../guard/subagents.js";
import { HOSTS } from "@cohent/protocol/hosts";
import { detect, unknownHostReason } from "../hosts/detect.js";
import type { Dialect, Env, HookEvent } from "../hosts/dialect.js";
import { classify, clientOf, type HookPayload } from "../guard/tools.js";

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

interface Call extends StopCall {
  p: HookPayload;
  cwd: string;
  scriptUrl: string;
  dialect: Dialect;
  /** The client's name as sessions record it ("Copilot CLI"). */
  client: string | null;
  /** A tool of a known host that no table of its dialect knows. */
  unknownTool?: string;
}

/** The refusal of a tool no table of the host's dialect knows: what it writes cannot be told. */
export const unknownToolReason = (label: string, tool: string) =>
  `${label}'s tool ${JSON.stringify(tool).slice(0, 80)} is not one Cohent knows, so it cannot tell what the call writes and refuses it. Use the client's own edit, shell or read tools; a person can ask for the tool to be added to Cohent's table.`;

async function preToolUse({
  p,
  root,
  s,
  cwd,
  scriptUrl,
  agentId,
  dialect,
  unknownTool,
}: Call): Promise<Answer> {
  if (unknownTool !== undefined)
    return deny({
      permission: "deny",
      condition: "unconfigured",
      reason: unknownToolReason(dialect.label, unknownTool),
    });
  // A publish the last prompt missed: its stale intent goes first, so that a relayed `intent` publishes a fresh one.
  const missed = s ? missedPublish(s.state) : null;
  if (missed) s!.set(missed.change);
  if (s && agentId) track(s, (t) => seen(t, agentId));
  const call = classify(p.tool_name ?? "", p.tool_input);
  if (call.kind === null) {
    if (s && isSpawn(p.tool_name, agentId)) track(s, spawned);
    return SILENT;
  }
  // The guard's own files first: no exemption, intent or scope makes their write an agent's.
  const guardFiles = guardFilesCheck(p.tool_name ?? "", p.tool_input, call, cwd, root);
  if (guardFiles?.permission === "deny") return deny(guardFiles);
  // The adapter's own command but for a prefix that is not inert: an ordinary shell command, and its deny says why.
  let notExempt: string | null = null;
  if (call.kind === "shell" && call.command !== null && root && s) {
    const ex = parseExemptCommand(call.command, { cwd, repoRoot: root, sessionId: s.id });
    if (ex.exempt) {
      await relay(s, ex.argv, cwd, scriptUrl);
      return SILENT;
    }
    if (ex.prefix) notExempt = ex.why;
  }
  const verdict = await guard(p.tool_name ?? "", call, cwd, root, s, {
    missedPublish: !!missed?.stale,
    agentId,
  });
  if (verdict.permission !== "deny") return { ...SILENT, verdict };
  return deny(notExempt ? { ...verdict, reason: `${verdict.reason} ${notExemptNote(notExempt)}` } : verdict);
}

async function userPromptSubmit({ p, root, s, client: clientName }: Call): Promise<Answer> {
  if (!root || !s) return inject(NOTICE.notConfigured);
  // Claude Code's word that a background task ended starts a turn of the same work, not a new prompt:
  // publishing it would supersede the intent under a sub-agent that still works (measured, subagents.ts).
  if (isTaskNotification(p.prompt)) {
    track(s, turnStarted);
    return SILENT;
  }
  // The mark stays unless this publish binds a new intent, also when the call fails or runs out of time (saved then).
  const mark = publishMark(s.state.intentId);
  s.set({ publishing: mark, subagents: undefined });
  const input = {
    prompt: typeof p.prompt === "string" ? p.prompt : "",
    client: clientName,
    model: typeof p.model === "string" ? p.model : null,
  };
  const env = await perform("publish", input, { root, sessionId: s.id, surface: "hook", session: s });
  if (publishBound(mark, s.state.intentId)) s.set({ publishing: undefined });
  if (env.ok) return inject(env.data.packet.text);
  const code = env.error.code;
  if (code === "NOT_CONFIGURED" || code === "NOT_PAIRED") return inject(NOTICE.notPaired(env.error.message));
  return inject(NOTICE.publishFailed(code, env.error.message));
}

async function postToolUse({ p, root, s, cwd, agentId, dialect }: Call): Promise<Answer> {
  if (s && agentId) track(s, (t) => seen(t, agentId));
  // A background command a sub-agent started can wake it after its SubagentStop (2.1.332).
  const task = agentId ? backgroundTaskOf(p.tool_response) : null;
  if (s && agentId && task) track(s, (t) => shellStarted(t, agentId, task));
  const checkout = quietCheckout(root);
  if (!root || !s || !checkout) return SILENT;
  const call = classify(p.tool_name ?? "", p.tool_input);
  const touched: string[] = [];
  for (const t of call.kind === "edit" ? (call.targets ?? []) : []) {
    try {
      touched.push(normalizeRepoPath(resolve(cwd, t), root));
    } catch {
      /* outside the repository */
    }
  }
  if (touched.length && s.state.intentId) {
    s.set({ touched: [...new Set([...s.state.touched, ...touched])] });
    await client.checkpoint(checkout, s, { status: "working", summary: `Edited ${touched.join(", ")}` });
  }
  const pending = s.state.pending;
  // A host that reads no context here (Copilot, Cursor, OpenCode) leaves the packet for a refusal to carry.
  if (!pending || dialect.context("PostToolUse", pending.text) === undefined) return SILENT;
  s.set({ pending: undefined });
  await client.ack(checkout, s.id, pending.packetId, pending.text.length);
  return inject(pending.text);
}

/**
 * The guard wiring's check (wiring-check.ts), once a session: at its start,
 * or at its first prompt when no SessionStart ran (that hook entry removed,
 * or not trusted by Codex). A modified wiring is reported to the service;
 * the session goes on whatever it finds, and a failure is nobody's business.
 */
async function checkWiring(root: string | null, s: SessionFile | null, event: string): Promise<void> {
  if (!root || !s || s.state.wiringChecked) return;
  s.set({ wiringChecked: true });
  try {
    const { readWiring, reportState } = await import("../installer/wiring-check.js");
    await reportState(root, quietCheckout(root), s.id, event, readWiring(root, s.runtime), s.runtime);
  } catch {
    /* never in a session start's way */
  }
}

const HANDLERS: Record<string, (c: Call) => Promise<Answer>> = {
  async SessionStart({ p, root, s, client: clientName }) {
    s?.set({
      client: clientName ?? s.state.client,
      endedAt: undefined,
      ...(typeof p.model === "string" ? { model: p.model } : {}),
      // A resumed or cleared session starts again: its wiring is checked again.
      wiringChecked: undefined,
    });
    await checkWiring(root, s, "SessionStart");
    return SILENT;
  },
  async UserPromptSubmit(c) {
    const answer = await userPromptSubmit(c);
    await checkWiring(c.root, c.s, "UserPromptSubmit");
    return answer;
  },
  PreToolUse: preToolUse,
  PostToolUse: postToolUse,
  Stop: stop,
  SubagentStop: subagentStop,
  SessionEnd: sessionEnd,
};

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
  stdin: string,
  root: string | null,
  scriptUrl: string,
  watch?: Watch,
  host: string | null = null,
  env: Env = process.env,
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
  const handler = reading ? HANDLERS[event] : undefined;
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
    const version = reading!.version ?? dialect.version(env) ?? s?.state.hostVersion ?? null;
    if (s && reading!.version && reading!.version !== s.state.hostVersion)
      s.set({ hostVersion: reading!.version });
    client.reportHost({ host: dialect.host, hostVersion: version, wiring: found.wiring });
    if (watch && s) watch.save = () => s!.save();
    const answer = await HANDLERS[event]!({
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
        ? deny({ permission: "deny", condition: "unconfigured", reason: adapterFailed(message) })
        : { stderr: hookFailed(message), exitCode: 0, injected: 0 };
    return { ...about(), ...scrubbed(render(dialect, event as HookEvent, answer), root) };
  }
}
