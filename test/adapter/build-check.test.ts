import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { OPENCODE_PLUGIN, OPENCODE_PLUGIN_FILE } from "../../adapter/src/installer/opencode-plugin.js";
import { backendForFile } from "../helpers/backend.js";
import { writeVariantBuild } from "../helpers/build-variant.js";
import { addPatch, agentRuns, codex, intentJson, makeCheckout, run, type Checkout } from "./helpers.js";

/**
 * The rule of every long-lived guard (adapter/src/loader/build-check.ts), in the two processes
 * besides the MCP server (test/mcp/build-check.test.ts): the warm guard and OpenCode's plugin, both
 * through cohent.cjs's in-process API. The build is upgraded between calls to one whose adapter
 * (cohent-core.js) fails to load: the call is refused with the repair, by the cold call, by the
 * warm guard it starts and by the plugin. Then upgraded to a working build with reasons of its
 * own: those reasons answer.
 */

const REPO = "acme/buildcheck";
const fx = backendForFile(REPO, "Check the build", ["alice", "Codex"]);

/** The adapter's code made not to compile: each `"use strict";` a statement run into the next. */
const WHOLE_BROKEN: [string, string] = ['"use strict";', "throw Error()"];
const UPGRADED: [string, string] = ["outside your declared scope", "OUTSIDE YOUR DECLARED SCOPE"];
const NO_INTENT_UPGRADED: [string, string] = ["no prompt or intent", "NO PROMPT OR INTENT"];

const started: number[] = [];
const folders: string[] = [];
afterEach(() => {
  for (const pid of started.splice(0))
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      /* ended already */
    }
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The build's two files as they are now, and a function that writes them back (as a repair would). */
function keep(co: Checkout): () => void {
  const files = ["cohent.cjs", "cohent-core.js"].map((n) => path.join(co.root, ".cohent", n));
  const bytes = files.map((f) => readFileSync(f));
  return () => files.forEach((f, i) => writeFileSync(f, bytes[i]!));
}

/** The warm guards running for a TMPDIR (pid, socket name), from /proc. */
function guards(tmp: string): { pid: number; name: string }[] {
  const dir = path.join(tmp, `cohent-warm-${process.getuid!()}`);
  let names: Set<string>;
  try {
    names = new Set(readdirSync(dir));
  } catch {
    return [];
  }
  const found: { pid: number; name: string }[] = [];
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${e}/cmdline`, "utf8").split("\0");
    } catch {
      continue;
    }
    const at = argv.indexOf("warm");
    if (at < 1 || !argv[at - 1]!.endsWith("cohent.cjs") || !names.has(argv[at + 1]!)) continue;
    found.push({ pid: Number(e), name: argv[at + 1]! });
  }
  for (const g of found) if (!started.includes(g.pid)) started.push(g.pid);
  return found;
}

async function until<T>(what: string, f: () => T | null | undefined | false, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function codexHook(co: Checkout, payload: object, env: Record<string, string>) {
  const r = await run(co, ["hook", "--host", "codex"], { stdin: JSON.stringify(payload), env });
  const out = r.stdout.trim() ? JSON.parse(r.stdout)?.hookSpecificOutput : null;
  return out?.permissionDecision === "deny" ? `denied: ${out.permissionDecisionReason}` : "allowed";
}

describe("the warm guard runs the build the checkout holds", () => {
  it("upgraded to a build whose adapter fails to load: refused with the repair; upgraded again: its reasons", async () => {
    const S = "build-warm";
    const co = await makeCheckout(fx.backend.url, REPO);
    const tmp = mkdtempSync(path.join(os.tmpdir(), "cohent-build-warm-"));
    folders.push(tmp, path.dirname(co.root));
    const env = { COHENT_AGENT_TOKEN: fx.tokens[0]!, TMPDIR: tmp, COHENT_HOOK_DEADLINE_MS: "5000" };
    expect(await codexHook(co, codex.prompt(S, co.root, "Check the build"), env)).toBe("allowed");
    for (const args of [
      ["intent", intentJson({ objective: "Check the build", outputs: ["build"] })],
      ["scope", `src/${S}`],
    ]) {
      const r = await agentRuns(co, codex, S, args, { env });
      expect(r.cmd?.code, `${args[0]}: ${r.pre.denied ?? ""} ${r.cmd?.stderr ?? ""}`).toBe(0);
    }
    const inScope = (n: number) => codex.patch(S, co.root, addPatch(`src/${S}/f${n}.ts`));
    const first = await until("a warm guard", () => guards(tmp)[0]);
    expect(await codexHook(co, inScope(1), env)).toBe("allowed");

    // Upgraded to a build whose adapter does not compile: the cold call is refused, a guard of that
    // build starts, and every call it answers is refused, naming the file and the repair.
    const original = keep(co);
    writeVariantBuild(path.join(co.root, ".cohent"), [WHOLE_BROKEN]);
    const failedToLoad =
      /^denied: Cohent: \.cohent\/cohent-core\.js failed to load \(SyntaxError\)\. Repair: npx cohent init --upgrade/;
    expect(await codexHook(co, inScope(2), env)).toMatch(failedToLoad);
    const broken = await until("the new build's guard", () => guards(tmp).find((g) => g.name !== first.name));
    for (const n of [3, 4]) expect(await codexHook(co, inScope(n), env)).toMatch(failedToLoad);
    expect(guards(tmp).some((g) => g.pid === broken.pid)).toBe(true);

    // Upgraded to a working build with reasons of its own: its guard answers in its words.
    original();
    writeVariantBuild(path.join(co.root, ".cohent"), [UPGRADED]);
    expect(await codexHook(co, codex.patch(S, co.root, addPatch("docs/out.md")), env)).toMatch(
      /OUTSIDE YOUR DECLARED SCOPE/,
    );
    await until("the third build's guard", () =>
      guards(tmp).find((g) => g.name !== first.name && g.name !== broken.name),
    );
    expect(await codexHook(co, codex.patch(S, co.root, addPatch("docs/out2.md")), env)).toMatch(
      /OUTSIDE YOUR DECLARED SCOPE/,
    );
    expect(await codexHook(co, inScope(5), env)).toBe("allowed");
  });
});

/** OpenCode's plugin loaded by node as OpenCode loads it; between steps the test changes the checkout (gate files). */
const HOST = `
const [pluginUrl, stepsJson] = process.argv.slice(1);
const steps = JSON.parse(stepsJson);
const fs = await import("node:fs");
const m = await import(pluginUrl);
const hooks = await Object.values(m)[0]({ directory: process.env.OC_DIR, worktree: process.env.OC_DIR });
for (let i = 0; i < steps.length; i++) {
  fs.writeFileSync(process.env.OC_GATES + "/at-" + i, "");
  while (!fs.existsSync(process.env.OC_GATES + "/go-" + i)) await new Promise((r) => setTimeout(r, 20));
  try {
    await hooks[steps[i].hook](...steps[i].args);
    console.log(JSON.stringify("allowed"));
  } catch (e) {
    console.log(JSON.stringify("refused: " + e.message));
  }
}
process.exit(0);
`;

async function drivePlugin(
  co: Checkout,
  steps: object[],
  between: (i: number) => void,
  env: Record<string, string>,
) {
  const gates = mkdtempSync(path.join(os.tmpdir(), "cohent-build-gates-"));
  folders.push(gates);
  const child = spawn(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      HOST,
      `file://${path.join(co.root, OPENCODE_PLUGIN_FILE)}`,
      JSON.stringify(steps),
    ],
    {
      cwd: co.root,
      env: { PATH: process.env.PATH, HOME: co.home, OC_DIR: co.root, OC_GATES: gates, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c) => (stdout += c));
  child.stderr.on("data", (c) => (stderr += c));
  const exited = new Promise<number | null>((r) => child.on("close", r));
  for (let i = 0; i < steps.length; i++) {
    await until(
      `plugin step ${i}`,
      () => readdirSync(gates).includes(`at-${i}`) || child.exitCode !== null,
      60_000,
    );
    between(i);
    writeFileSync(path.join(gates, `go-${i}`), "");
  }
  expect(await exited, stderr).toBe(0);
  return stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as string);
}

