import { BOUNDS } from "@cohent/protocol/bounds";
import { hostHeader, type HostReport } from "@cohent/protocol/hosts";
import type {
  AgentRequestBody,
  CheckpointResponse,
  ContextResponse,
  Envelope,
  GuardResponse,
  IntentResponse,
  PollResponse,
  ReleaseRequestResponse,
  PublishResponse,
  QueuePlace,
  ScopeResponse,
  ScopesResponse,
  SessionResponse,
  WiringReport,
} from "@cohent/protocol";
import { fail } from "../envelope.js";
import { readProject, resolveToken, type Project } from "../state/config.js";
import {
  newRequestId,
  pollAgent,
  postAgent,
  sessionRead,
  type AgentConnection,
  type AgentSender,
} from "./http.js";
import { redact, redactDeep } from "../redact.js";
import { sessionHeader, type SessionFile } from "../state/runtime.js";
import { pendingOf, received } from "./notices.js";

/**
 * Every agent call to the service, once. Each keeps what the next process
 * needs in the session's state (in memory: the caller saves runtime.json
 * once). The operation layer and the guard call these; transports never do.
 */

export interface Checkout {
  root: string;
  project: Project;
  token: string;
  /** Aborts this checkout's requests (MCP cancellation, SIGINT in the agent CLI). */
  signal?: AbortSignal;
  /** The sub-agent on whose behalf the hook calls, sent as x-cohent-agent. */
  agentId?: string | null;
  /** Calls go to this in-process sender, not to project.service (the backend's /mcp endpoint). */
  send?: AgentSender;
}

export function openCheckout(root: string): Checkout {
  const project = readProject(root);
  const { token } = resolveToken(project);
  return { root, project, token };
}

/** The hook's report of the client it runs in (protocol hosts), sent on every call of this process; null elsewhere. */
let hostReport: string | null = null;
let reported: HostReport | null = null;

/**
 * The hook calls this once, when it knows its host: every agent call this
 * process makes then carries it (`x-cohent-host`), so the session records its
 * client, and its kill-switch reads and polls show that its tool calls reach
 * the guard. The CLI and MCP never call it: their calls change nothing there.
 */
export function reportHost(report: HostReport | null): void {
  // A host that runs the hook in its own process (OpenCode's plugin) reports on every call, its
  // sessions' calls interleaved: its version is the process's, so one call's not knowing it does
  // not take it from another's requests.
  if (report && !report.hostVersion && reported?.hostVersion && reported.host === report.host)
    report = { ...report, hostVersion: reported.hostVersion };
  reported = report;
  hostReport = report && hostHeader(report);
}

export function connection(c: Checkout, sessionId: string): AgentConnection {
  return {
    service: c.project.service,
    token: c.token,
    session: sessionHeader(sessionId),
    signal: c.signal,
    agent: c.agentId ? sessionHeader(c.agentId) : null,
    host: hostReport,
    send: c.send,
  };
}

/** One request body of the protocol's, by its type (protocol/src/requests.ts). */
type Body<T extends AgentRequestBody["type"]> = Extract<AgentRequestBody, { type: T }>;

/** A short hash of a request body (FNV-1a, twice, and the length): node:crypto would load streams into every hook. */
function bodyHash(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    a = Math.imul(a ^ ch, 0x01000193);
    b = Math.imul(b ^ ch, 0x811c9dc5) ^ (b >>> 15);
  }
  return `${(a >>> 0).toString(16)}${(b >>> 0).toString(16)}-${text.length}`;
}

/**
 * A write of this session's. Its request id (REQUEST_ID_HEADER) is the unsettled one when the same
 * body went out before and no answer came back (a timeout, a cut connection after its one resend):
 * the agent that sends that write again, in this or a later process, then gets the first answer
 * instead of writing twice. Any answer settles it.
 */
