// The probes' harness: a throwaway Git checkout and HOME (no backend, no
// `cohent init`), the stand-in hook (standin-hook.cjs) copied beside its plan
// and log outside the checkout, and one run of a real client binary driven by
// a scripted model. Copilot CLI and OpenCode talk to the Chat Completions fake,
// Gemini CLI to the Gemini fake. What the probes measure is written up in
// MORE-CLIENTS-MEASURED.md; the payloads are kept as fixtures under
// test/adapter/fixtures/payloads/.
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnSync } from "node:child_process";
import { binPath, cacheRoot, installDir, type ClientSpec } from "./clients.ts";
import { chatToolResults, CHAT_CALL_PREFIX, CHAT_SUB_PREFIX, type FakeChat } from "./fake-chat.ts";
import { geminiToolResults, GEMINI_CALL_PREFIX, GEMINI_SUB_PREFIX, type FakeGemini } from "./fake-gemini.ts";
import { spawnClient, workspaceTmp } from "./harness.ts";
import { Script, type Step } from "./script.ts";

const here = dirname(fileURLToPath(import.meta.url));
const STANDIN = join(here, "standin-hook.cjs");
const STANDIN_PLUGIN = join(here, "standin-plugin.mjs");
const KEEP = process.env.COHENT_CLIENTS_KEEP === "1";
const RUN_TIMEOUT_MS = Number(process.env.COHENT_CLIENTS_RUN_TIMEOUT_MS) || 120_000;

export interface ProbeWorkspace {
  dir: string;
  repo: string;
  home: string;
  /** Where the stand-in hook, its plan and its log live (outside the checkout). */
  hookDir: string;
  dispose(): void;
}

/** One rule of the stand-in's plan (see standin-hook.cjs). */
export interface StandinRule {
  event?: string;
  tool?: string;
  /** A regular expression over the raw stdin. */
  match?: string;
  stdout?: string;
  stderr?: string;
  exit?: number;
  sleepMs?: number;
  throw?: boolean;
}

/** One call of the stand-in hook as it logged it. */
export interface HookCall {
  t: number;
  label: string;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  raw: string;
  payload: any;
}

function git(repo: string, args: string[], home: string): void {
  const r = spawnSync("git", args, {
    cwd: repo,
    env: { ...process.env, HOME: home, GIT_CONFIG_NOSYSTEM: "1" },
  });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
}

export function probeWorkspace(): ProbeWorkspace {
  const base = process.env.COHENT_CLIENTS_RUNS || join(cacheRoot(), "runs");
  mkdirSync(base, { recursive: true });
  const dir = realpathSync(mkdtempSync(join(base, "probe-")));
  const repo = join(dir, "repo");
  const home = join(dir, "home");
  const hookDir = join(dir, "hook");
  for (const d of [repo, home, hookDir, join(repo, "src"), join(repo, "docs")])
    mkdirSync(d, { recursive: true });
  writeFileSync(join(repo, "README.md"), "# demo\nREADME-MARKER-4417\n");
  writeFileSync(join(repo, "src", "app.ts"), "export const app = 1;\n");
  writeFileSync(join(repo, "docs", "guide.md"), "guide\n");
  git(repo, ["init", "-q", "-b", "main"], home);
  git(repo, ["config", "user.email", "dev@example.com"], home);
  git(repo, ["config", "user.name", "Dev"], home);
  git(repo, ["add", "-A"], home);
  git(repo, ["commit", "-q", "-m", "init"], home);
  copyFileSync(STANDIN, join(hookDir, "standin-hook.cjs"));
  return {
    dir,
    repo,
    home,
    hookDir,
    dispose: () => void (KEEP || rmSync(dir, { recursive: true, force: true })),
  };
}

/** The command a client's hook entry runs: the stand-in, labelled with the event it is wired for. */
export function standinCommand(ws: ProbeWorkspace, label: string): string {
  return `node ${join(ws.hookDir, "standin-hook.cjs")} ${label}`;
}

/** The stand-in OpenCode plugin, in `.opencode/<folder>/standin.js` (`plugin` in every pinned version). */
export function installStandinPlugin(ws: ProbeWorkspace, folder = "plugin", source?: string): string {
  const dir = join(ws.repo, ".opencode", folder);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "standin.js");
  writeFileSync(
    file,
    source ?? readFileSync(STANDIN_PLUGIN, "utf8").replace(`"STANDIN_DIR"`, JSON.stringify(ws.hookDir)),
  );
  return file;
}

export function setPlan(ws: ProbeWorkspace, rules: StandinRule[]): void {
  writeFileSync(join(ws.hookDir, "standin-plan.json"), JSON.stringify({ rules }));
}

/** Every call the stand-in logged so far, in order; `clear` empties the log. */
export function hookCalls(ws: ProbeWorkspace, clear = false): HookCall[] {
  const file = join(ws.hookDir, "standin-log.jsonl");
  if (!existsSync(file)) return [];
  const calls = readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as HookCall);
  if (clear) rmSync(file);
  return calls;
}

