import { ClientError, fail, type Envelope } from "./envelope.js";
import { readProject, resolveToken, type Project } from "./config.js";
import { pollAgent, postAgent, sessionRead, type AgentConnection } from "./http.js";
import { normalizeRepoPath } from "./paths.js";
import { redact, redactDeep } from "./redact.js";
import { emptySession, readRuntime, sessionHeader, updateSession, type SessionState } from "./runtime.js";

/**
 * The adapter's client: every agent operation once, persisting what the
 * next process needs in runtime.json. The hook and the CLI commands are
 * thin transports over it.
 */

export interface Checkout {
  root: string;
  project: Project;
  token: string;
  /** Aborts this checkout's requests (MCP cancellation, SIGINT in the agent CLI). */
  signal?: AbortSignal;
}

export function openCheckout(root: string): Checkout {
  const project = readProject(root);
  const { token } = resolveToken(project);
  return { root, project, token };
}

export function connection(c: Checkout, sessionId: string): AgentConnection {
  return { service: c.project.service, token: c.token, session: sessionHeader(sessionId), signal: c.signal };
}

export function sessionState(root: string, sessionId: string): SessionState {
  return readRuntime(root).sessions[sessionId] ?? emptySession();
}

/** Every answer's meta says whether the session is paused or cancelled: remember it. */
function controlOf(env: Envelope): Pick<SessionState, "control" | "controlReason"> | null {
  const s = env.meta?.session;
  if (s) return { control: s.control, controlReason: s.controlReason };
  if (env.error?.code === "SESSION_PAUSED") return { control: "paused", controlReason: env.error.message };
  if (env.error?.code === "SESSION_CANCELLED") return { control: "cancelled", controlReason: env.error.message };
  return null;
}

function remember(c: Checkout, sessionId: string, env: Envelope, change?: (s: SessionState) => void): void {
  updateSession(c.root, sessionId, (s) => {
    const control = controlOf(env);
    if (control) Object.assign(s, control);
    change?.(s);
  });
}

export const BLOCKING_ACTIONS = new Set(["plan", "wait", "duplicate", "handoff"]);

export async function publish(c: Checkout, sessionId: string, input: { prompt: string; client: string | null; model: string | null; paths?: string[] }): Promise<Envelope> {
  const body: Record<string, unknown> = { type: "publish", prompt: redact(input.prompt).slice(0, 16_000) || "(empty prompt)", paths: input.paths ?? [] };
  if (input.client) body.clientName = input.client.slice(0, 64);
  if (input.model) body.model = input.model.slice(0, 64);
  const env = await postAgent(connection(c, sessionId), body as { type: string });
  remember(c, sessionId, env, (s) => {
    if (input.client) s.client = input.client;
    if (input.model) s.model = input.model;
    if (!env.ok) return;
    s.intentId = env.data.intentId;
    s.action = env.data.action;
    s.cursor = env.data.packet.cursor;
    s.scope = [];
    s.explicitScope = false;
    s.touched = [];
    delete s.pending;
  });
  return env;
}

/** The session's open intent, publishing one for a client without a prompt hook (instruction-only agents). */
async function ensureIntent(c: Checkout, sessionId: string, prompt: string): Promise<{ intentId: string } | { env: Envelope }> {
  const s = sessionState(c.root, sessionId);
  if (s.intentId) return { intentId: s.intentId };
  const env = await publish(c, sessionId, { prompt, client: s.client ?? process.env.COHENT_CLIENT ?? null, model: s.model });
  return env.ok ? { intentId: env.data.intentId } : { env };
}

/** Posts on the session's intent; a closed intent gets a fresh prompt once, then the call is repeated. */
async function onIntent(c: Checkout, sessionId: string, prompt: string, body: (intentId: string) => { type: string; [k: string]: unknown }): Promise<Envelope> {
  for (let attempt = 0; ; attempt++) {
    const got = await ensureIntent(c, sessionId, prompt);
    if ("env" in got) return got.env;
    const env = await postAgent(connection(c, sessionId), body(got.intentId));
    if (!env.ok && attempt === 0 && (env.error?.code === "INTENT_CLOSED" || env.error?.code === "INTENT_NOT_FOUND" || env.error?.code === "NOT_INTENT_OWNER")) {
      updateSession(c.root, sessionId, (s) => {
        delete s.intentId;
      });
      continue;
    }
    return env;
  }
}

export async function intent(c: Checkout, sessionId: string, record: Record<string, unknown>): Promise<Envelope> {
  const clean = redactDeep(record);
  const objective = typeof clean.objective === "string" ? clean.objective : "agent work";
  const env = await onIntent(c, sessionId, objective, (intentId) => ({ type: "intent", intentId, intent: clean }));
  remember(c, sessionId, env, (s) => {
    if (!env.ok) return;
    s.intentId = env.data.intentId;
    s.action = env.data.action;
    s.cursor = env.data.packet.cursor;
  });
  return env;
}

