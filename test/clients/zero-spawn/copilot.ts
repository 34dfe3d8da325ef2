// Zero-spawn probe, Copilot CLI (issue #44 item 3): what Copilot CLI 1.0.85
// and 1.0.102 do with a `type: "mcp_tool"` hook entry in Claude Code's
// `.claude/settings.json`, which Copilot reads too. Each case is one real
// `copilot -p` run (BYOK at the scripted Chat Completions fake, offline) in a
// throwaway checkout, with the probes' stand-in hook (standin-hook.cjs) as
// every command hook, so its log says which hooks ran, and guard-mcp.mjs as
// the `cohent` MCP server, so its log says whether Copilot started it and
// called `guard`.
//
//   npx tsx test/clients/zero-spawn/copilot.ts                 # every case, both versions
//   ZS_CLIENTS=copilot@1.0.102 ZS_CASES=B,C npx tsx test/clients/zero-spawn/copilot.ts
//
// Results: test/clients/zero-spawn/results/<label>.json and a table on stdout.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CLIENTS, isInstalled, type ClientSpec } from "../clients.ts";
import { startFakeChat, type FakeChat } from "../fake-chat.ts";
import {
  probeWorkspace,
  runCopilot,
  setPlan,
  standinCommand,
  type ProbeRun,
  type ProbeWorkspace,
} from "../probe-harness.ts";
import { outcome } from "../probe-kit.ts";
import { writeCopilotHooks } from "../probes-copilot.ts";
import type { Step } from "../script.ts";

const here = dirname(fileURLToPath(import.meta.url));
export const GUARD_MCP = join(here, "guard-mcp.mjs");
export const RESULTS = join(here, "results");

/** The handler Claude Code 2.1.332 ran (docs/clients.md), with a longer timeout for a loaded machine. */
export const MCP_ENTRY = {
  type: "mcp_tool",
  server: "cohent",
  tool: "guard",
  input: {
    tool_name: "${tool_name}",
    file_path: "${tool_input.file_path}",
    session_id: "${session_id}",
  },
  timeout: 10,
  onFailure: "block",
};

type Entry = Record<string, unknown>;
interface Case {
  id: string;
  title: string;
  /** PreToolUse groups of .claude/settings.json, given the command handler. */
  preToolUse: (cmd: Entry) => Entry[];
  /** Also write Copilot's own wiring (.github/hooks/), as init does. */
  native?: boolean;
  /** Write .mcp.json (Claude Code's project MCP file) naming the `cohent` server. */
  dotMcp?: boolean;
  /** Also give Copilot the `cohent` server with --additional-mcp-config (so it surely is connected). */
  additionalMcp?: boolean;
  guardMode?: string;
  /** PreToolUse groups of .claude/settings.local.json (written only when given). */
  localPreToolUse?: Entry[];
}

const other = (t: string): Entry => ({ ...MCP_ENTRY, type: t });
export const CASES: Case[] = [
  { id: "A", title: "command entry only (baseline)", preToolUse: (c) => [{ matcher: "*", hooks: [c] }] },
  {
    id: "B",
    title: "mcp_tool beside the command entry, same matcher group (mcp_tool first)",
    preToolUse: (c) => [{ matcher: "*", hooks: [MCP_ENTRY, c] }],
    dotMcp: true,
  },
  {
    id: "B2",
    title: "same group, command entry first",
    preToolUse: (c) => [{ matcher: "*", hooks: [c, MCP_ENTRY] }],
    dotMcp: true,
  },
  {
    id: "C",
    title: "mcp_tool in its own group (Write|Edit) beside a command group (*)",
    preToolUse: (c) => [
      { matcher: "Write|Edit", hooks: [MCP_ENTRY] },
      { matcher: "*", hooks: [c] },
    ],
    dotMcp: true,
  },
  {
    id: "C-mcp",
    title: "C, and the cohent server also given with --additional-mcp-config",
    preToolUse: (c) => [
      { matcher: "Write|Edit", hooks: [MCP_ENTRY] },
      { matcher: "*", hooks: [c] },
    ],
    dotMcp: true,
    additionalMcp: true,
  },
  {
    id: "D-B",
    title: "B with Copilot's own wiring (.github/hooks) present",
    preToolUse: (c) => [{ matcher: "*", hooks: [MCP_ENTRY, c] }],
    dotMcp: true,
    native: true,
  },
  {
    id: "D-C",
    title: "C with Copilot's own wiring (.github/hooks) present",
    preToolUse: (c) => [
      { matcher: "Write|Edit", hooks: [MCP_ENTRY] },
      { matcher: "*", hooks: [c] },
    ],
    dotMcp: true,
    native: true,
  },
  {
    id: "X-http",
    title: 'control: a `type: "http"` entry in its own group (Claude Code\'s other spawn-free type)',
    preToolUse: (c) => [
      { matcher: "Write|Edit", hooks: [{ type: "http", url: "http://127.0.0.1:9/hook", timeout: 5 }] },
      { matcher: "*", hooks: [c] },
    ],
  },
  {
    id: "X-https",
    title: 'control: a `type: "http"` entry with an https URL (nothing listening) in its own group',
    preToolUse: (c) => [
      { matcher: "Write|Edit", hooks: [{ type: "http", url: "https://127.0.0.1:9/hook", timeout: 5 }] },
      { matcher: "*", hooks: [c] },
    ],
  },
  {
    id: "L-local",
    title: "A in .claude/settings.json, the mcp_tool group alone in .claude/settings.local.json",
    preToolUse: (c) => [{ matcher: "*", hooks: [c] }],
    localPreToolUse: [{ matcher: "Write|Edit", hooks: [MCP_ENTRY] }],
    dotMcp: true,
  },
  {
    id: "X-bogus",
    title: "control: an entry of a type nobody knows (`bogus`) in its own group",
    preToolUse: (c) => [
      { matcher: "Write|Edit", hooks: [other("bogus")] },
      { matcher: "*", hooks: [c] },
    ],
  },
  {
    id: "X-nocmd",
    title: "control: a `command` entry without its `command` field in its own group",
    preToolUse: (c) => [
      { matcher: "Write|Edit", hooks: [{ type: "command", timeout: 5 }] },
      { matcher: "*", hooks: [c] },
    ],
  },
];

