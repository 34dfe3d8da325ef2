// init's exact wiring in the real binaries (issue 24), one file per client kind
// (wiring-<kind>.conformance.ts): Copilot CLI, Gemini
// CLI and OpenCode at their pinned versions, each run against a scripted model
// in a checkout that `init` wrote, with `.cohent/cohent.cjs` made to fail in
// each way the adapter can fail (missing, throwing at load, `node` not on
// PATH, hanging). The gated call must not run, and the model must read the
// refusal. A stand-in adapter that answers allow or deny in the host's
// dialect is the control: the same wiring lets an allowed call through, so a
// refusal is the wiring's doing, not a call the client never made. The
// adapter's own answers in each dialect are the hook's (issue 24 item 1);
// the hang runs through the real adapter, whose deadline answers in the
// host's dialect.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildAdapter } from "../../adapter/build.mjs";
import { FAIL_CLOSED_REASON } from "../../adapter/src/guard/guard.js";
import { init } from "../../adapter/src/installer/init.js";
import { binPath, CLIENTS, isInstalled, type ClientSpec } from "./clients.ts";
import { startFakeChat, type FakeChat } from "./fake-chat.ts";
import { startFakeGemini, type FakeGemini } from "./fake-gemini.ts";
import { breakAdapter, pathWithoutNode, restoreAdapter } from "./failures.ts";
import {
  hookCalls,
  probeWorkspace,
  runCopilot,
  runGemini,
  type ProbeRun,
  type ProbeWorkspace,
} from "./probe-harness.ts";
import { spawnClient } from "./harness.ts";
import { outcome } from "./probe-kit.ts";
import { Script, type Step } from "./script.ts";

/** OpenCode's wiring has its own suite (wiring-opencode.conformance.ts): its plugin decides in-process. */
export type WiredKind = "copilot" | "gemini";

const selected = (process.env.COHENT_CLIENTS ?? "")
  .split(",")
  .map((s) => s.trim())
  .filter(Boolean);
const enabled = (c: ClientSpec) =>
  selected.length === 0 || selected.includes(c.label) || selected.includes(c.kind);

/**
 * A stand-in for the adapter at .cohent/cohent.cjs: logs each call the way
 * standin-hook.cjs does (so ProbeRun.hooks lists them) and answers in the
 * dialect of its `--host`: a deny for a call that names "denied", an
 * explicit allow for every other tool call, nothing for the other events.
 */
const standinAdapter = (logDir: string) => `const fs = require("fs");
let raw = "";
process.stdin.on("data", (c) => (raw += c));
process.stdin.on("end", () => {
  let payload = null;
  try { payload = JSON.parse(raw); } catch {}
  fs.appendFileSync(${JSON.stringify(join(logDir, "standin-log.jsonl"))}, JSON.stringify({ t: Date.now(), label: "adapter", argv: process.argv.slice(2), cwd: process.cwd(), env: {}, raw, payload }) + "\\n");
  const host = process.argv[process.argv.indexOf("--host") + 1];
  const p = payload || {};
  const tool = host === "copilot"
    ? p.toolArgs !== undefined && p.toolResult === undefined && p.hookName === undefined
    : p.event === "tool.execute.before" || p.hook_event_name === "BeforeTool";
  const deny = raw.includes("denied");
  const say = (o) => process.stdout.write(JSON.stringify(o));
  if (host === "opencode") return say(tool && deny ? { decision: "deny", reason: "R-WIRED" } : { decision: "allow" });
  if (!tool) return;
  if (host === "copilot") say(deny ? { permissionDecision: "deny", permissionDecisionReason: "R-WIRED" } : { permissionDecision: "allow" });
  if (host === "gemini") say(deny ? { decision: "deny", reason: "R-WIRED" } : { decision: "allow" });
});
`;

let bundle = "";
const built = () =>
  beforeAll(async () => {
    bundle ||= await buildAdapter({
      quiet: true,
      outfile: join(mkdtempSync(join(os.tmpdir(), "cohent-wiring-bundle-")), "cohent.mjs"),
    });
  });