export function normalizeAll(root: string, raw: readonly string[]): string[] {
  return [...new Set(raw.map((p) => normalizeRepoPath(p, root)))];
}

/** Claims a scope, replacing the previous claim. `explicit` marks a declared scope, which then bounds every edit. */
export async function claim(c: Checkout, sessionId: string, paths: string[], explicit: boolean): Promise<Envelope> {
  const env = await onIntent(c, sessionId, "scope claimed through the adapter", (intentId) => ({ type: "scope", intentId, paths }));
  remember(c, sessionId, env, (s) => {
    if (!env.ok) return;
    s.scope = env.data.paths;
    s.explicitScope = explicit && paths.length > 0;
    if (env.data.packet?.cursor) s.cursor = env.data.packet.cursor;
  });
  return env;
}

export async function checkpoint(c: Checkout, sessionId: string, input: { status: string; summary: string; paths?: string[]; pathsSource?: "provided-unverified" | "repository-derived" }): Promise<Envelope> {
  const s = sessionState(c.root, sessionId);
  if (!s.intentId) return fail("checkpoint", "INVALID_INPUT", "This session has no work intent to checkpoint; publish a prompt or an intent first.");
  const body: Record<string, unknown> = { type: "checkpoint", intentId: s.intentId, status: input.status, summary: redact(input.summary).slice(0, 1_000) };
  if (input.paths) body.paths = input.paths;
  if (input.paths && input.pathsSource) body.pathsSource = input.pathsSource;
  const env = await postAgent(connection(c, sessionId), body as { type: string });
  remember(c, sessionId, env, (st) => {
    if (!env.ok) return;
    if (input.status === "completed" || input.status === "abandoned") {
      st.action = input.status;
      st.scope = [];
      st.explicitScope = false;
      st.touched = [];
    } else if (input.paths) {
      st.scope = env.data.paths ?? st.scope;
    }
  });
  return env;
}

/**
 * Polls for changes after the session's cursor; re-resolves its action. A
 * packet it brings is kept as pending: the guard polls in PreToolUse, and the
 * packet is injected (and acknowledged) at the next PostToolUse.
 */
export async function poll(c: Checkout, sessionId: string): Promise<Envelope> {
  const s = sessionState(c.root, sessionId);
  if (!s.intentId) return fail("poll", "INVALID_INPUT", "This session has no work intent yet.");
  const env = await pollAgent(connection(c, sessionId), s.intentId, s.cursor);
  remember(c, sessionId, env, (st) => {
    if (!env.ok) return;
    st.polledAt = Date.now();
    st.cursor = env.data.cursor;
    if (env.data.packet) {
      st.action = env.data.packet.action;
      st.pending = { packetId: env.data.packet.id, text: env.data.packet.text };
    }
  });
  return env;
}

/** The current brief: goal, this session's latest decision, active peers (related first). */
export async function context(c: Checkout, sessionId: string): Promise<Envelope> {
  const s = sessionState(c.root, sessionId);
  const env = await postAgent(connection(c, sessionId), s.intentId ? { type: "context", intentId: s.intentId } : { type: "context" });
  remember(c, sessionId, env, (st) => {
    if (env.ok && env.data.intentId && env.data.intentId === st.intentId && env.data.action) st.action = env.data.action;
  });
  return env;
}

/** Reads the session's control state and renews its lease: the cheapest call that proves the service is there. */
export async function session(c: Checkout, sessionId: string): Promise<Envelope> {
  const env = await sessionRead(connection(c, sessionId));
  remember(c, sessionId, env);
  return env;
}

/** Reports a refusal the guard made locally, so the Control Room counts it. Best effort: never delays a deny. */
export async function reportGuard(c: Checkout, sessionId: string, kind: string, tool: string, paths: string[]): Promise<void> {
  const s = sessionState(c.root, sessionId);
  const body: Record<string, unknown> = { type: "guard", kind, tool: tool.slice(0, 64), paths: paths.slice(0, 64) };
  if (s.intentId) body.intentId = s.intentId;
  await postAgent({ ...connection(c, sessionId), timeoutMs: 1_500 }, body as { type: string });
}

/** Acknowledges the characters of a packet actually injected; once per packet, so a repeat is not an error. */
export async function ack(c: Checkout, sessionId: string, packetId: string, chars: number): Promise<void> {
  await postAgent(connection(c, sessionId), { type: "ack", packetId, chars });
}

export function assertOk(env: Envelope): void {
  if (!env.ok) throw new ClientError(env.error!.code, env.error!.message, env.error!.details);
}
