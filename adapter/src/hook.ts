import { isAbsolute, resolve } from "node:path";
import { normalizeRepoPath } from "@cohent/protocol/paths";
import * as client from "./client.js";
import { parseExemptCommand } from "./exemption.js";
import { stopCheckpoint, type Verdict } from "./guard.js";
import { guard } from "./guard-shell.js";
import { perform } from "./operations.js";
import { redact } from "./redact.js";
import { relay } from "./relay.js";
import { SessionFile } from "./runtime.js";
import { classify } from "./tools.js";

/**
 * `hook`: one Codex or Claude Code hook payload on stdin, one answer on
 * stdout. A transport: it parses the payload, calls the guard or the
 * operation layer, and renders. A deny is always the JSON
 * hookSpecificOutput form with a non-empty reason (both clients fail open
 * on anything less). runtime.json is read once per call and written at
 * most once (SessionFile).
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

/** The answer, and what it did, so that the caller never re-reads its own output. */
export interface HookResult {
  stdout?: string;
  stderr?: string;
  exitCode: number;
  event: string;
  client: string | null;
  model: string | null;
  /** The PreToolUse verdict, when there was one. */
  verdict?: Verdict;
  /** Characters of context injected into the agent. */
  injected: number;
}

type Answer = Pick<HookResult, "stdout" | "stderr" | "exitCode" | "verdict" | "injected">;
const SILENT: Answer = { exitCode: 0, injected: 0 };

export function deny(verdict: Verdict & { permission: "deny" }): Answer {
  const permissionDecisionReason = `Cohent: ${verdict.reason.trim() || "Cohent refused this tool call."}`;
  return { stdout: JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason } }), exitCode: 0, verdict, injected: 0 };
}

function inject(event: string, text: string): Answer {
  return { stdout: JSON.stringify({ hookSpecificOutput: { hookEventName: event, additionalContext: text } }), exitCode: 0, injected: text.length };
}

/** Which client sent the payload: Claude Code sets CLAUDECODE; Codex sends a model and a turn id. */
export function clientOf(p: HookPayload, env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.COHENT_CLIENT) return env.COHENT_CLIENT;
  if (env.CLAUDECODE === "1" || env.CLAUDE_PROJECT_DIR || typeof p.prompt_id === "string" || typeof p.effort === "object") return "Claude Code";
  if (typeof p.model === "string" || typeof p.turn_id === "string") return "Codex";
  return null;
}

interface Call {
  p: HookPayload;
  root: string | null;
  /** The session's state; null without a checkout root. */
  s: SessionFile | null;
  cwd: string;
  scriptUrl: string;
}

async function preToolUse({ p, root, s, cwd, scriptUrl }: Call): Promise<Answer> {
  const call = classify(p.tool_name ?? "", p.tool_input);
  if (call.kind === null) return SILENT;
  if (call.kind === "shell" && call.command !== null && root && s) {
    const ex = parseExemptCommand(call.command, { cwd, repoRoot: root });
    if (ex.exempt) {
      await relay(s, ex.argv, cwd, scriptUrl);
      return SILENT;
    }
  }
  const verdict = await guard(p.tool_name ?? "", call, cwd, root, s);
  return verdict.permission === "deny" ? deny(verdict) : { ...SILENT, verdict };
}

async function userPromptSubmit({ p, root, s }: Call): Promise<Answer> {
  if (!root || !s) return inject("UserPromptSubmit", "[cohent] This checkout is not configured for Cohent (no .cohent/project.json); edits and shell commands will be refused.");
  const input = { prompt: typeof p.prompt === "string" ? p.prompt : "", client: clientOf(p), model: typeof p.model === "string" ? p.model : null };
  const env = await perform("publish", input, { root, sessionId: s.id, surface: "hook", session: s });
  if (env.ok) return inject("UserPromptSubmit", env.data.packet.text);
  const code = env.error.code;
  if (code === "NOT_CONFIGURED" || code === "NOT_PAIRED") return inject("UserPromptSubmit", `[cohent] ${env.error.message} Until then edits and shell commands are refused.`);
  return inject("UserPromptSubmit", `[cohent] The prompt could not be published (${code}: ${env.error.message}). Edits are refused until it is.`);
}

/** The checkout for events that only report: an unusable configuration is the guard's to refuse, not theirs. */
function quietCheckout(root: string | null): client.Checkout | null {
  try {
    return root ? client.openCheckout(root) : null;
  } catch {
    return null;
  }
}

async function postToolUse({ p, root, s, cwd }: Call): Promise<Answer> {
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
  if (!pending) return SILENT;
  s.set({ pending: undefined });
  await client.ack(checkout, s.id, pending.packetId, pending.text.length);
  return inject("PostToolUse", pending.text);
}

async function stop({ root, s }: Call): Promise<Answer> {
  const checkout = quietCheckout(root);
  const input = s && stopCheckpoint(s.state);
  if (checkout && s && input) await client.checkpoint(checkout, s, input);
  return SILENT;
}

const HANDLERS: Record<string, (c: Call) => Promise<Answer>> = {
  async SessionStart({ p, s }) {
    s?.set({ client: clientOf(p) ?? s.state.client, endedAt: undefined, ...(typeof p.model === "string" ? { model: p.model } : {}) });
    return SILENT;
  },
  UserPromptSubmit: userPromptSubmit,
  PreToolUse: preToolUse,
  PostToolUse: postToolUse,
  Stop: stop,
  async SessionEnd({ s }) {
    s?.set({ endedAt: new Date().toISOString() });
    return SILENT;
  },
};

/** Runs one hook payload. Never throws: an internal failure on PreToolUse is a deny with its reason. */
export async function runHook(stdin: string, root: string | null, scriptUrl: string): Promise<HookResult> {
  let p: HookPayload;
  try {
    p = JSON.parse(stdin) as HookPayload;
    if (!p || typeof p !== "object") throw new Error("not an object");
  } catch {
    const stderr = "Cohent: the hook payload on stdin is not JSON; refusing. Check the hook command in .codex/hooks.json or .claude/settings.json.";
    return { stderr, exitCode: 2, event: "unknown", client: null, model: null, injected: 0 };
  }
  const event = p.hook_event_name ?? "";
  const about = { event: event || "unknown", client: clientOf(p), model: typeof p.model === "string" ? p.model : null };
  const sessionId = typeof p.session_id === "string" && p.session_id ? p.session_id : "unknown-session";
  try {
    const handler = HANDLERS[event];
    if (!handler) return { ...about, ...SILENT };
    const s = root ? new SessionFile(root, sessionId) : null;
    const answer = await handler({ p, root, s, cwd: p.cwd && isAbsolute(p.cwd) ? p.cwd : process.cwd(), scriptUrl });
    s?.save();
    return { ...about, ...answer };
  } catch (err) {
    const message = redact(err instanceof Error ? err.message : String(err));
    if (event === "PreToolUse") {
      const reason = `the adapter failed (${message}); configuration unusable. Run node .cohent/cohent.mjs doctor.`;
      return { ...about, ...deny({ permission: "deny", condition: "unconfigured", reason }) };
    }
    return { ...about, stderr: `cohent hook: ${message}`, exitCode: 0, injected: 0 };
  }
}
