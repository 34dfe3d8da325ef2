// The client bench (issue #44 item 6): what the guard costs inside the real Claude Code 2.1.332.
// Offline: a real backend on loopback, a checkout written by the real `cohent init`, the scripted
// model of the conformance suite (test/clients/fake-anthropic.ts). Each run: `intent`, `scope
// src/r<round>-<wiring>`, then CALLS in-scope Writes there. Per Write, the time from the model's tool_use (the
// request that answered it arrived; the answer goes out at once) to the next model request, which
// carries its tool result. Wirings, interleaved round by round (order rotated):
//   none      no Cohent hooks in .claude/settings.json (the MCP server still configured)
//   previous  command hooks only: PreToolUse the fail-closed command, PostToolUse the plain one
//   new       what `cohent init` writes now: an mcp_tool handler + the shell gate (`exec sh -c '…'`), on both events
//   new-no-exec  the same with the gate as before e8041eb (`sh -c '…'`, no exec): its $PPID is Claude
//             Code's /bin/sh, the mark never matches, the command hook runs every call (spawn-free/FINDINGS.md §1)
//   mcp-only  the mcp_tool handler alone, the gates removed: what the gate's shell start costs
//   trivial   the mcp_tool handlers alone, answered `{}` at once by bench/trivial-mcp.mjs (no SDK, no
//             guard): what Claude Code itself spends on calling a handler on both events
//   trivial-pre  the same on PreToolUse only, no PostToolUse hook: the least any handler can cost
// Medians over calls 2..CALLS of every round. `npx tsx bench/client-latency.ts`
// Then OpenCode (BENCH_OPENCODE, default opencode@1.18.33; `none` to skip), client-latency-opencode.ts:
// no plugin, the plugin before 1305ad3 (a node per hook call), init's plugin now (in OpenCode's process).
// Knobs: BENCH_ROUNDS (3), BENCH_CALLS (10), BENCH_WIRINGS (comma list), BENCH_CLIENT (claude@2.1.332),
// BENCH_TIMED=1: `.mcp.json` runs the server through test/clients/spawn-free/standin-mcp.mjs (a pass-through
// that logs how long each `hook` call took inside the server), in every wiring alike; adds that column.
import { loadavg, cpus } from "node:os";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLIENTS } from "../test/clients/clients.ts";
import { startFakeAnthropic } from "../test/clients/fake-anthropic.ts";
import { claudeToolResults } from "../test/clients/fake-anthropic.ts";
import { prepareWorkspace, runClaude } from "../test/clients/harness.ts";
import { intentCmd, scopeCmd, sh, write } from "../test/clients/scenarios.ts";
import type { Step } from "../test/clients/script.ts";
import { dropGates, gatesWithoutExec, standinLog, useStandin } from "../test/clients/spawn-free/lib.ts";
import { CLAUDE_GUARD_COMMAND, CLAUDE_HOOK_COMMAND } from "../adapter/src/installer/claude-wiring.ts";
import { HOOK_TIMEOUT } from "../adapter/src/installer/host-wiring.ts";
import { median, percentile, printed, table } from "./lib.ts";
import { replaceSection, runLine } from "./results.ts";
import {
  benchOpencode,
  OPENCODE_WHAT,
  OPENCODE_WIRINGS,
  type OpencodeWiring,
} from "./client-latency-opencode.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS) || 3;
const CALLS = Number(process.env.BENCH_CALLS) || 10;
const LABEL = process.env.BENCH_CLIENT || "claude@2.1.332";
type Wiring = "none" | "previous" | "new" | "new-no-exec" | "mcp-only" | "trivial" | "trivial-pre";
const ALL: Wiring[] = ["none", "previous", "new", "new-no-exec", "mcp-only", "trivial", "trivial-pre"];
const TIMED = process.env.BENCH_TIMED === "1";
const WIRINGS = (process.env.BENCH_WIRINGS?.split(",").filter(Boolean) as Wiring[] | undefined) ?? ALL;

const WHAT: Record<Wiring, string> = {
  none: "no hook",
  previous: "command hooks only (before #44)",
  new: "mcp_tool + shell gate (init now)",
  "new-no-exec": "the same, gate without exec (before e8041eb)",
  "mcp-only": "mcp_tool handler alone (gates removed)",
  trivial: "mcp_tool handler answering {} at once, no guard",
  "trivial-pre": "the same on PreToolUse only (no PostToolUse hook)",
};