async function post<T>(c: Checkout, s: SessionFile, body: AgentRequestBody): Promise<Envelope<T>> {
  const hash = bodyHash(JSON.stringify(body));
  const held = s.state.unsettled;
  const id = held?.body === hash ? held.id : newRequestId();
  const env = (await postAgent(connection(c, s.id), body, id)) as Envelope<T>;
  // Still unanswered: unreachable, or the first still running. A first whose answer the service lost for
  // good (REQUEST_IN_FLIGHT, details.lost: it took effect) settles it: the agent was told so.
  const lost =
    !env.ok &&
    (env.error.code === "CONTROL_PLANE_UNREACHABLE" ||
      (env.error.code === "REQUEST_IN_FLIGHT" &&
        !(env.error.details as { lost?: boolean } | undefined)?.lost));
  s.set({ unsettled: lost ? { id, body: hash } : undefined });
  return env;
}

/** Every answer's meta says whether the session is paused or cancelled: remember it. */
function remember(s: SessionFile, env: Envelope<any>): void {
  const m =
    env.meta?.session ??
    (env.ok && env.data?.control
      ? { control: env.data.control, controlReason: env.data.controlReason ?? null }
      : null);
  if (m) {
    s.set({ control: m.control, controlReason: m.controlReason });
    if ("epoch" in m && typeof m.epoch === "number") fenced(s, m.epoch);
  } else if (!env.ok && env.error.code === "SESSION_PAUSED")
    s.set({ control: "paused", controlReason: env.error.message });
  else if (!env.ok && env.error.code === "SESSION_CANCELLED")
    s.set({ control: "cancelled", controlReason: env.error.message });
}

/**
 * The lease epoch moved: the service freed this session's claims without it
 * asking (lease expiry, a person). Whatever it thought it held is void, so
 * the next edit claims again, and is refused if a newer holder has the path,
 * even when the notice that says so has not been read yet.
 */
function fenced(s: SessionFile, epoch: number): void {
  const known = s.state.epoch;
  if (known === epoch) return;
  s.set(known === undefined ? { epoch } : { epoch, scope: [], explicitScope: false, queued: undefined });
}

const clip = (v: string, n: number) => v.slice(0, n);

export async function publish(
  c: Checkout,
  s: SessionFile,
  input: { prompt: string; client: string | null; model: string | null; paths?: string[] },
): Promise<Envelope<PublishResponse>> {
  const body: Body<"publish"> = {
    type: "publish",
    prompt: clip(redact(input.prompt), BOUNDS.promptChars) || "(empty prompt)",
    paths: input.paths ?? [],
  };
  if (input.client) body.clientName = clip(input.client, BOUNDS.identityChars);
  if (input.model) body.model = clip(input.model, BOUNDS.identityChars);
  const env = await post<PublishResponse>(c, s, body);
  remember(s, env);
  if (input.client) s.set({ client: input.client });
  if (input.model) s.set({ model: input.model });
  if (env.ok)
    s.set({
      intentId: env.data.intentId,
      action: env.data.action,
      cursor: env.data.packet.cursor,
      scope: [],
      explicitScope: false,
      touched: [],
      pending: undefined,
      queued: undefined,
    });
  if (env.ok) received(s, env.data.packet);
  return env;
}

const STALE_INTENT = new Set(["INTENT_CLOSED", "INTENT_NOT_FOUND", "NOT_INTENT_OWNER"]);

/** Posts on the session's intent (publishing one for a client without a prompt hook); a closed intent gets a fresh prompt once. */
async function onIntent<T>(
  c: Checkout,
  s: SessionFile,
  prompt: string,
  body: (intentId: string) => AgentRequestBody,
): Promise<Envelope<T>> {
  for (let attempt = 0; ; attempt++) {
    if (!s.state.intentId) {
      const env = await publish(c, s, {
        prompt,
        client: s.state.client ?? process.env.COHENT_CLIENT ?? null,
        model: s.state.model,
      });
      if (!env.ok) return env;
    }
    const env = await post<T>(c, s, body(s.state.intentId!));
    remember(s, env);
    if (!env.ok && attempt === 0 && STALE_INTENT.has(env.error.code)) {
      s.set({ intentId: undefined });
      continue;
    }
    return env;
  }
}

