// The adapter's scenarios in Copilot CLI, Gemini CLI and OpenCode (issue 24):
// the same workspace as Codex's and Claude Code's (harness.ts: a real backend,
// a checkout prepared with `cohent init`, alice's credential in an isolated
// HOME), the client started the way the probes start it (probe-harness.ts:
// offline, trusted, OpenCode's plugin dependencies seeded), and the scripted
// steps of scenarios.ts said in the client's own tools:
//
// | step      | Copilot                                | Gemini                             | OpenCode                         |
// | --------- | -------------------------------------- | ---------------------------------- | -------------------------------- |
// | `shell`   | `bash {command, description}`          | `run_shell_command {command, …}`   | `bash {command, description}`    |
// | `write`   | `apply_patch` custom call, `Add File`  | `write_file {file_path (abs), …}`  | `write {filePath (abs), content}` |
// | `patch`   | `apply_patch` custom call, raw         | —                                  | —                                |
//
// Gemini sends a tool's result back as a JSON object (`{"output": …}`,
// `{"error": "Tool execution blocked: R"}`); its string values, joined, are the
// result the checks read.
import { existsSync, mkdirSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { ClientSpec } from "./clients.ts";
import type { FakeChat } from "./fake-chat.ts";
import type { FakeGemini } from "./fake-gemini.ts";
import type { RunResult, ToolResult, Workspace } from "./harness.ts";
import { runCopilot, runGemini, runOpencode, type ProbeRun, type ProbeWorkspace } from "./probe-harness.ts";
import type { Action, Step } from "./script.ts";

export type MoreKind = "copilot" | "gemini" | "opencode";
export const MORE_KINDS: readonly string[] = ["copilot", "gemini", "opencode"];

/** The client's own tool call for one scripted action. */
export function toolFor(kind: MoreKind, repo: string, a: Action): Action {
  switch (a.kind) {
    case "shell":
      return {
        kind: "tool",
        name: kind === "gemini" ? "run_shell_command" : "bash",
        args: { command: a.command, description: "run a command" },
      };
    case "write": {
      const abs = join(repo, a.path);
      if (kind === "copilot") {
        const lines = a.content.replace(/\n$/, "").split("\n");
        return {
          kind: "custom-tool",
          name: "apply_patch",
          input: `*** Begin Patch\n*** Add File: ${relative(repo, abs)}\n${lines.map((l) => `+${l}`).join("\n")}\n*** End Patch\n`,
        };
      }
      if (kind === "gemini")
        return { kind: "tool", name: "write_file", args: { file_path: abs, content: a.content } };
      return { kind: "tool", name: "write", args: { filePath: abs, content: a.content } };
    }
    case "patch":
      if (kind !== "copilot") throw new Error(`a raw patch step is Copilot's, not ${kind}'s`);
      return { kind: "custom-tool", name: "apply_patch", input: a.patch };
    case "tool":
    case "custom-tool":
    case "end-turn":
      return a;
    default:
      throw new Error(`${kind} has no tool for a ${a.kind} step`);
  }
}

function translate(kind: MoreKind, repo: string, steps: Step[]): Step[] {
  return steps.map((s) => ({
    ...s,
    action:
      typeof s.action === "function"
        ? (
            (f) => (outputs: string[]) =>
              toolFor(kind, repo, f(outputs.map((o) => resultText(kind, o))))
          )(s.action)
        : toolFor(kind, repo, s.action),
  }));
}

/** What the model read as a tool result, as text (Gemini: the string values of its JSON object). */
export function resultText(kind: MoreKind, raw: string): string {
  if (kind !== "gemini") return raw;
  try {
    const v = JSON.parse(raw);
    if (v && typeof v === "object")
      return Object.values(v as Record<string, unknown>)
        .map((x) => (typeof x === "string" ? x : JSON.stringify(x)))
        .join("\n");
    return typeof v === "string" ? v : raw;
  } catch {
    return raw;
  }
}

/** The probe harness's view of a scenario workspace (its stand-in log folder is never written). */
function asProbe(ws: Workspace): ProbeWorkspace {
  return {
    dir: ws.dir,
    repo: ws.repo,
    home: ws.home,
    hookDir: join(ws.dir, "no-standin"),
    dispose: () => {},
  };
}

export interface MoreRunOpts {
  prompt: string;
  env?: NodeJS.ProcessEnv;
  /** A sub-agent's steps: its requests carry SUBAGENT_MARK (fake-chat.ts) and are answered from these. */
  subSteps?: Step[];
}

/**
 * COHENT_CLIENTS_TRACE_ADAPTER=1: every call of .cohent/cohent.cjs during the run is logged, its argv,
 * stdin, stdout and exit, to `<run folder>/adapter-trace.jsonl` (keep it with COHENT_CLIENTS_KEEP=1).
 * Not with `adapter-fails`, which moves that file itself.
 */
const TRACE = process.env.COHENT_CLIENTS_TRACE_ADAPTER === "1";
const traceShim = (log: string) => `const { spawnSync } = require("child_process");
const fs = require("fs");
const args = process.argv.slice(2);
const real = __dirname + "/cohent-traced.cjs";
if (args[0] !== "hook") {
  // The CLI (the agent's own commands, through cohent.mjs): stdin and stdout as they are.
  const r = spawnSync(process.execPath, [real, ...args], { stdio: "inherit", env: process.env });
  fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ t: Date.now(), argv: args, status: r.status }) + "\\n");
  process.exitCode = r.status === null ? 1 : r.status;
} else {
  // A hook call: stdin read as a stream (a client's pipe may be non-blocking), then the real adapter.
  const chunks = [];
  process.stdin.on("data", (c) => chunks.push(c));
  process.stdin.on("end", () => {
    const input = Buffer.concat(chunks);
    const r = spawnSync(process.execPath, [real, ...args], { input, env: process.env });
    fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ t: Date.now(), argv: args, stdin: input.toString(), stdout: String(r.stdout), status: r.status }) + "\\n");
    process.stdout.write(r.stdout);
    process.stderr.write(r.stderr);
    process.exitCode = r.status === null ? 1 : r.status;
  });
}
`;

function traced<T>(ws: Workspace, run: () => Promise<T>): Promise<T> {
  if (!TRACE) return run();
  const adapter = join(ws.repo, ".cohent", "cohent.cjs");
  const real = join(ws.repo, ".cohent", "cohent-traced.cjs");
  renameSync(adapter, real);
  writeFileSync(adapter, traceShim(join(ws.dir, "adapter-trace.jsonl")));
  process.stderr.write(`[clients] adapter calls traced to ${join(ws.dir, "adapter-trace.jsonl")}\n`);
  return run().finally(() => renameSync(real, adapter));
}

function start(
  client: ClientSpec,
  ws: Workspace,
  pws: ProbeWorkspace,
  model: FakeChat | FakeGemini,
  steps: Step[],
  o: { prompt: string; env?: NodeJS.ProcessEnv; subSteps?: Step[] },
): Promise<ProbeRun> {
  if (client.kind === "copilot") return runCopilot(client, pws, model as FakeChat, steps, o);
  if (client.kind === "gemini") return runGemini(client, pws, model as FakeGemini, steps, o);
  // OpenCode runs with its own XDG folders (probe-harness.ts), and the adapter keeps the credential
  // under $XDG_CONFIG_HOME/cohent when that is set, as `bootstrap` would have written it there: the
  // same file as HOME's, so that a scenario that edits one edits both.
  const xdg = join(ws.dir, "xdg", "config");
  mkdirSync(xdg, { recursive: true });
  if (!existsSync(join(xdg, "cohent"))) symlinkSync(join(ws.home, ".config", "cohent"), join(xdg, "cohent"));
  return runOpencode(client, pws, model as FakeChat, steps, o);
}

/** One run of a Copilot, Gemini or OpenCode client in a scenario workspace, with the steps in its own tools. */
export async function runMore(
  client: ClientSpec,
  ws: Workspace,
  model: FakeChat | FakeGemini,
  steps: Step[],
  opts: MoreRunOpts,
): Promise<RunResult> {
  const kind = client.kind as MoreKind;
  const own = translate(kind, ws.repo, steps);
  const pws = asProbe(ws);
  const o = {
    prompt: opts.prompt,
    ...(opts.env ? { env: opts.env } : {}),
    ...(opts.subSteps ? { subSteps: translate(kind, ws.repo, opts.subSteps) } : {}),
  };
  const r = await traced(ws, () => start(client, ws, pws, model, own, o));
  const results = new Map<string, ToolResult>();
  for (const [id, out] of r.results) results.set(id, { callId: id, output: resultText(kind, out) });
  return {
    code: r.code,
    stdout: r.stdout,
    stderr: r.stderr,
    ms: r.ms,
    results,
    requests: r.requests.length,
    modelSaw: r.modelSaw,
    scriptErrors: r.scriptErrors,
    hooks: [],
  };
}
