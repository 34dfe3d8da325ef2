import { isAbsolute, resolve } from "node:path";
import { ClientError, type Envelope } from "./envelope.js";
import * as client from "./client.js";
import { execute, RELAYED, shownPacket } from "./commands.js";
import { parseExemptCommand } from "./exemption.js";
import { decide, toolKind, type Condition, type ToolKind } from "./guard.js";
import { patchTargets, shellPatchTargets } from "./patch.js";
import { normalizeRepoPath, scopeCovers } from "./paths.js";
import { redact } from "./redact.js";
import { relayKey, updateRuntime, updateSession, type SessionState } from "./runtime.js";

/**
 * `hook`: one Codex or Claude Code hook payload on stdin, one answer on
 * stdout. A deny is always the JSON hookSpecificOutput form with a
 * non-empty reason (both clients fail open on anything less).
 */

export interface HookPayload {
  hook_event_name?: string;
  session_id?: string;
  cwd?: string;
  model?: string;
  prompt?: string;
  turn_id?: string;
  tool_name?: string;
  tool_input?: Record<string, unknown>;
  [k: string]: unknown;
}

export interface HookResult {
  stdout?: string;
  stderr?: string;
  exitCode: number;
}

const SILENT: HookResult = { exitCode: 0 };

/** How often the guard polls while nothing blocks; in between it reads only the kill switch. */
const POLL_EVERY_MS = Number(process.env.COHENT_POLL_EVERY_MS) >= 0 && process.env.COHENT_POLL_EVERY_MS ? Number(process.env.COHENT_POLL_EVERY_MS) : 10_000;

export function deny(reason: string): HookResult {
  const text = reason.trim() || "Cohent refused this tool call.";
  return {
    stdout: JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: `Cohent: ${text}` } }),
    exitCode: 0,
  };
}

function context(event: string, text: string): HookResult {
  return { stdout: JSON.stringify({ hookSpecificOutput: { hookEventName: event, additionalContext: text } }), exitCode: 0 };
}

/** Which client sent the payload: Claude Code sets CLAUDECODE; Codex sends a model and a turn id. */
export function clientOf(p: HookPayload, env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.COHENT_CLIENT) return env.COHENT_CLIENT;
  if (env.CLAUDECODE === "1" || env.CLAUDE_PROJECT_DIR || typeof p.prompt_id === "string" || typeof p.effort === "object") return "Claude Code";
  if (typeof p.model === "string" || typeof p.turn_id === "string") return "Codex";
  return null;
}

