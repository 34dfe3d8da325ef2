// init's exact OpenCode wiring (.opencode/plugin/cohent.js) in the real binaries, at each pinned
// version: the plugin runs the adapter in OpenCode's own process (issue 44), so its contract is
// cohent.cjs's in-process API, not a process per call. A stand-in adapter that serves that API
// (and, run as a program, the detached stop) is the control; the adapter missing, not serving
// the plugin, throwing at load, answering junk or never answering must each refuse the gated
// call with a reason the model reads. A `node` first on PATH counts the processes started: only
// the end-of-work events (session.idle, session.deleted) may start one. (wiring-suite.ts's
// opencodeSuite is the spawned plugin's, before issue 44.)
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildAdapter } from "../../adapter/build.mjs";
import { FAIL_CLOSED_REASON } from "../../adapter/src/guard/guard.js";
import { init } from "../../adapter/src/installer/init.js";
import { OPENCODE_IN_PROCESS_MARK } from "../../adapter/src/installer/opencode-plugin.js";
import { CLIENTS, isInstalled, type ClientSpec } from "./clients.ts";
import { startFakeChat, type FakeChat } from "./fake-chat.ts";
import { breakAdapter, pathWithoutNode, restoreAdapter } from "./failures.ts";
import {
  hookCalls,
  probeWorkspace,
  runOpencode,
  type ProbeRun,
  type ProbeWorkspace,
} from "./probe-harness.ts";
import { outcome } from "./probe-kit.ts";
import type { Step } from "./script.ts";

const selected = (process.env.COHENT_CLIENTS ?? "")
  .split(",")
  .map((s) => s.trim())
  .filter(Boolean);
const enabled = (c: ClientSpec) =>
  selected.length === 0 || selected.includes(c.label) || selected.includes(c.kind);

/**
 * The stand-in adapter: required by the plugin it logs each call (pid, host, dir, payload) where
 * hookCalls reads them and answers a deny for a tool call that names "denied", else an allow; run
 * as a program (the detached stop) it logs its argv and stdin the same way.
 */
const standin = (logDir: string) => `// ${OPENCODE_IN_PROCESS_MARK}: a test's stand-in adapter
const fs = require("fs");
const log = (o) => fs.appendFileSync(${JSON.stringify(join(logDir, "standin-log.jsonl"))}, JSON.stringify({ t: Date.now(), label: "adapter", env: {}, pid: process.pid, ...o }) + "\\n");
const answer = (raw) => {
  let p = {};
  try { p = JSON.parse(raw); } catch {}
  const deny = p.event === "tool.execute.before" && raw.includes("denied");
  return JSON.stringify(deny ? { decision: "deny", reason: "R-WIRED" } : { decision: "allow" });
};
exports.hook = async (raw, o) => {
  log({ argv: ["in-process", o.host], cwd: o.dir, raw, payload: JSON.parse(raw) });
  return { stdout: answer(raw), exitCode: 0 };
};
if (require.main === module) {
  let raw = "";
  process.stdin.on("data", (c) => (raw += c));
  process.stdin.on("end", () => {
    let payload = null;
    try { payload = JSON.parse(raw); } catch {}
    log({ argv: process.argv.slice(2), cwd: process.cwd(), raw, payload });
    process.stdout.write(answer(raw));
  });
}
`;

let bundle = "";

function initialized(): ProbeWorkspace {
  const ws = probeWorkspace();
  spawnSync("git", ["remote", "add", "origin", "git@github.com:acme/demo.git"], { cwd: ws.repo });
  init({ cwd: ws.repo, server: "http://127.0.0.1:9", repo: "acme/demo", bundle });
  return ws;
}

async function dispose(ws: ProbeWorkspace): Promise<void> {
  for (let i = 0; ; i++)
    try {
      return ws.dispose();
    } catch (err) {
      if (i === 5) return void process.stderr.write(`[wiring] left ${ws.dir}: ${String(err)}\n`);
      await new Promise((r) => setTimeout(r, 300));
    }
}

/** A `node` first on PATH that logs each start (its argv) and runs the real one. */
function nodeSpy(ws: ProbeWorkspace): { path: string; starts: () => string[] } {
  const dir = join(ws.dir, "spy-bin");
  const log = join(ws.dir, "node-starts.log");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "node"), `#!/bin/sh\necho "$*" >> '${log}'\nexec '${process.execPath}' "$@"\n`);
  chmodSync(join(dir, "node"), 0o755);
  return {
    path: `${dir}:${process.env.PATH}`,
    starts: () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : []),
  };
}