describe("OpenCode's plugin runs the build the checkout holds", () => {
  it("upgraded to a build whose adapter fails to load: refused naming it and the repair; upgraded again: its reasons", async () => {
    const co = await makeCheckout(fx.backend.url, REPO);
    folders.push(path.dirname(co.root));
    mkdirSync(path.join(co.root, path.dirname(OPENCODE_PLUGIN_FILE)), { recursive: true });
    writeFileSync(path.join(co.root, OPENCODE_PLUGIN_FILE), OPENCODE_PLUGIN);
    const S = "ses_build";
    const env = { COHENT_AGENT_TOKEN: fx.tokens[0]! };
    const write = (rel: string) => ({
      hook: "tool.execute.before",
      args: [
        { tool: "write", sessionID: S, callID: `call_${rel}` },
        { args: { filePath: path.join(co.root, rel), content: "x" } },
      ],
    });
    const original = keep(co);
    const out = await drivePlugin(
      co,
      [write("src/a.ts"), write("src/b.ts"), write("src/c.ts")],
      (i) => {
        if (i === 1) writeVariantBuild(path.join(co.root, ".cohent"), [WHOLE_BROKEN]);
        if (i === 2) original();
        if (i === 2) writeVariantBuild(path.join(co.root, ".cohent"), [NO_INTENT_UPGRADED]);
      },
      env,
    );
    // The build it started with decides: no intent yet.
    expect(out[0]).toMatch(/^refused: Cohent: no prompt or intent/);
    // Its whole adapter failing to load: refused, naming the file and the repair.
    expect(out[1]).toMatch(
      /^refused: Cohent: \.cohent\/cohent-core\.js failed to load \(SyntaxError\)\. Repair: npx cohent init --upgrade/,
    );
    // Upgraded again: the new build's own words.
    expect(out[2]).toMatch(/^refused: Cohent: NO PROMPT OR INTENT/);
  });
});