/** The command string of a shell-like tool call, when it has one. */
export function shellCommand(input: Record<string, unknown> | undefined): string | null {
  const raw = input?.command ?? input?.cmd;
  if (typeof raw === "string") return raw;
  if (Array.isArray(raw) && raw.every((x) => typeof x === "string")) {
    const [sh, flag, script] = raw as string[];
    if (raw.length === 3 && /(^|\/)(ba|z|)sh$/.test(sh!) && (flag === "-lc" || flag === "-c")) return script!;
    return (raw as string[]).map((a) => (/^[A-Za-z0-9_\-./=:,@%+]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(" ");
  }
  return null;
}

export interface ToolCall {
  kind: ToolKind | null;
  /** Raw edit targets as the tool names them; null when the edit's targets cannot be read. */
  targets: string[] | null;
  command: string | null;
}

/** Classifies a tool call: edit (with its targets), shell, or neither. Pure. */
export function classify(toolName: string, input: Record<string, unknown> = {}): ToolCall {
  const kind = toolKind(toolName);
  if (kind === "edit") {
    if (toolName === "apply_patch") {
      const body = [input.command, input.input, input.patch].find((v) => typeof v === "string") as string | undefined;
      const targets = body ? patchTargets(body) : [];
      return { kind, targets: targets.length ? targets : null, command: null };
    }
    const file = [input.file_path, input.notebook_path, input.path].find((v) => typeof v === "string") as string | undefined;
    return { kind, targets: file ? [file] : null, command: null };
  }
  if (kind === "shell") {
    const command = shellCommand(input);
    const patched = command ? shellPatchTargets(command) : null;
    if (patched) return { kind: "edit", targets: patched.length ? patched : null, command };
    return { kind, targets: null, command };
  }
  return { kind: null, targets: null, command: null };
}

function isUnreachable(env: Envelope | null): boolean {
  return !!env && !env.ok && env.error?.code === "CONTROL_PLANE_UNREACHABLE";
}

const STOP_REASON = {
  paused: "this session is paused from the Cohent Control Room",
  cancelled: "this session was cancelled from the Cohent Control Room",
};

const NOT_READY: Record<string, string> = {
  plan: "no structured intent has been published for this prompt. Publish one first: node .cohent/cohent.mjs intent '{\"objective\":\"…\",\"outputs\":[\"…\"],…}'",
  wait: "your intent must wait: an output it depends on is still being produced by a peer. Publish a narrower intent (node .cohent/cohent.mjs intent '…') that can proceed without it.",
  duplicate: "your intent duplicates a peer's active work (same objective and output). Publish a narrower or different intent with node .cohent/cohent.mjs intent '…'.",
  handoff: "your intent requires a capability an active peer reported. Publish a narrower intent with node .cohent/cohent.mjs intent '…', or hand this part over.",
  completed: "this work intent is completed. A new prompt publishes a new one; or publish an intent with node .cohent/cohent.mjs intent '…'.",
  abandoned: "this work intent was abandoned. Publish a new intent with node .cohent/cohent.mjs intent '…'.",
};

function describeConflict(env: Envelope): string {
  const conflicts = ((env.error?.details as { conflicts?: any[] } | undefined)?.conflicts ?? []) as {
    intentId: string; person: string; client: string | null; model: string | null; objective: string | null; paths: string[]; theirPaths: string[];
  }[];
  if (!conflicts.length) return env.error?.message ?? "scope conflict";
  return conflicts
    .map((c) => {
      const agent = [c.client, c.model].filter(Boolean).join(" ");
      return `${c.paths.join(", ")} overlaps the scope of ${c.person}${agent ? ` (${agent})` : ""}: ${c.theirPaths.join(", ")}${c.objective ? `, working on ${JSON.stringify(c.objective)}` : ""} (${c.intentId})`;
    })
    .join("; ");
}

async function preToolUse(p: HookPayload, root: string | null, sessionId: string): Promise<HookResult> {
  const call = classify(p.tool_name ?? "", p.tool_input);
  if (call.kind === null) return SILENT;
  const cwd = p.cwd && isAbsolute(p.cwd) ? p.cwd : process.cwd();

  if (call.kind === "shell" && call.command !== null && root) {
    const ex = parseExemptCommand(call.command, { cwd, repoRoot: root });
    if (ex.exempt) {
      await relay(root, sessionId, ex.argv, cwd);
      return SILENT;
    }
  }

  // Edit targets inside the repository; an edit wholly outside it is held to the kill switch only.
  let kind: ToolKind = call.kind;
  let targets: string[] | null = null;
  let targetError: string | null = null;
  if (call.kind === "edit" && root && call.targets) {
    const inside: string[] = [];
    for (const t of call.targets) {
      const abs = resolve(cwd, t);
      if (abs !== root && !abs.startsWith(root + "/")) continue;
      try {
        inside.push(normalizeRepoPath(abs, root));
      } catch (err) {
        targetError = (err as Error).message;
      }
    }
    if (inside.length === 0 && !targetError) kind = "shell";
    targets = inside;
  }

  let checkout: client.Checkout | null = null;
  let configError: string | null = null;
  if (!root) configError = "this checkout has no .cohent/project.json; run npx cohent init --server URL, then node .cohent/cohent.mjs bootstrap --approve";
  else {
    try {
      checkout = client.openCheckout(root);
    } catch (err) {
      configError = (err as Error).message;
    }
  }
  let state: SessionState = root ? client.sessionState(root, sessionId) : client.sessionState("/nonexistent", sessionId);

  // One contact per decision. A poll re-resolves the action and brings peer changes, so it is due
  // when an edit meets a blocking action, or every POLL_EVERY_MS; otherwise the session read (control
  // state, lease, credential) is all the kill switch needs, at a fraction of the cost.
  let contact: Envelope | null | undefined;
  const pollDue = () =>
    !!state.intentId && ((kind === "edit" && client.BLOCKING_ACTIONS.has(state.action ?? "plan")) || Date.now() - (state.polledAt ?? 0) >= POLL_EVERY_MS);
  const reach = async (): Promise<Envelope | null> => {
    if (contact !== undefined) return contact;
    if (!checkout) return (contact = null);
    if (pollDue()) {
      contact = await client.poll(checkout, sessionId);
      if (!contact.ok && (contact.error?.code === "INTENT_NOT_FOUND" || contact.error?.code === "NOT_INTENT_OWNER")) {
        updateSession(root!, sessionId, (s) => {
          delete s.intentId;
          delete s.action;
        });
      }
      state = client.sessionState(root!, sessionId);
    } else {
      contact = await client.session(checkout, sessionId);
      state = client.sessionState(root!, sessionId);
    }
    return contact;
  };

  const probes: Record<Condition, () => Promise<string | null>> = {
    stopped: async () => {
      const env = await reach();
      const control = env?.meta?.session?.control ?? (env?.ok && env.data?.control) ?? state.control;
      if (control === "paused" || control === "cancelled") {
        const why = env?.meta?.session?.controlReason ?? state.controlReason;
        return `${STOP_REASON[control as "paused" | "cancelled"]}${why ? ` (${why})` : ""}. Stop working and wait for a person to resume it; no edit or shell command runs until then.`;
      }
      return null;
    },
    unreachable: async () => {
      const env = await reach();
      return isUnreachable(env) ? env!.error!.message : null;
    },
    unconfigured: async () => {
      if (configError) return `Cohent is not usable in this checkout: ${configError}`;
      const env = await reach();
      if (env && !env.ok && (env.error?.code === "UNAUTHENTICATED" || env.error?.code === "INVALID_SESSION")) {
        return `the Cohent service refused this machine's credential (${env.error.message}). Pair again: node .cohent/cohent.mjs bootstrap --approve.`;
      }
      return null;
    },
    intentNotReady: async () => {
      if (!state.intentId) return "no prompt or intent has been announced for this session. Publish one first: node .cohent/cohent.mjs intent '{\"objective\":\"…\",\"outputs\":[\"…\"],…}'";
      const action = state.action ?? "plan";
      return client.BLOCKING_ACTIONS.has(action) || action === "completed" || action === "abandoned" ? `edit refused: ${NOT_READY[action]}` : null;
    },
    scopeConflict: async () => {
      if (state.explicitScope || !targets || targets.length === 0 || targetError) return null;
      const wanted = [...new Set([...state.scope, ...targets])];
      if (wanted.length === state.scope.length && targets.every((t) => state.scope.includes(t))) return null;
      const env = await client.claim(checkout!, sessionId, wanted, false);
      if (env.ok) {
        state = client.sessionState(root!, sessionId);
        return null;
      }
      if (env.error?.code === "SCOPE_CONFLICT") return `edit refused: ${describeConflict(env)}. Choose other files, or declare a narrower scope with node .cohent/cohent.mjs scope <path…>.`;
      return `edit refused: claiming ${targets.join(", ")} failed: ${env.error?.code}: ${env.error?.message}`;
    },
    outsideScope: async () => {
      if (targetError) return `edit refused: ${targetError}`;
      if (!targets || targets.length === 0) {
        return state.explicitScope ? null : "Cohent cannot read this edit's targets. Declare them first: node .cohent/cohent.mjs scope <path…>";
      }
      const outside = targets.filter((t) => !scopeCovers(state.scope, t));
      if (outside.length === 0) return null;
      return `edit refused: ${outside.join(", ")} lies outside your declared scope (${state.scope.join(", ") || "none"}), so it has not been compared with anybody else's work. Declare a scope that covers it: node .cohent/cohent.mjs scope ${[...state.scope, ...outside].join(" ")}`;
    },
  };

  const verdict = await decide(kind, (c) => probes[c]());
  if (verdict.permission === "allow") return SILENT;
  const reported = verdict.condition === "stopped" ? (state.control === "cancelled" ? "cancelled" : "paused") : REPORTED[verdict.condition];
  if (checkout && reported) {
    await client.reportGuard(checkout, sessionId, reported, p.tool_name ?? "", targets ?? []).catch(() => {});
  }
  return deny(verdict.reason);
}

/** Refusals the server cannot see, reported so that they count (scope conflicts it counts itself). */
const REPORTED: Partial<Record<Condition, string>> = {
  intentNotReady: "intent-not-ready",
  outsideScope: "outside-scope",
};

/**
 * The sandbox relay. The agent's own shell may have no network (Codex's
 * workspace-write sandbox), but this hook runs outside it and sees the
 * exempt command just before it runs. So the hook performs the operation
 * for the session that announced the call and leaves the answer in
 * runtime.json under the command's relay key; the command claims it,
 * prints it and exits with its code. Other adapter commands get only the
 * session binding.
 */
/** An agent operation whose request the hook can see: from a file, or none ({}); never stdin. */
function relayableAgent(args: readonly string[]): boolean {
  const [op, ...rest] = args;
  if (!op || !["publish", "intent", "scope", "checkpoint", "context"].includes(op)) return false;
  const i = rest.findIndex((a) => a === "--input" || a.startsWith("--input="));
  if (i === -1) return true;
  const value = rest[i]!.startsWith("--input=") ? rest[i]!.slice("--input=".length) : rest[i + 1];
  return value !== undefined && value !== "-";
}

async function relay(root: string, sessionId: string, argv: string[], cwd: string): Promise<void> {
  const [name, ...args] = argv;
  const key = relayKey(argv);
  let result: { envelope: Envelope; exitCode: number } | undefined;
  if (name === "agent" && relayableAgent(args)) {
    // The JSON agent CLI, with its request in a file the hook can read: run it here, outside the sandbox.
    const mod = (await import(new URL("./cohent-mcp.mjs", import.meta.url).href)) as typeof import("./mcp/entry.js");
    let printed = "";
    const exitCode = await mod.agentMain(args, { scriptUrl: import.meta.url, relaySession: sessionId, cwd, out: (s) => void (printed = s) });
    try {
      result = { envelope: JSON.parse(printed) as Envelope, exitCode };
    } catch {
      /* nothing to hand over: the command runs by itself */
    }
  } else if (name && RELAYED.has(name)) {
    result = await execute(name, args, root, sessionId);
    const shown = shownPacket(result.envelope);
    if (shown) {
      try {
        await client.ack(client.openCheckout(root), sessionId, shown.id, shown.text.length);
      } catch {
        /* an unacknowledged packet only undercounts injected context */
      }
    }
  }
  updateRuntime(root, (rt) => {
    rt.relays.push({ key, sessionId, at: new Date().toISOString(), ...(result ? { result } : {}) });
  });
}

async function userPromptSubmit(p: HookPayload, root: string | null, sessionId: string): Promise<HookResult> {
  if (!root) return context("UserPromptSubmit", "[cohent] This checkout is not configured for Cohent (no .cohent/project.json); edits and shell commands will be refused.");
  let checkout: client.Checkout;
  try {
    checkout = client.openCheckout(root);
  } catch (err) {
    return context("UserPromptSubmit", `[cohent] ${(err as Error).message} Until then edits and shell commands are refused.`);
  }
  const before = client.sessionState(root, sessionId);
  const env = await client.publish(checkout, sessionId, {
    prompt: typeof p.prompt === "string" ? p.prompt : "",
    client: clientOf(p) ?? before.client,
    model: typeof p.model === "string" ? p.model : before.model,
  });
  if (!env.ok) {
    return context("UserPromptSubmit", `[cohent] The prompt could not be published (${env.error!.code}: ${env.error!.message}). Edits are refused until it is.`);
  }
  const text = env.data.packet.text as string;
  try {
    await client.ack(checkout, sessionId, env.data.packet.id, text.length);
  } catch {
    /* see relay() */
  }
  return context("UserPromptSubmit", text);
}

/** The checkout for events that only report: an unusable configuration is the guard's to refuse, not theirs. */
function quietCheckout(root: string): client.Checkout | null {
  try {
    return client.openCheckout(root);
  } catch {
    return null;
  }
}

async function postToolUse(p: HookPayload, root: string | null, sessionId: string): Promise<HookResult> {
  const checkout = root ? quietCheckout(root) : null;
  if (!root || !checkout) return SILENT;
  const call = classify(p.tool_name ?? "", p.tool_input);
  const cwd = p.cwd && isAbsolute(p.cwd) ? p.cwd : process.cwd();
  const touched: string[] = [];
  for (const t of call.kind === "edit" ? (call.targets ?? []) : []) {
    try {
      touched.push(normalizeRepoPath(resolve(cwd, t), root));
    } catch {
      /* outside the repository */
    }
  }
  let state = client.sessionState(root, sessionId);
  if (touched.length && state.intentId) {
    updateSession(root, sessionId, (s) => {
      s.touched = [...new Set([...s.touched, ...touched])];
    });
    await client.checkpoint(checkout, sessionId, { status: "working", summary: `Edited ${touched.join(", ")}` });
    state = client.sessionState(root, sessionId);
  }
  const pending = state.pending;
  if (!pending) return SILENT;
  updateSession(root, sessionId, (s) => {
    delete s.pending;
  });
  try {
    await client.ack(checkout, sessionId, pending.packetId, pending.text.length);
  } catch {
    /* see relay() */
  }
  return context("PostToolUse", pending.text);
}

async function stop(root: string | null, sessionId: string): Promise<HookResult> {
  const checkout = root ? quietCheckout(root) : null;
  if (!root || !checkout) return SILENT;
  const s = client.sessionState(root, sessionId);
  if (!s.intentId || s.action === "completed" || s.action === "abandoned") return SILENT;
  // An agent stopped by wait, duplicate or handoff has not produced its outputs: completing it would
  // tell dependents to proceed. It stays open as blocked until its next prompt supersedes it.
  const waiting = s.action === "wait" || s.action === "duplicate" || s.action === "handoff";
  await client.checkpoint(checkout, sessionId, waiting
    ? { status: "blocked", summary: `Stopped on ${s.action}.` }
    : { status: "completed", summary: s.touched.length ? `Finished; touched ${s.touched.join(", ")}` : "Finished without edits.", paths: s.touched });
  return SILENT;
}

/** Runs one hook payload. Never throws: an internal failure on PreToolUse is a deny with its reason. */
export async function runHook(stdin: string, root: string | null): Promise<HookResult> {
  let p: HookPayload;
  try {
    p = JSON.parse(stdin) as HookPayload;
    if (!p || typeof p !== "object") throw new Error("not an object");
  } catch {
    return { stderr: "Cohent: the hook payload on stdin is not JSON; refusing. Check the hook command in .codex/hooks.json or .claude/settings.json.", exitCode: 2 };
  }
  const event = p.hook_event_name ?? "";
  const sessionId = typeof p.session_id === "string" && p.session_id ? p.session_id : "unknown-session";
  try {
    switch (event) {
      case "SessionStart":
        if (root) {
          updateSession(root, sessionId, (s) => {
            s.client = clientOf(p) ?? s.client;
            if (typeof p.model === "string") s.model = p.model;
            delete s.endedAt;
          });
        }
        return SILENT;
      case "UserPromptSubmit":
        return await userPromptSubmit(p, root, sessionId);
      case "PreToolUse":
        return await preToolUse(p, root, sessionId);
      case "PostToolUse":
        return await postToolUse(p, root, sessionId);
      case "Stop":
        return await stop(root, sessionId);
      case "SessionEnd":
        if (root) updateSession(root, sessionId, (s) => void (s.endedAt = new Date().toISOString()));
        return SILENT;
      default:
        return SILENT;
    }
  } catch (err) {
    const message = err instanceof ClientError || err instanceof Error ? err.message : String(err);
    if (event === "PreToolUse") return deny(`the adapter failed (${redact(message)}); configuration unusable. Run node .cohent/cohent.mjs doctor.`);
    return { stderr: `cohent hook: ${redact(message)}`, exitCode: 0 };
  }
}