/** The checkout's settings for one wiring, from what init wrote (`initSettings`). */
function settingsFor(w: Wiring, initSettings: any, repo: string, initMcp: string): void {
  const file = join(repo, ".claude", "settings.json");
  const mcp = JSON.parse(initMcp);
  if (w === "trivial" || w === "trivial-pre") {
    copyFileSync(new URL("./trivial-mcp.mjs", import.meta.url), join(repo, ".cohent", "trivial-mcp.mjs"));
    mcp.mcpServers.cohent = { command: "node", args: [".cohent/trivial-mcp.mjs"] };
  }
  writeFileSync(join(repo, ".mcp.json"), JSON.stringify(mcp, null, 2) + "\n");
  const s = structuredClone(initSettings);
  if (w === "none") delete s.hooks;
  if (w === "trivial-pre") delete s.hooks.PostToolUse;
  if (w === "previous") {
    s.hooks.PreToolUse = [
      {
        matcher: "*",
        hooks: [
          { type: "command", command: CLAUDE_GUARD_COMMAND, timeout: HOOK_TIMEOUT, onFailure: "block" },
        ],
      },
    ];
    s.hooks.PostToolUse = [{ matcher: "*", hooks: [{ type: "command", command: CLAUDE_HOOK_COMMAND }] }];
  }
  writeFileSync(file, JSON.stringify(s, null, 2) + "\n");
  if (w === "new-no-exec") gatesWithoutExec(repo);
  if (w === "mcp-only" || w === "trivial" || w === "trivial-pre") dropGates(repo);
}

/** The table rows of one client: per wiring the pooled median of calls 2..N of every round, against `none`. */
function rowsOf(
  gaps: Record<string, number[][]>,
  what: Record<string, string>,
  extra?: (w: string) => Record<string, string | number>,
) {
  const base = gaps.none ? median(gaps.none.flatMap((g) => g.slice(1))) : NaN;
  return Object.keys(gaps).map((w) => {
    const pooled = gaps[w]!.flatMap((g) => g.slice(1));
    const p50 = median(pooled);
    return {
      wiring: w,
      what: what[w]!,
      calls: pooled.length,
      "p50 ms": pooled.length ? p50.toFixed(0) : "-",
      "vs none": w === "none" || !gaps.none ? "—" : `${p50 - base >= 0 ? "+" : ""}${(p50 - base).toFixed(0)}`,
      "p90 ms": pooled.length ? percentile(pooled, 90).toFixed(0) : "-",
      ...(extra ? extra(w) : {}),
      "per-round p50": gaps[w]!.map((g) => (g.length > 1 ? median(g.slice(1)).toFixed(0) : "-")).join(" / "),
    };
  });
}

async function opencode(): Promise<void> {
  const label = process.env.BENCH_OPENCODE ?? "opencode@1.18.33";
  if (label === "none") return;
  const client = CLIENTS.find((c) => c.label === label);
  if (!client) throw new Error(`unknown client ${label}`);
  const wirings = OPENCODE_WIRINGS.filter((w) => !process.env.BENCH_WIRINGS || WIRINGS.includes(w as Wiring));
  const loads = [loadavg()[0]!];
  const t0 = Date.now();
  const gaps = await benchOpencode(client, wirings as OpencodeWiring[], ROUNDS, CALLS, (line) => {
    loads.push(loadavg()[0]!);
    process.stderr.write(line + "\n");
  });
  table(
    `OpenCode ${client.version}: model tool call → next request (in-scope write), calls 2..${CALLS}, ${ROUNDS} rounds interleaved; ` +
      `${cpus().length} CPUs, load average (1 min) ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}, ${((Date.now() - t0) / 1000).toFixed(0)} s`,
    rowsOf(gaps, OPENCODE_WHAT),
  );
}

const GOAL = "Goal: the guard adds at most 5 ms at p50 over no hook.";

async function main(): Promise<void> {
  await claude();
  await opencode();
  console.log(`\n${GOAL}`);
  // The latest figures replace this bench's section of bench/RESULTS.md (results.ts).
  replaceSection(
    "npm run bench:clients",
    ["## `npm run bench:clients`", runLine(), ...printed, GOAL].join("\n\n"),
  );
}