/** The probe checkout, written by init as a person would run it (the service is never called here). */
function initialized(): ProbeWorkspace {
  const ws = probeWorkspace();
  spawnSync("git", ["remote", "add", "origin", "git@github.com:acme/demo.git"], { cwd: ws.repo });
  init({ cwd: ws.repo, server: "http://127.0.0.1:9", repo: "acme/demo", bundle });
  return ws;
}

/** A run's folders go once nothing writes there any more (an OpenCode child may still be flushing its logs). */
async function dispose(ws: ProbeWorkspace): Promise<void> {
  for (let i = 0; ; i++)
    try {
      return ws.dispose();
    } catch (err) {
      if (i === 5) return void process.stderr.write(`[wiring] left ${ws.dir}: ${String(err)}\n`);
      await new Promise((r) => setTimeout(r, 300));
    }
}

type Mode = "missing" | "throws" | "no node";
const MODES: Mode[] = ["missing", "throws", "no node"];

function breakIt(ws: ProbeWorkspace, how: Mode): NodeJS.ProcessEnv {
  if (how === "no node") return { PATH: pathWithoutNode(join(ws.dir, "no-node-bin")) };
  breakAdapter(ws.repo, how);
  return {};
}

const standin = (ws: ProbeWorkspace) =>
  writeFileSync(join(ws.repo, ".cohent", "cohent.cjs"), standinAdapter(ws.hookDir));

/** The gated write: closed, and what the model read for it. */
function verdict(ws: ProbeWorkspace, run: ProbeRun, step: string, file: string) {
  return { outcome: outcome(ws, file), result: run.results.get(step) ?? null };
}

/**
 * One run of Copilot or Gemini started in a folder of the checkout other than its root (the probe
 * harness starts them at the root): the stand-in adapter's calls, and the exit code.
 */
async function runIn(
  client: ClientSpec,
  ws: ProbeWorkspace,
  model: FakeChat | FakeGemini,
  steps: Step[],
  cwd: string,
): Promise<{ code: number | null; hooks: ReturnType<typeof hookCalls> }> {
  model.setScript(new Script(steps));
  hookCalls(ws, true);
  const base = { PATH: process.env.PATH, HOME: ws.home, NO_COLOR: "1", TERM: "dumb" };
  let env: NodeJS.ProcessEnv;
  let args: string[];
  if (client.kind === "copilot") {
    mkdirSync(join(ws.home, ".copilot"), { recursive: true });
    writeFileSync(join(ws.home, ".copilot", "config.json"), JSON.stringify({ trustedFolders: [ws.repo] }));
    env = {
      ...base,
      COPILOT_PROVIDER_BASE_URL: (model as FakeChat).baseUrl,
      COPILOT_PROVIDER_API_KEY: "dummy",
      COPILOT_MODEL: "gpt-5.4",
      COPILOT_OFFLINE: "true",
      COPILOT_AUTO_UPDATE: "false",
    };
    args = ["-p", "go", "--allow-all-tools"];
  } else {
    mkdirSync(join(ws.home, ".gemini"), { recursive: true });
    writeFileSync(
      join(ws.home, ".gemini", "settings.json"),
      JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } } }),
    );
    env = {
      ...base,
      GEMINI_API_KEY: "dummy",
      GOOGLE_GEMINI_BASE_URL: (model as FakeGemini).url,
      GEMINI_CLI_TRUST_WORKSPACE: "true",
    };
    args = ["-p", "go", "-m", "gemini-2.5-flash", "--yolo"];
  }
  const r = await spawnClient(binPath(client), args, cwd, env, 120_000);
  return { code: r.code, hooks: hookCalls(ws) };
}

const sh = (id: string, command: string): Step => ({
  id,
  action: { kind: "tool", name: "bash", args: { command, description: id } },
});

