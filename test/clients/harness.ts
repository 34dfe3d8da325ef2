// One conformance run: a real backend on loopback, a throwaway Git checkout
// prepared with `cohent init`, an isolated HOME holding the credential, and
// the real client binary driven by a scripted model.
import { spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { admin } from "@cohent/backend";
import { startBackend, type TestBackend } from "../helpers/backend.ts";
import { binPath, cacheRoot, type ClientSpec } from "./clients.ts";
import { codexConfigToml, codexHookHashes } from "./codex-trust.ts";
import {
  claudeToolResults,
  CLAUDE_CALL_PREFIX,
  CLAUDE_SUB_PREFIX,
  type FakeAnthropic,
} from "./fake-anthropic.ts";
import { codexToolOutputs, CODEX_CALL_PREFIX, type FakeOpenAI } from "./fake-openai.ts";
import { Script, type Step } from "./script.ts";

const here = dirname(fileURLToPath(import.meta.url));
export const WORKSPACE = resolve(here, "..", "..");
const COHENT_BIN = join(WORKSPACE, "node_modules", ".bin", "cohent");
export const REPO = "acme/demo";
const KEEP = process.env.COHENT_CLIENTS_KEEP === "1";
/** A stdio MCP server with one tool, `touch` (mcp__demo__touch). */
export const MCP_SERVER = join(here, "mcp-touch.mjs");

export interface Workspace {
  dir: string;
  repo: string;
  home: string;
  codexHome: string;
  backend: TestBackend;
  backendStopped: boolean;
  aliceToken: string;
  bobToken: string;
  stopBackend(): Promise<void>;
  dispose(): Promise<void>;
}

function sh(cwd: string, cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): string {
  const r = spawnSync(cmd, args, { cwd, env, encoding: "utf8" });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(" ")} failed (${r.status}): ${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** A fresh backend, a checkout with `cohent init`, and alice's credential in an isolated HOME. */
export async function prepareWorkspace(): Promise<Workspace> {
  const backend = await startBackend();
  await backend.addRepo(REPO, "Keep the demo app tidy");
  const aliceToken = await backend.issueToken(REPO, "alice");
  const bobToken = await backend.issueToken(REPO, "bob", "Claude Code");
  // Not under /tmp: Codex refuses to create its PATH helpers (apply_patch) under a temporary CODEX_HOME.
  const base = process.env.COHENT_CLIENTS_RUNS || join(cacheRoot(), "runs");
  mkdirSync(base, { recursive: true });
  const dir = realpathSync(mkdtempSync(join(base, "run-")));
  const repo = join(dir, "repo");
  const home = join(dir, "home");
  const codexHome = join(dir, "codex-home");
  for (const d of [repo, home, codexHome, join(repo, "src"), join(repo, "docs")])
    mkdirSync(d, { recursive: true });
  writeFileSync(join(repo, "README.md"), "# demo\nREADME-MARKER-4417\n");
  writeFileSync(join(repo, "src", "app.ts"), "export const app = 1;\n");
  writeFileSync(join(repo, "docs", "guide.md"), "guide\n");
  const gitEnv = { ...process.env, HOME: home, GIT_CONFIG_NOSYSTEM: "1" };
  sh(repo, "git", ["init", "-q", "-b", "main"], gitEnv);
  sh(repo, "git", ["config", "user.email", "dev@example.com"], gitEnv);
  sh(repo, "git", ["config", "user.name", "Dev"], gitEnv);
  sh(repo, COHENT_BIN, ["init", "--server", backend.url, "--repo", REPO], { ...process.env, HOME: home });
  sh(repo, "git", ["add", "-A"], gitEnv);
  sh(repo, "git", ["commit", "-q", "-m", "init"], gitEnv);
  // What `bootstrap --approve` leaves behind: the credential, outside the repository.
  const credDir = join(home, ".config", "cohent");
  mkdirSync(credDir, { recursive: true, mode: 0o700 });
  writeFileSync(
    join(credDir, "credentials.json"),
    JSON.stringify(
      {
        version: 1,
        services: {
          [backend.url]: {
            [REPO]: { token: aliceToken, person: "alice", savedAt: new Date().toISOString() },
          },
        },
      },
      null,
      2,
    ),
    { mode: 0o600 },
  );
  const ws: Workspace = {
    dir,
    repo,
    home,
    codexHome,
    backend,
    backendStopped: false,
    aliceToken,
    bobToken,
    stopBackend: async () => {
      if (ws.backendStopped) return;
      ws.backendStopped = true;
      await backend.stop();
    },
    dispose: async () => {
      await ws.stopBackend();
      if (KEEP) return;
      // An OpenCode run leaves an adapter process behind for its stop (session.idle), which may still be
      // writing under .cohent/ for a moment: the folder goes once nothing writes there any more.
      for (let i = 0; ; i++)
        try {
          return rmSync(dir, { recursive: true, force: true });
        } catch (err) {
          if (i === 10) return void process.stderr.write(`[clients] left ${dir}: ${String(err)}\n`);
          await new Promise((r) => setTimeout(r, 300));
        }
    },
  };
  return ws;
}

/** Sessions of the agent under test (alice's token), as the Control Room lists them. */
export async function agentSessions(ws: Workspace) {
  return (await admin.listSessions(ws.backend.deps, REPO)).filter((s) => s.person === "alice");
}

/** The agent's work intents as stored (open or closed), with the agent-authored record and checkpoints. */
export async function agentIntents(ws: Workspace) {
  const ids = (await agentSessions(ws)).map((s) => s.id);
  const rows = await ws.backend.deps.db.prisma.$transaction((tx) =>
    tx.intent.findMany({
      where: { sessionId: { in: ids } },
      include: { checkpoints: { orderBy: { createdAt: "asc" } } },
      orderBy: { createdAt: "asc" },
    }),
  );
  return rows.map((r) => ({
    id: r.id,
    client: r.client,
    model: r.model,
    prompt: r.prompt,
    state: r.state,
    lastAction: r.lastAction,
    record: r.record ? (JSON.parse(r.record) as { objective?: string }) : null,
    checkpoints: r.checkpoints.map((c) => ({
      status: c.status,
      paths: c.paths ? (JSON.parse(c.paths) as string[]) : null,
      /** When the backend stored it (epoch ms), to order it against the hooks (HookSeen.at). */
      at: c.createdAt.getTime(),
    })),
  }));
}

/** Pause, cancel or resume every session of the agent under test, as a person in the Control Room would. */
export async function control(ws: Workspace, kind: "pause" | "cancel" | "resume"): Promise<void> {
  const sessions = await agentSessions(ws);
  if (sessions.length === 0) throw new Error(`no agent session to ${kind}`);
  for (const s of sessions)
    await admin.controlSession(ws.backend.deps, { sessionId: s.id, kind, actor: "carol" });
}

export function writeCodexHome(
  ws: Workspace,
  model: FakeOpenAI,
  sandbox: "workspace-write" | "danger-full-access",
  untrusted = false,
  mcp = false,
  extraToml = "",
): void {
  const hooks = untrusted ? [] : codexHookHashes(join(ws.repo, ".codex", "hooks.json"));
  let toml = codexConfigToml({ modelBaseUrl: model.baseUrl, repoRoot: ws.repo, sandbox, hooks });
  // `codex exec` runs with approval policy never: an MCP tool runs only when its server's tools are pre-approved.
  if (mcp)
    toml += `\n[mcp_servers.demo]\ncommand = "node"\nargs = [${JSON.stringify(MCP_SERVER)}]\ndefault_tools_approval_mode = "approve"\n`;
  writeFileSync(join(ws.codexHome, "config.toml"), toml + extraToml);
}

export interface ToolResult {
  callId: string;
  output: string;
  isError?: boolean;
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** What the client sent back to the model, by step id (the last result for that call). */
  results: Map<string, ToolResult>;
  requests: number;
  /** Every model request of this run, as the fake server received it (JSON): tool results and injected context alike. */
  modelSaw: string[];
  scriptErrors: unknown[];
  /** Claude runs with `hookLog`: every hook payload the client sent, in arrival order, stamped with the time it arrived. */
  hooks: HookSeen[];
}

/** One hook payload as a logging hook (alongside the project's) received it. */
export interface HookSeen {
  /** Milliseconds since the client was started. */
  ms: number;
  /** When it arrived (epoch ms). */
  at: number;
  event: string;
  agentId: string | null;
  agentType: string | null;
  tool: string | null;
  payload: Record<string, unknown>;
}

/**
 * Every event Claude Code 2.1.197 and 2.1.332 both accept in settings
 * (read off the binaries) and that can fire in a `-p` run: the logger hears
 * the ones the project does not wire (SubagentStart, StopFailure, ...) too.
 */
const LOGGED_EVENTS = [
  "SessionStart",
  "UserPromptSubmit",
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "Notification",
  "Stop",
  "StopFailure",
  "SubagentStart",
  "SubagentStop",
  "SessionEnd",
  "PreCompact",
  "TaskCreated",
  "TaskCompleted",
];

/** A `--settings` file whose hooks append each payload, with its arrival time, to `log` (one JSON line each). */
function hookLogSettings(dir: string, log: string): string {
  const script = join(dir, "hook-log.cjs");
  writeFileSync(
    script,
    `let d = "";
process.stdin.on("data", (c) => (d += c)).on("end", () => {
  require("fs").appendFileSync(${JSON.stringify(log)}, JSON.stringify({ t: Date.now(), p: JSON.parse(d) }) + "\\n");
});
`,
  );
  const hook = { type: "command", command: `node ${JSON.stringify(script)}` };
  const hooks = Object.fromEntries(
    LOGGED_EVENTS.map((e) => [e, [/Tool/.test(e) ? { matcher: "*", hooks: [hook] } : { hooks: [hook] }]]),
  );
  const file = join(dir, "hook-log-settings.json");
  writeFileSync(file, JSON.stringify({ hooks }, null, 2));
  return file;
}

function readHookLog(log: string, t0: number): HookSeen[] {
  if (!existsSync(log)) return [];
  const str = (v: unknown) => (typeof v === "string" ? v : null);
  return readFileSync(log, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { t: number; p: Record<string, unknown> })
    .sort((a, b) => a.t - b.t)
    .map(({ t, p }) => ({
      ms: t - t0,
      at: t,
      event: str(p.hook_event_name) ?? "?",
      agentId: str(p.agent_id),
      agentType: str(p.agent_type),
      tool: str(p.tool_name),
      payload: p,
    }));
}

/** One line per hook payload, for a failure message or COHENT_CLIENTS_DEBUG: a Stop's background tasks, a prompt's start. */
export function hookTimeline(hooks: HookSeen[]): string {
  const tasks = (p: Record<string, unknown>) =>
    Array.isArray(p.background_tasks)
      ? ` background_tasks=[${(p.background_tasks as { id?: string; type?: string; status?: string }[])
          .map((t) => `${t.type}:${t.id}:${t.status}`)
          .join(",")}]`
      : "";
  const response = (p: Record<string, unknown>) => {
    const id = (p.tool_response as { backgroundTaskId?: unknown } | undefined)?.backgroundTaskId;
    return typeof id === "string" ? ` backgroundTaskId=${id}` : "";
  };
  return hooks
    .map(
      (h) =>
        `${String(h.ms).padStart(6)} ms ${h.event}${h.tool ? ` ${h.tool}` : ""}` +
        `${h.agentId ? ` agent_id=${h.agentId}` : ""}${tasks(h.payload)}${response(h.payload)}` +
        (typeof h.payload.prompt === "string"
          ? ` prompt=${JSON.stringify(h.payload.prompt.slice(0, 24))}`
          : ""),
    )
    .join("\n");
}

/**
 * The workspace's own temporary folder, the clients' TMPDIR: the warm guards its hooks start
 * (adapter/src/loader/warm-*.ts) keep their sockets there, so that a run's guards are counted
 * (spawnClient) and end with the workspace.
 */
export function workspaceTmp(repo: string): string {
  const dir = join(dirname(repo), "tmp");
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** How many warm guards' sockets the hooks of a client run left in its TMPDIR (one per agent's environment). */
function warmGuards(env: NodeJS.ProcessEnv): number {
  const uid = typeof process.getuid === "function" ? process.getuid() : 0;
  try {
    return readdirSync(join(env.TMPDIR ?? "/tmp", `cohent-warm-${uid}`)).filter((n) => n.endsWith(".sock"))
      .length;
  } catch {
    return 0;
  }
}

function baseEnv(ws: Workspace): NodeJS.ProcessEnv {
  const keep = ["PATH", "LANG", "TERM", "TZ", "USER", "LOGNAME", "SHELL"];
  const env: NodeJS.ProcessEnv = {};
  for (const k of keep) if (process.env[k] !== undefined) env[k] = process.env[k];
  env.TMPDIR = workspaceTmp(ws.repo);
  env.HOME = ws.home;
  env.NO_COLOR = "1";
  return env;
}

/** Codex's npm entry is a `#!/usr/bin/env node` launcher: run it with this node, so a PATH without node (scenario node-missing) still starts the client. */
function launcher(bin: string, args: string[]): [string, string[]] {
  const head = readFileSync(realpathSync(bin), { encoding: "latin1" }).slice(0, 64);
  return /^#!.*\bnode\b/.test(head) ? [process.execPath, [bin, ...args]] : [bin, args];
}

export function spawnClient(
  bin: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  return new Promise((resolvePromise) => {
    const t0 = Date.now();
    const [cmd, argv] = launcher(bin, args);
    const child = spawn(cmd, argv, { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
    const timer = setTimeout(() => {
      stderr += `\n[harness] killed after ${timeoutMs} ms`;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        /* gone */
      }
    }, timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      // Within a handful per run: a client that set a variable anew for each hook would start one per call.
      if (env.TMPDIR?.endsWith("/tmp") && env.TMPDIR !== "/tmp")
        process.stderr.write(
          `[clients] ${bin.split("/").slice(-3).join("/")}: ${warmGuards(env)} warm guard(s) after the run\n`,
        );
      resolvePromise({ code, stdout, stderr, ms: Date.now() - t0 });
    });
  });
}

const RUN_TIMEOUT_MS = Number(process.env.COHENT_CLIENTS_RUN_TIMEOUT_MS) || 150_000;

/** One `codex exec --json PROMPT` in the checkout; never the hook-trust bypass flag. */
export async function runCodex(
  client: ClientSpec,
  ws: Workspace,
  model: FakeOpenAI,
  steps: Step[],
  opts: {
    prompt: string;
    sandbox?: "workspace-write" | "danger-full-access";
    keepTrust?: boolean;
    untrusted?: boolean;
    mcp?: boolean;
    env?: NodeJS.ProcessEnv;
    codexToml?: string;
  },
): Promise<RunResult> {
  const script = new Script(steps);
  model.setScript(script);
  const before = model.requests.length;
  // keepTrust: run with the trust store as it is (a hooks file changed since is not re-trusted).
  // untrusted: the project is trusted but no hook hash is recorded (a person never pressed "trust all").
  if (!opts.keepTrust)
    writeCodexHome(
      ws,
      model,
      opts.sandbox ?? "workspace-write",
      !!opts.untrusted,
      !!opts.mcp,
      opts.codexToml ?? "",
    );
  const env = {
    ...baseEnv(ws),
    CODEX_HOME: ws.codexHome,
    FAKE_OPENAI_API_KEY: "dummy",
    RUST_LOG: "error",
    ...opts.env,
  };
  const r = await spawnClient(binPath(client), ["exec", "--json", opts.prompt], ws.repo, env, RUN_TIMEOUT_MS);
  const mine = model.requests.slice(before).filter((q) => q.url.startsWith("/v1/responses"));
  const results = new Map<string, ToolResult>();
  for (const q of mine) for (const o of codexToolOutputs(q.body)) results.set(o.callId, o);
  return {
    ...r,
    results: byStep(results, steps, CODEX_CALL_PREFIX, script),
    requests: mine.length,
    modelSaw: mine.map((q) => JSON.stringify(q.body)),
    scriptErrors: script.errors,
    hooks: [],
  };
}

/** One `claude -p PROMPT --output-format json --permission-mode acceptEdits --allowedTools Bash`. */
/** The demo MCP server (one `touch` tool), as Claude Code's --mcp-config. */
export const MCP_CONFIG = JSON.stringify({
  mcpServers: { demo: { type: "stdio", command: "node", args: [MCP_SERVER] } },
});

export async function runClaude(
  client: ClientSpec,
  ws: Workspace,
  model: FakeAnthropic,
  steps: Step[],
  opts: {
    prompt: string;
    mcp?: boolean;
    env?: NodeJS.ProcessEnv;
    subSteps?: Step[];
    claudeMcp?: { config: string; tools: string[] };
    /** Log every hook payload (RunResult.hooks), through extra hooks given with `--settings`, outside the checkout. */
    hookLog?: boolean;
  },
): Promise<RunResult> {
  const script = new Script(steps);
  const sub = opts.subSteps ? new Script(opts.subSteps) : null;
  model.setScript(script, ws.repo, sub);
  const before = model.requests.length;
  const log = join(ws.dir, `hooks-${Date.now()}.jsonl`);
  const logArgs = opts.hookLog ? ["--settings", hookLogSettings(ws.dir, log)] : [];
  const env = {
    ...baseEnv(ws),
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: "dummy",
    CLAUDE_CONFIG_DIR: join(ws.home, ".claude"),
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    ...opts.env,
  };
  const t0 = Date.now();
  const r = await spawnClient(
    binPath(client),
    [
      "-p",
      opts.prompt,
      "--output-format",
      "json",
      "--permission-mode",
      "acceptEdits",
      ...logArgs,
      ...(opts.claudeMcp
        ? [
            "--mcp-config",
            opts.claudeMcp.config,
            "--strict-mcp-config",
            "--allowedTools",
            "Bash",
            ...opts.claudeMcp.tools,
          ]
        : opts.mcp
          ? // Not --strict-mcp-config: the checkout's .mcp.json holds the guard's own server (claude-wiring.ts).
            ["--mcp-config", MCP_CONFIG, "--allowedTools", "Bash", "mcp__demo__touch"]
          : ["--allowedTools", "Bash"]),
    ],
    ws.repo,
    env,
    RUN_TIMEOUT_MS,
  );
  const mine = model.requests.slice(before).filter((q) => q.url.startsWith("/v1/messages"));
  const results = new Map<string, ToolResult>();
  for (const q of mine) for (const o of claudeToolResults(q.body)) results.set(o.callId, o);
  const byId = byStep(results, steps, CLAUDE_CALL_PREFIX, script);
  if (sub) for (const [k, v] of byStep(results, opts.subSteps!, CLAUDE_SUB_PREFIX, sub)) byId.set(k, v);
  return {
    ...r,
    results: byId,
    requests: mine.length,
    modelSaw: mine.map((q) => JSON.stringify(q.body)),
    scriptErrors: [...script.errors, ...(sub?.errors ?? [])],
    hooks: readHookLog(log, t0),
  };
}

function byStep(
  results: Map<string, ToolResult>,
  steps: Step[],
  prefix: string,
  script: Script,
): Map<string, ToolResult> {
  const out = new Map<string, ToolResult>();
  for (const s of steps) {
    const r = results.get(script.callIdOf(s.id, prefix));
    if (r) out.set(s.id, r);
  }
  return out;
}

export function fileExists(ws: Workspace, rel: string): boolean {
  return existsSync(join(ws.repo, rel));
}

export function readRepoFile(ws: Workspace, rel: string): string {
  return readFileSync(join(ws.repo, rel), "utf8");
}