export async function intent(
  c: Checkout,
  s: SessionFile,
  record: Body<"intent">["intent"],
): Promise<Envelope<IntentResponse>> {
  const clean = redactDeep(record);
  const objective = typeof clean.objective === "string" ? clean.objective : "agent work";
  const env = await onIntent<IntentResponse>(c, s, objective, (intentId) => ({
    type: "intent",
    intentId,
    intent: clean,
  }));
  if (env.ok) {
    s.set({ intentId: env.data.intentId, action: env.data.action, cursor: env.data.packet.cursor });
    received(s, env.data.packet);
  }
  return env;
}

/**
 * Claims a scope, replacing the previous claim. `explicit` marks a declared
 * scope, which then bounds every edit. With `queue`, a collision also joins
 * the claim queue: the refusal's details say where (ScopeRefusal.queued).
 */
export async function claim(
  c: Checkout,
  s: SessionFile,
  paths: string[],
  explicit: boolean,
  queue = false,
): Promise<Envelope<ScopeResponse>> {
  const env = await onIntent<ScopeResponse>(c, s, "scope claimed through the adapter", (intentId) => ({
    type: "scope",
    intentId,
    paths,
    ...(queue ? { queue: true } : {}),
  }));
  if (env.ok) {
    s.set({
      scope: env.data.paths,
      explicitScope: explicit && paths.length > 0,
      queued: undefined,
      ...(env.data.packet?.cursor ? { cursor: env.data.packet.cursor } : {}),
    });
    received(s, env.data.packet);
  } else if (env.error.code === "SCOPE_CONFLICT")
    s.set({ queued: queuePlace(env.error.details) ? paths : undefined });
  return env;
}

/** The queue place a SCOPE_CONFLICT carries when the claim joined the queue, else null. */
export function queuePlace(details: unknown): QueuePlace | null {
  const q = (details as { queued?: QueuePlace | null } | undefined)?.queued;
  return q && typeof q.place === "number" ? q : null;
}

/** Asks the holders of `paths` to let go; the note reaches them as untrusted peer text. */
export async function releaseRequest(
  c: Checkout,
  s: SessionFile,
  paths: string[],
  note: string,
): Promise<Envelope<ReleaseRequestResponse>> {
  return onIntent<ReleaseRequestResponse>(c, s, "release requested through the adapter", (intentId) => ({
    type: "release-request",
    intentId,
    paths,
    note: clip(redact(note), BOUNDS.releaseNoteChars),
  }));
}

export type CheckpointInput = {
  status: "working" | "blocked" | "completed" | "abandoned";
  summary: string;
  paths?: string[];
  pathsSource?: "provided-unverified" | "repository-derived";
  commit?: string;
};

export async function checkpoint(
  c: Checkout,
  s: SessionFile,
  input: CheckpointInput,
): Promise<Envelope<CheckpointResponse>> {
  if (!s.state.intentId)
    return fail(
      "checkpoint",
      "INVALID_INPUT",
      "This session has no work intent to checkpoint; publish a prompt or an intent first.",
    );
  const body: Body<"checkpoint"> = {
    type: "checkpoint",
    intentId: s.state.intentId,
    status: input.status,
    summary: clip(redact(input.summary), BOUNDS.summaryChars),
  };
  if (input.paths) body.paths = input.paths;
  if (input.paths && input.pathsSource) body.pathsSource = input.pathsSource;
  if (input.commit) body.commit = input.commit;
  const env = await post<CheckpointResponse>(c, s, body);
  remember(s, env);
  if (!env.ok) return env;
  received(s, env.data.packet);
  if (input.status === "completed" || input.status === "abandoned")
    s.set({ action: input.status, scope: [], explicitScope: false, touched: [], queued: undefined });
  else if (input.paths && !input.commit) s.set({ scope: env.data.paths ?? s.state.scope });
  return env;
}

/**
 * Polls for changes after the session's cursor; re-resolves its action. A
 * packet it brings is kept as pending: the guard polls in PreToolUse, and the
 * packet is injected (and acknowledged) at the next PostToolUse.
 */