async function claude(): Promise<void> {
  if (LABEL === "none") return;
  const client = CLIENTS.find((c) => c.label === LABEL);
  if (!client) throw new Error(`unknown client ${LABEL}`);
  const model = await startFakeAnthropic();
  // Every request stamped as it arrives (the fake records it before answering).
  const stamps = new WeakMap<object, number>();
  const push = model.requests.push.bind(model.requests);
  model.requests.push = (...items) => {
    const t = performance.now();
    for (const i of items) stamps.set(i, t);
    return push(...items);
  };
  const ws = await prepareWorkspace();
  const initSettings = JSON.parse(readFileSync(join(ws.repo, ".claude", "settings.json"), "utf8"));
  if (TIMED) useStandin(ws.repo, "healthy");
  const initMcp = readFileSync(join(ws.repo, ".mcp.json"), "utf8");
  const inServer: Record<string, number[]> = Object.fromEntries(WIRINGS.map((w) => [w, []]));
  const gaps: Record<string, number[][]> = Object.fromEntries(WIRINGS.map((w) => [w, []]));
  const loads: number[] = [loadavg()[0]!];
  const t0 = Date.now();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const order = WIRINGS.map((_, i) => WIRINGS[(i + round) % WIRINGS.length]!);
      for (const w of order) {
        settingsFor(w, initSettings, ws.repo, initMcp);
        const steps: Step[] = [
          // Each run its own objective and output: an earlier run's open intent would be a duplicate.
          sh("intent", intentCmd(`Add module ${round}-${w}`, `module-${round}-${w}`, `module-${round}-${w}`)),
          // A folder of its own per run: an earlier run's session may still hold its scope.
          sh("scope", scopeCmd(`src/r${round}-${w}`)),
          ...Array.from({ length: CALLS }, (_, k) => write(`w${k + 1}`, `src/r${round}-${w}/f${k + 1}.ts`)),
        ];
        const before = model.requests.length;
        const logged = TIMED ? standinLog(ws.repo).length : 0;
        const r = await runClaude(client, ws, model, steps, {
          prompt: "Add a feature module to the demo app",
        });
        // The first main-loop request carrying n tool results, by n.
        const byCount = new Map<number, number>();
        for (const q of model.requests.slice(before)) {
          if (!q.url.startsWith("/v1/messages")) continue;
          const tools = (q.body as any)?.tools;
          if (!Array.isArray(tools) || !tools.some((t: any) => t?.name === "Bash")) continue;
          const n = claudeToolResults(q.body).length;
          if (!byCount.has(n)) byCount.set(n, stamps.get(q)!);
        }
        // Write k is tool call 2 + k: its tool_use went out on the request with 1 + k results.
        const g: number[] = [];
        for (let k = 1; k <= CALLS; k++) {
          const a = byCount.get(1 + k);
          const b = byCount.get(2 + k);
          if (a !== undefined && b !== undefined) g.push(b - a);
        }
        const refused = [...r.results.entries()].filter(
          ([id, v]) => id.startsWith("w") && /Cohent: /.test(v.output),
        );
        gaps[w]!.push(g);
        if (TIMED)
          inServer[w]!.push(
            ...standinLog(ws.repo)
              .slice(logged)
              .filter((e) => e.event === "hook-answer")
              .map((e) => e.ms as number),
          );
        loads.push(loadavg()[0]!);
        process.stderr.write(
          `[bench] round ${round + 1}/${ROUNDS} ${w.padEnd(9)} exit ${r.code} ${g.length}/${CALLS} calls, ` +
            `median(2..N) ${g.length > 1 ? median(g.slice(1)).toFixed(0) : "-"} ms${refused.length ? `, ${refused.length} refused! ${refused[0]![1].output.slice(0, 200)}` : ""}\n`,
        );
      }
    }
  } finally {
    await ws.dispose();
    await model.close();
  }
  const rows = rowsOf(gaps, WHAT, (w): Record<string, string | number> =>
    TIMED
      ? {
          "hook calls in server": inServer[w]!.length,
          "in-server p50 ms": inServer[w]!.length ? median(inServer[w]!).toFixed(1) : "-",
        }
      : {},
  );
  table(
    `Claude Code ${client.version}: model tool_use → next request (in-scope Write), calls 2..${CALLS}, ${ROUNDS} rounds interleaved; ` +
      `${TIMED ? "server behind the timing pass-through; " : ""}${cpus().length} CPUs, load average (1 min) ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}, ${((Date.now() - t0) / 1000).toFixed(0)} s`,
    rows,
  );
}

void main().catch((err) => {
  console.error(err);
  process.exit(1);
});