function copilotSuite(client: ClientSpec): void {
  describe.skipIf(!enabled(client))(`${client.label}: init's .github/hooks/cohent.json`, () => {
    let model: FakeChat;
    built();
    beforeAll(async () => {
      if (!isInstalled(client))
        throw new Error(`${client.label} is not installed; run npx tsx test/clients/install.ts`);
      model = await startFakeChat();
    });
    afterAll(async () => model?.close());

    it('passes --host copilot from the repository root, lets an allow through and honours a deny; started in a subfolder too (cwd ".")', async () => {
      const ws = initialized();
      try {
        standin(ws);
        const steps = [sh("allowed", "echo a > allowed.txt"), sh("denied", "echo d > denied.txt")];
        const r = await runCopilot(client, ws, model, steps, { prompt: "go" });
        expect(verdict(ws, r, "allowed", "allowed.txt").outcome).toBe("open");
        expect(verdict(ws, r, "denied", "denied.txt")).toMatchObject({
          outcome: "closed",
          result: expect.stringContaining("R-WIRED"),
        });
        const pre = r.hooks.filter((h) => h.payload?.toolName === "bash");
        expect(pre.length).toBeGreaterThanOrEqual(2);
        // Copilot drops .claude/settings.json whole for init's mcp_tool entry (measured, 5207bf6): no call says
        // --host claude. It does start .mcp.json's server (`mcp`), which the stand-in logs too.
        const native = r.hooks.filter((h) => h.argv.join(" ") === "hook --host copilot");
        const viaClaude = r.hooks.filter((h) => h.argv.join(" ") === "hook --host claude");
        const mcp = r.hooks.filter((h) => h.argv[0] === "mcp");
        expect(native.length + mcp.length).toBe(r.hooks.length);
        expect(viaClaude).toEqual([]);
        expect(r.stderr).toMatch(/settings\.json' could not be loaded: .*Invalid hook type/);
        for (const h of native) expect(h.cwd).toBe(ws.repo);
        // Every event init wires reaches the adapter: session start (source), the prompt, tool calls and their
        // results, the stop and the session end.
        const has = (k: string) => native.some((h) => h.payload && k in h.payload);
        for (const k of ["source", "prompt", "toolArgs", "toolResult", "stopReason", "reason"])
          expect(has(k), k).toBe(true);
        rmSync(join(ws.repo, "allowed.txt"));
        // Started in src/: 1.0.85 runs a hook there unless it says cwd "." (measured), and .cohent/ is not there.
        const sub = await runIn(
          client,
          ws,
          model,
          [sh("allowed", "echo a > ../allowed.txt")],
          join(ws.repo, "src"),
        );
        const subNative = sub.hooks.filter((h) => h.argv.join(" ") === "hook --host copilot");
        expect(subNative.length).toBeGreaterThan(0);
        expect(subNative.map((h) => h.cwd)).toEqual(subNative.map(() => ws.repo));
        expect(outcome(ws, "allowed.txt")).toBe("open");
      } finally {
        await dispose(ws);
      }
    });

    it.each(MODES)("the adapter %s: the call is refused", async (how) => {
      const ws = initialized();
      try {
        const env = breakIt(ws, how);
        const r = await runCopilot(client, ws, model, [sh("gated", "echo g > gated.txt")], {
          prompt: "go",
          env,
        });
        expect(verdict(ws, r, "gated", "gated.txt")).toMatchObject({
          outcome: "closed",
          result: expect.stringContaining("Denied by preToolUse hook"),
        });
      } finally {
        restoreAdapter(ws.repo);
        await dispose(ws);
      }
    });

    it("the adapter hangs: its own deadline answers a deny before timeoutSec", async () => {
      const ws = initialized();
      try {
        breakAdapter(ws.repo, "hangs");
        const r = await runCopilot(client, ws, model, [sh("gated", "echo g > gated.txt")], {
          prompt: "go",
          env: { COHENT_HOOK_DEADLINE_MS: "4000", COHENT_AGENT_TOKEN: "coh_probe" },
        });
        expect(verdict(ws, r, "gated", "gated.txt")).toMatchObject({
          outcome: "closed",
          result: expect.stringContaining("did not reach a verdict within 4 s"),
        });
      } finally {
        restoreAdapter(ws.repo);
        await dispose(ws);
      }
    });
  });
}

const writeFile = (ws: ProbeWorkspace, id: string, rel: string): Step => ({
  id,
  action: { kind: "tool", name: "write_file", args: { file_path: join(ws.repo, rel), content: `${id}\n` } },
});

function geminiSuite(client: ClientSpec): void {
  describe.skipIf(!enabled(client))(`${client.label}: init's .gemini/settings.json`, () => {
    let model: FakeGemini;
    built();
    beforeAll(async () => {
      if (!isInstalled(client))
        throw new Error(`${client.label} is not installed; run npx tsx test/clients/install.ts`);
      model = await startFakeGemini();
    });
    afterAll(async () => model?.close());

    it("passes --host gemini on every event, lets an allow through and honours a deny; a gemini started in a subfolder loads no project hook (unguarded)", async () => {
      const ws = initialized();
      try {
        standin(ws);
        const r = await runGemini(
          client,
          ws,
          model,
          [writeFile(ws, "allowed", "allowed.txt"), writeFile(ws, "denied", "denied.txt")],
          { prompt: "go" },
        );
        expect(verdict(ws, r, "allowed", "allowed.txt").outcome).toBe("open");
        expect(verdict(ws, r, "denied", "denied.txt")).toMatchObject({
          outcome: "closed",
          result: expect.stringContaining("R-WIRED"),
        });
        const events = [...new Set(r.hooks.map((h) => h.payload?.hook_event_name))].sort();
        expect(events).toEqual(
          expect.arrayContaining(["AfterAgent", "AfterTool", "BeforeAgent", "BeforeTool", "SessionStart"]),
        );
        for (const h of r.hooks) expect(h.argv).toEqual(["hook", "--host", "gemini"]);
        // Measured: Gemini reads .gemini/settings.json of its working folder only; doctor says so.
        const sub = await runIn(
          client,
          ws,
          model,
          [writeFile(ws, "sub", "src/sub.txt")],
          join(ws.repo, "src"),
        );
        expect(sub.hooks).toEqual([]);
        expect(outcome(ws, "src/sub.txt")).toBe("open");
      } finally {
        await dispose(ws);
      }
    });

    it.each(MODES)(
      "the adapter %s: the wrapper refuses with its one line (no node: the bare prompt hook blocks the turn first)",
      async (how) => {
        const ws = initialized();
        try {
          const env = breakIt(ws, how);
          const r = await runGemini(client, ws, model, [writeFile(ws, "gated", "gated.txt")], {
            prompt: "go",
            env,
          });
          const v = verdict(ws, r, "gated", "gated.txt");
          expect(v.outcome).toBe("closed");
          if (how === "no node" && v.result === null)
            // Measured: `node` not found is exit 127, which Gemini reads as a deny on BeforeAgent too, so the
            // prompt itself is blocked before any tool call (the bare prompt hook, not the wrapper).
            expect(r.stderr).toContain("Agent execution blocked: bash: line 1: node: command not found");
          else expect(v.result).toContain(FAIL_CLOSED_REASON);
          // The adapter's own stderr (a stack trace, local paths) never reaches the model.
          expect(v.result ?? "").not.toContain(ws.repo);
          expect(v.result ?? "").not.toMatch(/at .*\.cjs:\d+/);
        } finally {
          restoreAdapter(ws.repo);
          await dispose(ws);
        }
      },
    );

    it("the adapter hangs: its own deadline answers a deny before the timeout", async () => {
      const ws = initialized();
      try {
        breakAdapter(ws.repo, "hangs");
        const r = await runGemini(client, ws, model, [writeFile(ws, "gated", "gated.txt")], {
          prompt: "go",
          env: { COHENT_HOOK_DEADLINE_MS: "4000", COHENT_AGENT_TOKEN: "coh_probe" },
        });
        expect(verdict(ws, r, "gated", "gated.txt")).toMatchObject({
          outcome: "closed",
          result: expect.stringContaining("did not reach a verdict within 4 s"),
        });
      } finally {
        restoreAdapter(ws.repo);
        await dispose(ws);
      }
    });
  });
}

/** init's wiring of one client kind, at each pinned version: one file per kind, so that kinds run in parallel. */
export function wiringSuite(kind: WiredKind): void {
  const suite = { copilot: copilotSuite, gemini: geminiSuite }[kind];
  for (const client of CLIENTS.filter((c) => c.kind === kind)) suite(client);
}