export async function poll(c: Checkout, s: SessionFile, waitSeconds = 0): Promise<Envelope<PollResponse>> {
  if (!s.state.intentId) return fail("poll", "INVALID_INPUT", "This session has no work intent yet.");
  const env = (await pollAgent(
    connection(c, s.id),
    s.state.intentId,
    s.state.cursor,
    waitSeconds,
  )) as Envelope<PollResponse>;
  remember(s, env);
  if (env.ok) {
    s.set({ polledAt: Date.now(), cursor: env.data.cursor });
    const packet = env.data.packet;
    if (packet) {
      received(s, packet);
      s.set({ action: packet.action, pending: pendingOf(s.state.pending, packet) });
    }
  } else if (env.error.code === "INTENT_NOT_FOUND" || env.error.code === "NOT_INTENT_OWNER") {
    s.set({ intentId: undefined, action: undefined });
  }
  return env;
}

/** The current brief: goal, this session's latest decision, active peers (related first). */
export async function context(c: Checkout, s: SessionFile): Promise<Envelope<ContextResponse>> {
  const env = await post<ContextResponse>(
    c,
    s,
    s.state.intentId ? { type: "context", intentId: s.state.intentId } : { type: "context" },
  );
  remember(s, env);
  if (env.ok && env.data.intentId && env.data.intentId === s.state.intentId && env.data.action)
    s.set({ action: env.data.action });
  if (env.ok && env.data.intentId && env.data.intentId === s.state.intentId) received(s, env.data.packet);
  return env;
}

/** The other live intents' claimed paths: what the Git guard and `commit` check against (no packet). */
export async function scopes(c: Checkout, s: SessionFile): Promise<Envelope<ScopesResponse>> {
  const env = await post<ScopesResponse>(c, s, { type: "scopes" });
  remember(s, env);
  return env;
}

/** Reads the session's control state and renews its lease: the cheapest call that proves the service is there. */
export async function session(c: Checkout, s: SessionFile): Promise<Envelope<SessionResponse>> {
  const env = (await sessionRead(connection(c, s.id))) as Envelope<SessionResponse>;
  remember(s, env);
  return env;
}

/** How long SessionEnd gives the release: best effort, well inside the hook's budget. */
const END_SCOPE_TIMEOUT_MS = 3_000;

/**
 * SessionEnd: an empty scope for the session's open intent, which frees its
 * claim and leaves every queue at once (the service treats it so). Best
 * effort: no publish for a session without an intent.
 */
export async function endScope(c: Checkout, s: SessionFile): Promise<void> {
  const intentId = s.state.intentId;
  if (!intentId || s.state.action === "completed" || s.state.action === "abandoned") return;
  await postAgent(
    { ...connection(c, s.id), timeoutMs: END_SCOPE_TIMEOUT_MS },
    { type: "scope", intentId, paths: [] },
  );
}

/** Reports a refusal the guard made locally, so the Control Room counts it. Best effort: never delays a deny. */
export async function reportGuard(
  c: Checkout,
  s: SessionFile,
  r: {
    kind: Body<"guard">["kind"];
    tool: string;
    paths: string[];
    /** The guard's rule that refused (adapter/src/guard/rules.ts), for the Control Room's refusals by rule. */
    rule?: string;
    /** A write caught after the call (kind shell-write): the command, the peers whose paths it changed. */
    caught?: {
      command: string | null;
      peers: { intentId: string; paths: string[] }[];
      restorable: boolean;
      /** Noticed between calls: this session only noticed it (held/baseline.ts). */
      between?: boolean;
    };
  },
): Promise<void> {
  const body: Body<"guard"> = {
    type: "guard",
    kind: r.kind,
    tool: clip(r.tool, BOUNDS.identityChars),
    paths: r.paths.slice(0, BOUNDS.paths),
  };
  if (r.rule) body.rule = r.rule;
  if (r.caught) {
    if (r.caught.command !== null) body.command = clip(r.caught.command, BOUNDS.caughtCommandChars);
    body.peers = r.caught.peers
      .slice(0, BOUNDS.caughtPeers)
      .map((p) => ({ ...p, paths: p.paths.slice(0, BOUNDS.paths) }));
    body.restorable = r.caught.restorable;
    if (r.caught.between) body.between = true;
  }
  if (s.state.intentId) body.intentId = s.state.intentId;
  await postAgent({ ...connection(c, s.id), timeoutMs: 1_500 }, body);
}

