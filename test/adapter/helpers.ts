import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildAdapter } from "../../adapter/build.mjs";
import { ADAPTER_FILES } from "../../adapter/src/installer/init.js";

/**
 * End-to-end helpers: the adapter is built with esbuild exactly as shipped,
 * copied into a scratch checkout's .cohent/, and run as a child process.
 * Children run asynchronously: the backend lives in this process and must
 * keep answering while they wait.
 */

let built: Promise<string> | null = null;
/** Builds the bundle once per test worker, into a private file (parallel workers never race on one output). */
export function builtAdapter(): Promise<string> {
  built ??= buildAdapter({
    quiet: true,
    outfile: path.join(mkdtempSync(path.join(os.tmpdir(), "cohent-bundle-")), "cohent.mjs"),
  });
  return built;
}

export interface Checkout {
  root: string;
  home: string;
  script: string;
}

/** A scratch checkout wired to a service, with its own HOME (credential store) and the built adapter. */
export async function makeCheckout(service: string | null, repository = "acme/shop"): Promise<Checkout> {
  const base = mkdtempSync(path.join(os.tmpdir(), "cohent-co-"));
  const root = path.join(base, "repo");
  const home = path.join(base, "home");
  mkdirSync(path.join(root, ".cohent"), { recursive: true });
  mkdirSync(home, { recursive: true });
  if (service)
    writeFileSync(
      path.join(root, ".cohent", "project.json"),
      JSON.stringify({ version: 1, service, repository }),
    );
  const bundle = await builtAdapter();
  // The entry, the adapter and the MCP file, as `cohent init` installs them.
  for (const name of ADAPTER_FILES)
    copyFileSync(path.join(path.dirname(bundle), name), path.join(root, ".cohent", name));
  return { root, home, script: path.join(root, ".cohent", "cohent.mjs") };
}

export interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

export interface RunOptions {
  stdin?: string;
  env?: Record<string, string | undefined>;
  cwd?: string;
  nodeArgs?: string[];
  /** Sees the child as soon as it runs, e.g. to signal it. */
  onSpawn?: (child: ReturnType<typeof spawn>) => void;
  keepStdinOpen?: boolean;
}

/**
 * Runs the checkout's adapter with args, HOME the checkout's own, and collects its output: a hook
 * as init wires it (cohent.cjs), anything else as people and agents type it (cohent.mjs).
 */
export function run(co: Checkout, args: string[], opts: RunOptions = {}): Promise<Run> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ PATH: process.env.PATH, HOME: co.home, ...opts.env }))
    if (v !== undefined) env[k] = v;
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const script = args[0] === "hook" ? co.script.replace(/\.mjs$/, ".cjs") : co.script;
    const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), script, ...args], {
      cwd: opts.cwd ?? co.root,
      env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("error", reject);
    child.on("close", (code, signal) =>
      resolve({ code, signal, stdout, stderr, ms: performance.now() - start }),
    );
    // A process that exits before reading its stdin closes the pipe: EPIPE is its answer, not the test's error.
    child.stdin.on("error", () => {});
    if (opts.stdin !== undefined) child.stdin.write(opts.stdin);
    if (!opts.keepStdinOpen) child.stdin.end();
    opts.onSpawn?.(child);
  });
}

export interface HookAnswer extends Run {
  json: any;
  denied: string | null;
  context: string | null;
}

export async function hook(
  co: Checkout,
  payload: object,
  env: Record<string, string | undefined> = {},
): Promise<HookAnswer> {
  const r = await run(co, ["hook"], { stdin: JSON.stringify(payload), env });
  let json: any = null;
  if (r.stdout.trim()) json = JSON.parse(r.stdout);
  const out = json?.hookSpecificOutput;
  return {
    ...r,
    json,
    denied: out?.permissionDecision === "deny" ? out.permissionDecisionReason : null,
    context: typeof out?.additionalContext === "string" ? out.additionalContext : null,
  };
}

/** Payloads in the shapes docs/clients.md records, measured on the real clients. */
/** The fields every Codex hook payload carries; a turn's events add its turn id. */
const codexBase = (session: string, cwd: string, event: string, turn = false) => ({
  session_id: session,
  ...(turn ? { turn_id: "turn-1" } : {}),
  transcript_path: "/tmp/t.jsonl",
  cwd,
  hook_event_name: event,
  model: "gpt-5.5",
  permission_mode: "default",
});