export interface ProbeRun {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** Each step's tool result as the model received it, by step id. */
  results: Map<string, string>;
  /** Every model request body of this run, as JSON text. */
  modelSaw: string[];
  /** Names of the tools the client offered in its first main request. */
  tools: string[];
  requests: any[];
  hooks: HookCall[];
  scriptErrors: unknown[];
}

function cleanEnv(ws: ProbeWorkspace, extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const k of ["PATH", "LANG", "TZ", "USER", "LOGNAME", "SHELL"])
    if (process.env[k] !== undefined) env[k] = process.env[k];
  return { ...env, TMPDIR: workspaceTmp(ws.repo), HOME: ws.home, NO_COLOR: "1", TERM: "dumb", ...extra };
}

function results(
  bodies: any[],
  steps: Step[],
  script: Script,
  prefix: string,
  of: (b: any) => { callId: string; output: string }[],
): Map<string, string> {
  const byId = new Map<string, string>();
  for (const b of bodies) for (const o of of(b)) byId.set(o.callId, o.output);
  const out = new Map<string, string>();
  for (const s of steps) {
    const r = byId.get(script.callIdOf(s.id, prefix));
    if (r !== undefined) out.set(s.id, r);
  }
  return out;
}

export type CopilotTrust = "flag" | "saved" | "none";

/**
 * `copilot -p PROMPT --allow-all-tools` in BYOK mode (COPILOT_PROVIDER_BASE_URL at the fake, offline):
 * trust `flag` passes --trust-folder, `saved` writes the folder into ~/.copilot/config.json's
 * trustedFolders first, `none` neither.
 */
export async function runCopilot(
  client: ClientSpec,
  ws: ProbeWorkspace,
  model: FakeChat,
  steps: Step[],
  opts: { prompt: string; trust?: CopilotTrust; subSteps?: Step[]; env?: NodeJS.ProcessEnv; args?: string[] },
): Promise<ProbeRun> {
  const script = new Script(steps);
  const sub = opts.subSteps ? new Script(opts.subSteps) : null;
  model.setScript(script, sub);
  const trust = opts.trust ?? "saved";
  if (trust === "saved") {
    mkdirSync(join(ws.home, ".copilot"), { recursive: true });
    writeFileSync(join(ws.home, ".copilot", "config.json"), JSON.stringify({ trustedFolders: [ws.repo] }));
  }
  const env = cleanEnv(ws, {
    COPILOT_PROVIDER_BASE_URL: model.baseUrl,
    COPILOT_PROVIDER_API_KEY: "dummy",
    COPILOT_MODEL: "gpt-5.4",
    COPILOT_OFFLINE: "true",
    COPILOT_AUTO_UPDATE: "false",
    ...opts.env,
  });
  const args = [
    "-p",
    opts.prompt,
    "--allow-all-tools",
    ...(trust === "flag" ? ["--trust-folder"] : []),
    ...(opts.args ?? []),
  ];
  return finish(
    client,
    ws,
    model.requests,
    "/v1/chat/completions",
    steps,
    script,
    sub,
    opts.subSteps,
    args,
    env,
    chatToolResults,
    CHAT_CALL_PREFIX,
  );
}

/** The folder install.ts fills with `@opencode-ai/plugin` at the client's version. */
export function pluginDepsDir(client: ClientSpec): string {
  return join(installDir(client), "plugin-deps");
}

function seedPluginDeps(client: ClientSpec, dir: string): void {
  const deps = pluginDepsDir(client);
  if (!existsSync(join(deps, "node_modules"))) return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), readFileSync(join(deps, "package.json")));
  if (existsSync(join(deps, "package-lock.json")))
    writeFileSync(join(dir, "package-lock.json"), readFileSync(join(deps, "package-lock.json")));
  if (!existsSync(join(dir, "node_modules")))
    symlinkSync(join(deps, "node_modules"), join(dir, "node_modules"));
}