const sh = (id: string, command: string): Step => ({
  id,
  action: { kind: "tool", name: "bash", args: { command, description: id } },
});
const ocWrite = (ws: ProbeWorkspace, id: string, rel: string): Step => ({
  id,
  action: { kind: "tool", name: "write", args: { filePath: join(ws.repo, rel), content: `${id}\n` } },
});
const verdict = (ws: ProbeWorkspace, run: ProbeRun, step: string, file: string) => ({
  outcome: outcome(ws, file),
  result: run.results.get(step) ?? null,
});

/** Waits for the detached stop's line (it may land a moment after the run). */
async function settled(ws: ProbeWorkspace): Promise<ReturnType<typeof hookCalls>> {
  let hooks = hookCalls(ws);
  for (let i = 0; i < 100 && !hooks.some((h) => h.payload?.event === "session.idle"); i++) {
    await new Promise((res) => setTimeout(res, 50));
    hooks = hookCalls(ws);
  }
  return hooks;
}

function opencodeSuite(client: ClientSpec): void {
  describe.skipIf(!enabled(client))(`${client.label}: init's .opencode/plugin/cohent.js (in-process)`, () => {
    let model: FakeChat;
    beforeAll(async () => {
      if (!isInstalled(client))
        throw new Error(`${client.label} is not installed; run npx tsx test/clients/install.ts`);
      bundle ||= await buildAdapter({
        quiet: true,
        outfile: join(mkdtempSync(join(os.tmpdir(), "cohent-wiring-bundle-")), "cohent.mjs"),
      });
      model = await startFakeChat();
    });
    afterAll(async () => model?.close());

    it("hands every hook to the adapter in OpenCode's own process (no node per call): an allow runs, a deny is refused with its reason; only the stop starts node", async () => {
      const ws = initialized();
      try {
        writeFileSync(join(ws.repo, ".cohent", "cohent.cjs"), standin(ws.hookDir));
        const spy = nodeSpy(ws);
        const r = await runOpencode(
          client,
          ws,
          model,
          [
            ocWrite(ws, "allowed", "allowed.txt"),
            sh("denied", "echo d > denied.txt"),
            sh("shell", "echo s > shell.txt"),
          ],
          { prompt: "go", env: { PATH: spy.path } },
        );
        expect(verdict(ws, r, "allowed", "allowed.txt").outcome).toBe("open");
        expect(verdict(ws, r, "shell", "shell.txt").outcome).toBe("open");
        expect(verdict(ws, r, "denied", "denied.txt")).toMatchObject({
          outcome: "closed",
          result: "R-WIRED",
        });
        const hooks = await settled(ws);
        const inProcess = hooks.filter((h) => h.argv[0] === "in-process");
        const spawned = hooks.filter((h) => h.argv[0] !== "in-process");
        for (const h of inProcess) {
          expect(h.argv).toEqual(["in-process", "opencode"]);
          expect(h.cwd).toBe(ws.repo);
          expect(Object.keys(h.payload).sort()).toEqual(["directory", "event", "input", "output"]);
        }
        // One process served them all: OpenCode's.
        expect(new Set(inProcess.map((h) => (h as { pid?: number }).pid)).size).toBe(1);
        expect(new Set(inProcess.map((h) => h.payload.event))).toEqual(
          new Set(["tool.execute.before", "tool.execute.after", "chat.message", "session.created"]),
        );
        expect(inProcess.filter((h) => h.payload.event === "tool.execute.before")).toHaveLength(3);
        // The end-of-work events alone go to a node process that outlives `opencode run`.
        expect(spawned.map((h) => h.payload.event)).toContain("session.idle");
        for (const h of spawned) {
          expect(["session.idle", "session.deleted"]).toContain(h.payload.event);
          expect(h.argv).toEqual(["hook", "--host", "opencode"]);
        }
        expect(spy.starts()).toEqual(spawned.map(() => ".cohent/cohent.cjs hook --host opencode"));
        const before = inProcess.find((h) => h.payload.event === "tool.execute.before")!.payload;
        expect(before.input).toMatchObject({ tool: "write", sessionID: expect.any(String) });
        expect(before.output.args).toMatchObject({ filePath: join(ws.repo, "allowed.txt") });
      } finally {
        await dispose(ws);
      }
    });

    it("the real adapter loads in OpenCode's process and decides there, no node per call (the service unreachable: refused, named)", async () => {
      const ws = initialized();
      try {
        const spy = nodeSpy(ws);
        const r = await runOpencode(
          client,
          ws,
          model,
          [ocWrite(ws, "gated", "gated.txt"), sh("shell", "echo s > shell.txt")],
          {
            prompt: "go",
            env: { PATH: spy.path, COHENT_AGENT_TOKEN: "coh_probe" },
          },
        );
        expect(verdict(ws, r, "gated", "gated.txt")).toMatchObject({
          outcome: "closed",
          result: expect.stringMatching(/^Cohent: .*cannot be reached/),
        });
        expect(verdict(ws, r, "shell", "shell.txt").outcome).toBe("closed");
        for (let i = 0; i < 60 && spy.starts().length === 0; i++)
          await new Promise((res) => setTimeout(res, 50));
        // The stop (and the session's end, when OpenCode sends it) only.
        expect(spy.starts().length).toBeGreaterThanOrEqual(1);
        expect(spy.starts().length).toBeLessThanOrEqual(2);
        for (const s of spy.starts()) expect(s).toBe(".cohent/cohent.cjs hook --host opencode");
      } finally {
        await dispose(ws);
      }
    });

    const marked = (body: string) => `// ${OPENCODE_IN_PROCESS_MARK}: a test's adapter\n${body}\n`;
    const cases: [string, (ws: ProbeWorkspace) => NodeJS.ProcessEnv, string][] = [
      ["the adapter missing", (ws) => (breakAdapter(ws.repo, "missing"), {}), FAIL_CLOSED_REASON],
      // No mark: never required (it would run its CLI in OpenCode's process), so its throw never happens either.
      [
        "an adapter that does not serve the plugin",
        (ws) => (breakAdapter(ws.repo, "throws"), {}),
        FAIL_CLOSED_REASON,
      ],
      [
        "the adapter throws at load",
        (ws) => {
          writeFileSync(
            join(ws.repo, ".cohent", "cohent.cjs"),
            marked(`throw new Error("broken at " + __filename);`),
          );
          return {};
        },
        FAIL_CLOSED_REASON,
      ],
      [
        "the adapter answers junk",
        (ws) => {
          writeFileSync(
            join(ws.repo, ".cohent", "cohent.cjs"),
            marked(`exports.hook = async () => ({ stdout: "ok, go ahead", exitCode: 0 });`),
          );
          return {};
        },
        FAIL_CLOSED_REASON,
      ],
      [
        "the adapter never answers (OpenCode has no hook timeout: the plugin's own)",
        (ws) => {
          writeFileSync(
            join(ws.repo, ".cohent", "cohent.cjs"),
            marked(`exports.hook = () => new Promise(() => {});`),
          );
          return { COHENT_PLUGIN_TIMEOUT_MS: "3000" };
        },
        "Cohent: the guard hook did not answer within 25 s",
      ],
    ];
    it.each(cases)("%s: the call is refused, the model reads the reason", async (_name, setup, reason) => {
      const ws = initialized();
      try {
        const env = setup(ws);
        const r = await runOpencode(
          client,
          ws,
          model,
          [ocWrite(ws, "gated", "gated.txt"), sh("shell", "echo s > shell.txt")],
          { prompt: "go", env },
        );
        expect(verdict(ws, r, "gated", "gated.txt")).toMatchObject({
          outcome: "closed",
          result: expect.stringContaining(reason),
        });
        expect(verdict(ws, r, "shell", "shell.txt").outcome).toBe("closed");
        expect(r.stderr).not.toMatch(/usage: node \.cohent\/cohent\.mjs/);
      } finally {
        restoreAdapter(ws.repo);
        await dispose(ws);
      }
    });

    it("no node on PATH: tool calls are still decided (the adapter needs none in OpenCode's process)", async () => {
      const ws = initialized();
      try {
        writeFileSync(join(ws.repo, ".cohent", "cohent.cjs"), standin(ws.hookDir));
        const r = await runOpencode(
          client,
          ws,
          model,
          [ocWrite(ws, "allowed", "allowed.txt"), sh("denied", "echo d > denied.txt")],
          { prompt: "go", env: { PATH: pathWithoutNode(join(ws.dir, "no-node-bin")) } },
        );
        expect(verdict(ws, r, "allowed", "allowed.txt").outcome).toBe("open");
        expect(verdict(ws, r, "denied", "denied.txt")).toMatchObject({
          outcome: "closed",
          result: "R-WIRED",
        });
      } finally {
        await dispose(ws);
      }
    });
  });
}

for (const client of CLIENTS.filter((c) => c.kind === "opencode")) opencodeSuite(client);