/** What changed in a guard file, as GuardFileChange takes it: letters, digits and a few signs, one short phrase; null when nothing is left. */
function changePhrase(text: string | null | undefined): string | undefined {
  const phrase = (text ?? "")
    .replace(/[^A-Za-z0-9 .,:()_/-]+/g, " ")
    .replace(/\s+/g, " ")
    .trim()
    .replace(/^[^A-Za-z0-9]+/, "")
    .slice(0, BOUNDS.wiringPhraseChars)
    .trimEnd();
  return phrase || undefined;
}

/** A guard file's path as GuardFileChange takes it: one line, no < >, no . or .. segment, its end kept when too long. */
function reportedPath(path: string): string {
  const clean = path
    .replace(/[\x00-\x1f\x7f<>\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, "?")
    .split("/")
    .filter((seg, i) => i === 0 || (seg !== "." && seg !== ".."))
    .join("/")
    .replace(/^\.\.?(?=\/|$)/, "?");
  return (clean.length > BOUNDS.pathChars ? "…" + clean.slice(-(BOUNDS.pathChars - 1)) : clean) || "?";
}

/**
 * The body of a guard-files report (pure): every field cut or cleaned to
 * what the protocol accepts, so that a strange path never costs the pause.
 * Null when there is no file to report.
 */
export function guardFilesBody(
  r: {
    tool: string;
    command: string | null;
    files: { path: string; change?: string | null }[];
    undone: boolean;
  },
  intentId: string | null,
): Body<"guard"> | null {
  if (r.files.length === 0) return null;
  const body: Body<"guard"> = {
    type: "guard",
    kind: "guard-files",
    tool: clip(r.tool, BOUNDS.identityChars) || "unknown",
    paths: [],
    files: r.files.slice(0, BOUNDS.wiringChanges).map((f) => {
      const change = changePhrase(f.change);
      return change ? { path: reportedPath(f.path), change } : { path: reportedPath(f.path) };
    }),
    undone: r.undone,
  };
  if (r.command !== null) body.command = clip(r.command, BOUNDS.caughtCommandChars);
  if (intentId) body.intentId = intentId;
  return body;
}

/**
 * Reports a call of this session's that changed the guard's own files (the
 * checkout's wiring, or a client's user settings: host-settings.ts), after
 * the adapter put them back (`undone`) or failed to. The service records it
 * and pauses the session with the reason until a person resumes it: its next
 * kill-switch read answers paused. The envelope says whether it was taken.
 */
export async function reportGuardFiles(
  c: Checkout,
  s: SessionFile,
  r: {
    tool: string;
    command: string | null;
    files: { path: string; change?: string | null }[];
    undone: boolean;
  },
  timeoutMs = 3_000,
): Promise<Envelope<GuardResponse> | null> {
  const body = guardFilesBody(r, s.state.intentId ?? null);
  if (!body) return null;
  return (await postAgent({ ...connection(c, s.id), timeoutMs }, body)) as Envelope<GuardResponse>;
}

/**
 * Reports the guard wiring's state of this checkout (wiring-check.ts): the
 * files that differ from what init wrote, or none, which clears an earlier
 * report. `tool` says what checked: a session start, or doctor.
 */
export async function reportWiring(
  c: Checkout,
  sessionId: string,
  tool: string,
  wiring: WiringReport,
  timeoutMs: number,
): Promise<Envelope<GuardResponse>> {
  return (await postAgent(
    { ...connection(c, sessionId), timeoutMs },
    { type: "guard", kind: "wiring", tool: clip(tool, BOUNDS.identityChars), wiring },
  )) as Envelope<GuardResponse>;
}

/** Acknowledges the characters of a packet actually injected; once per packet. Undercounting is the only cost of a failure. */
export async function ack(c: Checkout, sessionId: string, packetId: string, chars: number): Promise<void> {
  await postAgent({ ...connection(c, sessionId), signal: undefined }, { type: "ack", packetId, chars }).catch(
    () => undefined,
  );
}