export const codex = {
  env: {} as Record<string, string>,
  sessionStart: (session: string, cwd: string) => ({
    ...codexBase(session, cwd, "SessionStart"),
    source: "startup",
  }),
  prompt: (session: string, cwd: string, prompt: string) => ({
    ...codexBase(session, cwd, "UserPromptSubmit", true),
    prompt,
  }),
  shell: (session: string, cwd: string, command: string, event = "PreToolUse") => ({
    ...codexBase(session, cwd, event, true),
    tool_name: "Bash",
    tool_input: { command },
    tool_use_id: "call_1_0",
  }),
  patch: (session: string, cwd: string, patch: string, event = "PreToolUse") => ({
    ...codexBase(session, cwd, event, true),
    tool_name: "apply_patch",
    tool_input: { command: patch },
    tool_use_id: "call_2_0",
  }),
  stop: (session: string, cwd: string) => codexBase(session, cwd, "Stop", true),
};

/** The fields of a Claude Code tool event (PreToolUse, PostToolUse). */
const claudeTool = (session: string, cwd: string, event: string) => ({
  session_id: session,
  transcript_path: "/tmp/c.jsonl",
  cwd,
  prompt_id: "p1",
  permission_mode: "acceptEdits",
  effort: { level: "medium" },
  hook_event_name: event,
});

export const claude = {
  env: { CLAUDECODE: "1" } as Record<string, string>,
  sessionStart: (session: string, cwd: string) => ({
    session_id: session,
    transcript_path: "/tmp/c.jsonl",
    cwd,
    hook_event_name: "SessionStart",
    source: "startup",
  }),
  prompt: (session: string, cwd: string, prompt: string) => ({
    session_id: session,
    transcript_path: "/tmp/c.jsonl",
    cwd,
    prompt_id: "p1",
    permission_mode: "acceptEdits",
    hook_event_name: "UserPromptSubmit",
    prompt,
  }),
  write: (session: string, cwd: string, file: string, event = "PreToolUse") => ({
    ...claudeTool(session, cwd, event),
    tool_name: "Write",
    tool_input: { file_path: file, content: "x" },
    tool_use_id: "toolu_1",
  }),
  bash: (session: string, cwd: string, command: string, event = "PreToolUse") => ({
    ...claudeTool(session, cwd, event),
    tool_name: "Bash",
    tool_input: { command, description: "run" },
    tool_use_id: "toolu_2",
  }),
  stop: (session: string, cwd: string) => ({
    session_id: session,
    transcript_path: "/tmp/c.jsonl",
    cwd,
    hook_event_name: "Stop",
    stop_hook_active: false,
  }),
};

/** An intent body with every list empty but what `o` sets. */
export const intentJson = (o: object) =>
  JSON.stringify({
    plan: [],
    components: [],
    dependsOn: [],
    deferred: [],
    requires: [],
    capabilities: [],
    state: "planned",
    ...o,
  });
/** Node flags for a command process that cannot open a socket (every connect fails with EPERM), as in Codex's sandbox. */
export const sandboxed = [
  "--require",
  path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "no-network.cjs"),
];
export const addPatch = (file: string) => `*** Begin Patch\n*** Add File: ${file}\n+patched\n*** End Patch\n`;

export function shellQuote(args: string[]): string {
  return args
    .map((a) => (/^[A-Za-z0-9_\-./=:,@%+]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`))
    .join(" ");
}

/**
 * An agent running an adapter command through its shell tool, as a client
 * does it: the PreToolUse hook sees the command first, then the command
 * runs (possibly in a process that cannot open sockets).
 */
export async function agentRuns(
  co: Checkout,
  client: typeof codex | typeof claude,
  session: string,
  args: string[],
  opts: {
    env?: Record<string, string>;
    commandNodeArgs?: string[];
    commandEnv?: Record<string, string>;
  } = {},
): Promise<{ pre: HookAnswer; cmd: Run | null }> {
  const command = `node .cohent/cohent.mjs ${shellQuote(args)}`;
  const payload =
    client === codex ? codex.shell(session, co.root, command) : claude.bash(session, co.root, command);
  const pre = await hook(co, payload, { ...client.env, ...opts.env });
  if (pre.denied) return { pre, cmd: null };
  const cmd = await run(co, args, {
    env: { ...opts.env, ...opts.commandEnv },
    nodeArgs: opts.commandNodeArgs ?? [],
  });
  return { pre, cmd };
}
