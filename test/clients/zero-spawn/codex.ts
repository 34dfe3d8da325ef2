// Zero-spawn probe, Codex CLI (issue #44 item 5): what Codex 0.169.0 and
// 0.171.0 do with a `type: "mcp_tool"` handler in `.codex/hooks.json`. Each
// case is one real `codex exec --json` run against the scripted Responses
// fake (fake-openai.ts), in a throwaway checkout and CODEX_HOME, with the
// probes' stand-in hook (standin-hook.cjs) as every command hook and
// guard-mcp.mjs as the `cohent` MCP server ([mcp_servers.cohent] in
// config.toml), whose log says whether Codex started it and called `guard`.
// The command hooks are trusted by hash (codex-trust.ts, as a person's
// "Trust all" would); `bypass` cases add --dangerously-bypass-hook-trust, so
// that an mcp_tool handler runs even though nothing trusted it.
//
//   npx tsx test/clients/zero-spawn/codex.ts                 # every case, both versions
//   ZS_CLIENTS=codex@0.171.0 ZS_CASES=K-B,K-C npx tsx test/clients/zero-spawn/codex.ts
//
// Results: test/clients/zero-spawn/results/<label>.json and a table on stdout.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { canonicalJson } from "../../../adapter/src/installer/trust.ts";
import { binPath, CLIENTS, isInstalled, type ClientSpec } from "../clients.ts";
import { codexConfigToml, codexHookHashes, type HookTrust } from "../codex-trust.ts";
import { codexToolOutputs, CODEX_CALL_PREFIX, startFakeOpenAI, type FakeOpenAI } from "../fake-openai.ts";
import { spawnClient } from "../harness.ts";
import { hookCalls, probeWorkspace, setPlan, standinCommand, type ProbeWorkspace } from "../probe-harness.ts";
import { outcome } from "../probe-kit.ts";
import { Script, type Step } from "../script.ts";
import { GUARD_MCP, guardLog, MCP_ENTRY, RESULTS } from "./copilot.ts";
import { createHash } from "node:crypto";

type Entry = Record<string, unknown>;
/** Codex's spelling of the handler (no onFailure: Codex has none; unknown keys are ignored by serde anyway). */
const mcp = (extra: Entry = {}): Entry => {
  const { onFailure: _o, ...rest } = MCP_ENTRY;
  return { ...rest, input: { tool_name: "${tool_name}", session_id: "${session_id}" }, timeout: 3, ...extra };
};

interface Case {
  id: string;
  title: string;
  preToolUse: (cmd: Entry) => Entry[];
  /** --dangerously-bypass-hook-trust (tests only) */
  bypass?: boolean;
  /** Trust the mcp_tool handlers too, by the hash mcpHash() computes. */
  trustMcp?: boolean;
  guardMode?: string;
  /** [mcp_servers.cohent] absent from config.toml. */
  noServer?: boolean;
}

const own = (m: Entry) => (c: Entry) => [
  { matcher: "*", hooks: [m] },
  { matcher: "*", hooks: [c] },
];
export const CASES: Case[] = [
  { id: "K-A", title: "command entry only (baseline)", preToolUse: (c) => [{ matcher: "*", hooks: [c] }] },
  {
    id: "K-B",
    title: "mcp_tool beside the command entry, same group; command trusted by hash",
    preToolUse: (c) => [{ matcher: "*", hooks: [mcp(), c] }],
  },
  {
    id: "K-C",
    title: "mcp_tool in its own group beside a command group; command trusted by hash",
    preToolUse: own(mcp()),
  },
  {
    id: "K-C-trust",
    title: "K-C, the mcp_tool handler trusted too (hash as mcpHash() computes it)",
    preToolUse: own(mcp()),
    trustMcp: true,
  },
  {
    id: "K-B-trust",
    title: "K-B, the mcp_tool handler trusted too",
    preToolUse: (c) => [{ matcher: "*", hooks: [mcp(), c] }],
    trustMcp: true,
  },
  {
    id: "K-C-bypass",
    title: "K-C with --dangerously-bypass-hook-trust",
    preToolUse: own(mcp()),
    bypass: true,
  },
  ...(
    [
      ["allow", "guard answers {} (no decision)"],
      ["iserror", "guard answers isError"],
      ["rpcerror", "guard answers a JSON-RPC error"],
      ["hang", "guard never answers (hook timeout 3 s)"],
      ["die", "guard process exits during the call"],
      ["startfail", "guard process exits at start"],
    ] as const
  ).map(([mode, title]) => ({
    id: `K-F-${mode}`,
    title: `trusted, own group: ${title}`,
    preToolUse: own(mcp()),
    trustMcp: true,
    guardMode: mode,
  })),
  {
    id: "K-F-noserver",
    title: "trusted, own group: no [mcp_servers.cohent] configured",
    preToolUse: own(mcp()),
    trustMcp: true,
    noServer: true,
  },
  {
    id: "K-F-notool",
    title: "trusted, own group: the server has no such tool",
    preToolUse: own(mcp({ tool: "missing" })),
    trustMcp: true,
  },
  {
    id: "K-X-bogus",
    title: "control: a handler of a type nobody knows (`bogus`), own group, bypass",
    preToolUse: own(mcp({ type: "bogus" })),
    bypass: true,
  },
  {
    id: "K-X-http",
    title: 'control: a `type: "http"` handler, own group, bypass',
    preToolUse: own({ type: "http", url: "http://127.0.0.1:9/hook", timeout: 3 }),
    bypass: true,
  },
];