const sh = (id: string): Step => ({
  id,
  action: { kind: "tool", name: "bash", args: { command: `echo ${id} > ${id}.txt`, description: id } },
});
const addFile = (id: string): Step => ({
  id,
  action: {
    kind: "custom-tool",
    name: "apply_patch",
    input: `*** Begin Patch\n*** Add File: ${id}.txt\n+${id}\n*** End Patch\n`,
  },
});
/** zs-shell and zs-patch: no command hook denies them; zs-deny: every command hook denies it (R-NATIVE / R-CLAUDE). */
export const STEPS: Step[] = [sh("zs-shell"), addFile("zs-patch"), sh("zs-deny")];

const nativeDeny = JSON.stringify({ permissionDecision: "deny", permissionDecisionReason: "R-NATIVE" });
const claudeDeny = JSON.stringify({
  hookSpecificOutput: {
    hookEventName: "PreToolUse",
    permissionDecision: "deny",
    permissionDecisionReason: "R-CLAUDE",
  },
});

function writeClaude(ws: ProbeWorkspace, c: Case): void {
  const cmd = (e: string): Entry => ({ type: "command", command: standinCommand(ws, `claude:${e}`) });
  const settings = {
    hooks: {
      SessionStart: [{ hooks: [cmd("SessionStart")] }],
      UserPromptSubmit: [{ hooks: [cmd("UserPromptSubmit")] }],
      PreToolUse: c.preToolUse(cmd("PreToolUse")),
      PostToolUse: [{ matcher: "*", hooks: [cmd("PostToolUse")] }],
    },
  };
  mkdirSync(join(ws.repo, ".claude"), { recursive: true });
  writeFileSync(join(ws.repo, ".claude", "settings.json"), JSON.stringify(settings, null, 2));
  if (c.localPreToolUse)
    writeFileSync(
      join(ws.repo, ".claude", "settings.local.json"),
      JSON.stringify({ hooks: { PreToolUse: c.localPreToolUse } }, null, 2),
    );
}

export const guardServer = (ws: ProbeWorkspace, mode: string) => ({
  command: "node",
  args: [GUARD_MCP, "--log", join(ws.hookDir, "guard-log.jsonl"), "--mode", mode],
});

export function guardLog(ws: ProbeWorkspace): { event: string; method?: string }[] {
  const f = join(ws.hookDir, "guard-log.jsonl");
  return existsSync(f)
    ? readFileSync(f, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
}

/** Lines of Copilot's own log (~/.copilot/logs) that speak of hooks, settings or MCP. */
function copilotLogLines(ws: ProbeWorkspace): string[] {
  const dir = join(ws.home, ".copilot", "logs");
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const f of readdirSync(dir))
    for (const l of readFileSync(join(dir, f), "utf8").split("\n"))
      if (/hook|settings\.json|mcp_tool|cohent|invalid|\bwarn/i.test(l)) out.push(l.slice(0, 400));
  return out;
}

export interface CaseResult {
  client: string;
  case: string;
  title: string;
  exit: number | null;
  /** Hook labels the stand-in logged, in order (`claude:*` from .claude/settings.json, the rest from .github/hooks). */
  hooks: string[];
  files: Record<string, "open" | "closed">;
  /** What the model got back for each step. */
  results: Record<string, string | null>;
  guardStarted: boolean;
  guardCalls: number;
  guardMethods: string[];
  stderr: string;
  stdoutTail: string;
  logLines: string[];
  ms: number;
}