/** `opencode run PROMPT` with a custom provider at the fake, in an isolated HOME and XDG dirs. */
export async function runOpencode(
  client: ClientSpec,
  ws: ProbeWorkspace,
  model: FakeChat,
  steps: Step[],
  opts: { prompt: string; subSteps?: Step[]; env?: NodeJS.ProcessEnv; config?: Record<string, unknown> },
): Promise<ProbeRun> {
  const script = new Script(steps);
  const sub = opts.subSteps ? new Script(opts.subSteps) : null;
  model.setScript(script, sub);
  writeFileSync(
    join(ws.repo, "opencode.json"),
    JSON.stringify(
      {
        $schema: "https://opencode.ai/config.json",
        provider: {
          fake: {
            npm: "@ai-sdk/openai-compatible",
            name: "fake",
            options: { baseURL: model.baseUrl, apiKey: "dummy" },
            models: { m1: { name: "m1", tool_call: true } },
          },
        },
        model: "fake/m1",
        small_model: "fake/m1",
        permission: { edit: "allow", bash: "allow", webfetch: "allow" },
        autoupdate: false,
        share: "disabled",
        ...opts.config,
      },
      null,
      2,
    ),
  );
  const x = join(ws.dir, "xdg");
  // OpenCode installs @opencode-ai/plugin into every config folder it loads (the project's .opencode/ and
  // the user's) from the npm registry at start-up, and waits about 70 s for that to fail offline: give both
  // folders the copy install.ts put beside the client, so a run needs no network.
  seedPluginDeps(client, join(ws.repo, ".opencode"));
  seedPluginDeps(client, join(x, "config", "opencode"));
  const env = cleanEnv(ws, {
    XDG_CONFIG_HOME: join(x, "config"),
    XDG_DATA_HOME: join(x, "data"),
    XDG_CACHE_HOME: join(x, "cache"),
    XDG_STATE_HOME: join(x, "state"),
    OPENCODE_DISABLE_AUTOUPDATE: "true",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "true",
    OPENCODE_DISABLE_MODELS_FETCH: "true",
    ...opts.env,
  });
  return finish(
    client,
    ws,
    model.requests,
    "/v1/chat/completions",
    steps,
    script,
    sub,
    opts.subSteps,
    ["run", opts.prompt],
    env,
    chatToolResults,
    CHAT_CALL_PREFIX,
  );
}

/** `gemini -p PROMPT --yolo` at the Gemini fake (GOOGLE_GEMINI_BASE_URL), API-key auth chosen in ~/.gemini/settings.json. */
export async function runGemini(
  client: ClientSpec,
  ws: ProbeWorkspace,
  model: FakeGemini,
  steps: Step[],
  opts: {
    prompt: string;
    trusted?: boolean;
    subSteps?: Step[];
    env?: NodeJS.ProcessEnv;
    args?: string[];
    userSettings?: Record<string, unknown>;
  },
): Promise<ProbeRun> {
  const script = new Script(steps);
  const sub = opts.subSteps ? new Script(opts.subSteps) : null;
  model.setScript(script, sub);
  mkdirSync(join(ws.home, ".gemini"), { recursive: true });
  writeFileSync(
    join(ws.home, ".gemini", "settings.json"),
    JSON.stringify({
      security: { auth: { selectedType: "gemini-api-key" } },
      privacy: { usageStatisticsEnabled: false },
      general: { disableAutoUpdate: true, disableUpdateNag: true },
      ...opts.userSettings,
    }),
  );
  const env = cleanEnv(ws, {
    GEMINI_API_KEY: "dummy",
    GOOGLE_GEMINI_BASE_URL: model.url,
    ...(opts.trusted === false ? {} : { GEMINI_CLI_TRUST_WORKSPACE: "true" }),
    ...opts.env,
  });
  const args = ["-p", opts.prompt, "-m", "gemini-2.5-flash", "--yolo", ...(opts.args ?? [])];
  return finish(
    client,
    ws,
    model.requests,
    "/v1beta/models/",
    steps,
    script,
    sub,
    opts.subSteps,
    args,
    env,
    geminiToolResults,
    GEMINI_CALL_PREFIX,
    GEMINI_SUB_PREFIX,
  );
}

async function finish(
  client: ClientSpec,
  ws: ProbeWorkspace,
  all: { url: string; body: any }[],
  urlPrefix: string,
  steps: Step[],
  script: Script,
  sub: Script | null,
  subSteps: Step[] | undefined,
  args: string[],
  env: NodeJS.ProcessEnv,
  of: (b: any) => { callId: string; output: string }[],
  prefix: string,
  subPrefix = CHAT_SUB_PREFIX,
): Promise<ProbeRun> {
  const before = all.length;
  hookCalls(ws, true);
  const r = await spawnClient(binPath(client), args, ws.repo, env, RUN_TIMEOUT_MS);
  const mine = all.slice(before).filter((q) => q.url.startsWith(urlPrefix));
  const bodies = mine.map((q) => q.body);
  const res = results(bodies, steps, script, prefix, of);
  if (sub && subSteps) for (const [k, v] of results(bodies, subSteps, sub, subPrefix, of)) res.set(k, v);
  const first = bodies.find((b) => Array.isArray(b?.tools) && b.tools.length > 0);
  return {
    ...r,
    results: res,
    modelSaw: bodies.map((b) => JSON.stringify(b)),
    tools: first ? toolNames(first) : [],
    requests: bodies,
    hooks: hookCalls(ws),
    scriptErrors: [...script.errors, ...(sub?.errors ?? [])],
  };
}

function toolNames(body: any): string[] {
  return (body.tools as any[]).flatMap((t) =>
    Array.isArray(t?.functionDeclarations)
      ? t.functionDeclarations.map((f: any) => String(f.name))
      : [String(t?.function?.name ?? t?.custom?.name ?? t?.name ?? `<${t?.type}>`)],
  );
}