/** zs-shell, zs-patch: no command hook denies them; zs-deny: the command hook denies it (R-CMD). */
export const STEPS: Step[] = [
  { id: "zs-shell", action: { kind: "shell", command: "echo zs-shell > zs-shell.txt" } },
  { id: "zs-patch", action: { kind: "write", path: "zs-patch.txt", content: "zs-patch\n" } },
  { id: "zs-deny", action: { kind: "shell", command: "echo zs-deny > zs-deny.txt" } },
];

const cmdDeny = JSON.stringify({
  hookSpecificOutput: {
    hookEventName: "PreToolUse",
    permissionDecision: "deny",
    permissionDecisionReason: "R-CMD",
  },
});

/**
 * Codex's trust hash of an mcp_tool handler: the command hash's recipe (docs/clients.md) over the handler's own
 * normalized fields, {type, server, tool, input, timeout (default 600)}, statusMessage left out here.
 * Measured: Codex 0.169.0 and 0.171.0 run a handler trusted by this hash without the bypass flag (K-C-trust).
 */
function mcpHash(label: string, matcher: string | undefined, h: Entry): string {
  const handler: Entry = {
    type: "mcp_tool",
    server: h.server,
    tool: h.tool,
    input: h.input ?? {},
    timeout: h.timeout ?? 600,
  };
  const doc: Entry = { event_name: label, hooks: [handler] };
  if (matcher !== undefined) doc.matcher = matcher;
  return "sha256:" + createHash("sha256").update(canonicalJson(doc)).digest("hex");
}

function writeHooks(ws: ProbeWorkspace, c: Case): { hooksFile: string; trust: HookTrust[] } {
  const cmd = (e: string): Entry => ({
    type: "command",
    command: standinCommand(ws, `codex:${e}`),
    timeout: 30,
  });
  const groups = c.preToolUse(cmd("PreToolUse"));
  const hooks = {
    hooks: {
      SessionStart: [{ hooks: [cmd("SessionStart")] }],
      UserPromptSubmit: [{ hooks: [cmd("UserPromptSubmit")] }],
      PreToolUse: groups,
      PostToolUse: [{ matcher: "*", hooks: [cmd("PostToolUse")] }],
    },
  };
  mkdirSync(join(ws.repo, ".codex"), { recursive: true });
  const hooksFile = join(ws.repo, ".codex", "hooks.json");
  writeFileSync(hooksFile, JSON.stringify(hooks, null, 2));
  const trust = codexHookHashes(hooksFile);
  if (c.trustMcp)
    groups.forEach((g, gi) =>
      ((g.hooks as Entry[]) ?? []).forEach((h, hi) => {
        if (h.type === "mcp_tool")
          trust.push({
            key: `${hooksFile}:pre_tool_use:${gi}:${hi}`,
            hash: mcpHash("pre_tool_use", g.matcher as string, h),
          });
      }),
    );
  return { hooksFile, trust };
}

export interface CaseResult {
  client: string;
  case: string;
  title: string;
  exit: number | null;
  hooks: string[];
  files: Record<string, "open" | "closed">;
  results: Record<string, string | null>;
  guardStarted: boolean;
  guardCalls: number;
  guardArgs: unknown[];
  /** Lines of stdout (JSON events) and stderr that mention hooks, MCP or warnings. */
  messages: string[];
  ms: number;
}