async function runCase(client: ClientSpec, model: FakeChat, c: Case): Promise<CaseResult> {
  const ws = probeWorkspace();
  try {
    writeClaude(ws, c);
    if (c.native) writeCopilotHooks(ws, ["sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse"]);
    const mode = c.guardMode ?? "deny";
    if (c.dotMcp)
      writeFileSync(
        join(ws.repo, ".mcp.json"),
        JSON.stringify({ mcpServers: { cohent: guardServer(ws, mode) } }, null, 2),
      );
    setPlan(ws, [
      { event: "preToolUse", match: "zs-deny", stdout: nativeDeny },
      { event: "claude:PreToolUse", match: "zs-deny", stdout: claudeDeny },
    ]);
    const args = c.additionalMcp
      ? [
          "--additional-mcp-config",
          JSON.stringify({
            mcpServers: { cohent: { type: "local", ...guardServer(ws, mode), tools: ["*"] } },
          }),
        ]
      : [];
    const r: ProbeRun = await runCopilot(client, ws, model, STEPS, { prompt: "do it", args });
    const g = guardLog(ws);
    return {
      client: client.label,
      case: c.id,
      title: c.title,
      exit: r.code,
      hooks: r.hooks.map((h) => h.label),
      files: Object.fromEntries(STEPS.map((s) => [s.id, outcome(ws, `${s.id}.txt`)])),
      results: Object.fromEntries(STEPS.map((s) => [s.id, r.results.get(s.id) ?? null])),
      guardStarted: g.some((e) => e.event === "start"),
      guardCalls: g.filter((e) => e.event === "guard-call").length,
      guardMethods: [...new Set(g.map((e) => e.method).filter((m): m is string => !!m))],
      stderr: r.stderr.slice(0, 2000),
      stdoutTail: r.stdout.slice(-600),
      logLines: copilotLogLines(ws).slice(0, 40),
      ms: r.ms,
    };
  } finally {
    ws.dispose();
  }
}

const count = (hooks: string[], label: string) => hooks.filter((h) => h === label).length;

export function row(r: CaseResult): string {
  const claude = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"]
    .map((e) => `${e} ${count(r.hooks, `claude:${e}`)}`)
    .join(", ");
  const native = ["sessionStart", "preToolUse"].map((e) => `${e} ${count(r.hooks, e)}`).join(", ");
  const files = Object.entries(r.files)
    .map(([k, v]) => `${k} ${v === "open" ? "ran" : "refused"}`)
    .join(", ");
  const deny = (r.results["zs-deny"] ?? "").replace(/\s+/g, " ").slice(0, 80);
  const mcp = r.guardStarted
    ? `started (${r.guardMethods.join(" ")}), guard calls ${r.guardCalls}`
    : "not started";
  const warn = /hook|settings|mcp_tool|invalid/i.test(r.stderr)
    ? r.stderr.replace(/\s+/g, " ").slice(0, 160)
    : "none";
  return `| ${r.client} | ${r.case} | ${claude} | ${native} | ${files} | ${deny} | ${mcp} | ${warn} |`;
}

export const HEADER =
  "| client | case | .claude hooks run (calls) | .github hooks run | tool calls | zs-deny result | cohent MCP server | stderr about hooks |\n|---|---|---|---|---|---|---|---|";

async function main(): Promise<void> {
  const want = (process.env.ZS_CLIENTS ?? "copilot@1.0.85,copilot@1.0.102").split(",").map((s) => s.trim());
  const cases = (process.env.ZS_CASES ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  mkdirSync(RESULTS, { recursive: true });
  const rows: string[] = [];
  for (const client of CLIENTS.filter((c) => c.kind === "copilot" && want.includes(c.label))) {
    if (!isInstalled(client))
      throw new Error(
        `${client.label} not installed: COHENT_CLIENTS=${client.label} npx tsx test/clients/install.ts`,
      );
    const model = await startFakeChat();
    const out: CaseResult[] = [];
    try {
      for (const c of CASES.filter((x) => cases.length === 0 || cases.includes(x.id))) {
        process.stderr.write(`[zero-spawn] ${client.label} ${c.id}: ${c.title}\n`);
        const r = await runCase(client, model, c);
        out.push(r);
        rows.push(row(r));
        process.stderr.write(row(r) + "\n");
      }
    } finally {
      await model.close();
    }
    const file = join(RESULTS, `${client.label}${cases.length ? `-${cases.join("_")}` : ""}.json`);
    writeFileSync(file, JSON.stringify(out, null, 2) + "\n");
  }
  process.stdout.write(`\n${HEADER}\n${rows.join("\n")}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