async function runCase(client: ClientSpec, model: FakeOpenAI, c: Case): Promise<CaseResult> {
  const ws = probeWorkspace();
  try {
    const codexHome = join(ws.dir, "codex-home");
    mkdirSync(codexHome, { recursive: true });
    const { trust } = writeHooks(ws, c);
    let toml = codexConfigToml({
      modelBaseUrl: model.baseUrl,
      repoRoot: ws.repo,
      sandbox: "danger-full-access",
      hooks: trust,
    });
    if (!c.noServer)
      toml += `\n[mcp_servers.cohent]\ncommand = "node"\nargs = ${JSON.stringify([
        GUARD_MCP,
        "--log",
        join(ws.hookDir, "guard-log.jsonl"),
        "--mode",
        c.guardMode ?? "deny",
      ])}\n`;
    writeFileSync(join(codexHome, "config.toml"), toml);
    setPlan(ws, [{ event: "codex:PreToolUse", match: "zs-deny", stdout: cmdDeny }]);
    const script = new Script(STEPS);
    model.setScript(script);
    const before = model.requests.length;
    hookCalls(ws, true);
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: ws.home,
      CODEX_HOME: codexHome,
      FAKE_OPENAI_API_KEY: "dummy",
      NO_COLOR: "1",
      RUST_LOG: "warn",
    };
    const args = ["exec", "--json", ...(c.bypass ? ["--dangerously-bypass-hook-trust"] : []), "do it"];
    const r = await spawnClient(binPath(client), args, ws.repo, env, 120_000);
    const outputs = new Map<string, string>();
    for (const q of model.requests.slice(before).filter((q) => q.url.startsWith("/v1/responses")))
      for (const o of codexToolOutputs(q.body)) outputs.set(o.callId, o.output);
    const g = guardLog(ws) as any[];
    const messages = [...r.stdout.split("\n"), ...r.stderr.split("\n")]
      .filter(
        (l) =>
          /hook|mcp|warn|error/i.test(l) && !/"type":"item\.(started|completed)".*command_execution/.test(l),
      )
      .map((l) => l.slice(0, 500));
    return {
      client: client.label,
      case: c.id,
      title: c.title,
      exit: r.code,
      hooks: hookCalls(ws).map((h) => h.label),
      files: Object.fromEntries(STEPS.map((s) => [s.id, outcome(ws, `${s.id}.txt`)])),
      results: Object.fromEntries(
        STEPS.map((s) => [s.id, outputs.get(script.callIdOf(s.id, CODEX_CALL_PREFIX)) ?? null]),
      ),
      guardStarted: g.some((e) => e.event === "start"),
      guardCalls: g.filter((e) => e.event === "guard-call").length,
      guardArgs: g.filter((e) => e.event === "guard-call").map((e) => e.arguments),
      messages: messages.slice(0, 30),
      ms: r.ms,
    };
  } finally {
    ws.dispose();
  }
}

const count = (hooks: string[], label: string) => hooks.filter((h) => h === label).length;

export function row(r: CaseResult): string {
  const ran = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"]
    .map((e) => `${e} ${count(r.hooks, `codex:${e}`)}`)
    .join(", ");
  const files = Object.entries(r.files)
    .map(([k, v]) => `${k} ${v === "open" ? "ran" : "refused"}`)
    .join(", ");
  const said = (id: string) => (r.results[id] ?? "—").replace(/\s+/g, " ").slice(0, 90);
  const mcpCol = r.guardStarted ? `started, guard calls ${r.guardCalls}` : "not started";
  const msg = r.messages.find((m) => /hook/i.test(m) && !/"type":"item/.test(m));
  return `| ${r.client} | ${r.case} | ${ran} | ${files} | ${said("zs-shell")} | ${said("zs-deny")} | ${mcpCol} | ${(msg ?? "none").replace(/\|/g, "\\|").slice(0, 220)} |`;
}

export const HEADER =
  "| client | case | command hooks run (calls) | tool calls | zs-shell result | zs-deny result | cohent MCP server | message about hooks |\n|---|---|---|---|---|---|---|---|";

async function main(): Promise<void> {
  const want = (process.env.ZS_CLIENTS ?? "codex@0.169.0,codex@0.171.0").split(",").map((s) => s.trim());
  const cases = (process.env.ZS_CASES ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  mkdirSync(RESULTS, { recursive: true });
  const rows: string[] = [];
  for (const client of CLIENTS.filter((c) => c.kind === "codex" && want.includes(c.label))) {
    if (!isInstalled(client))
      throw new Error(
        `${client.label} not installed: COHENT_CLIENTS=${client.label} npx tsx test/clients/install.ts`,
      );
    const model = await startFakeOpenAI();
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
