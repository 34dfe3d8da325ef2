import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync, existsSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FAIL_CLOSED_REASON } from "../../adapter/src/guard/guard.js";
import {
  OPENCODE_IN_PROCESS_MARK,
  OPENCODE_PLUGIN,
  OPENCODE_PLUGIN_FILE,
} from "../../adapter/src/installer/opencode-plugin.js";
import { backendForFile } from "../helpers/backend.js";
import { intentJson, makeCheckout, run, type Checkout } from "./helpers.js";

/**
 * OpenCode's plugin as init writes it, run under node the way OpenCode runs
 * it (its one factory, called once; every hook in that one process), in
 * front of the real adapter built as shipped and a real backend: the
 * adapter runs in the plugin's process (issue 44). A throw from
 * tool.execute.before is OpenCode's refusal: every answer but an explicit
 * allow, and every failure of the adapter, must throw.
 */

const REPO = "acme/shop";
const fx = backendForFile(REPO, "Ship the feature", ["alice", "OpenCode"]);

/** One step of a driven plugin: a hook and its arguments, or a file action between hooks. */
type Step =
  { hook: string; args: unknown[] } | { many: { hook: string; args: unknown[] }[] } | { sleep: number };

/**
 * The host: node loads the plugin, calls its factory once, runs the steps in order and prints
 * each step's outcome as a JSON line ("allowed" / "refused: R" / "ok", with the output object
 * after the call). Between steps it waits for a file "go-<i>" when told to, so that the test can
 * change the checkout while the same plugin instance lives on.
 */
const HOST = `
const [pluginUrl, stepsJson] = process.argv.slice(1);
const steps = JSON.parse(stepsJson);
const fs = await import("node:fs");
const m = await import(pluginUrl);
const hooks = await Object.values(m)[0]({ directory: process.env.OC_DIR, worktree: process.env.OC_DIR });
const one = async (s) => {
  const t0 = performance.now();
  try {
    await hooks[s.hook](...s.args);
    return { r: "allowed", out: s.args[1], ms: performance.now() - t0 };
  } catch (e) {
    return { r: "refused: " + e.message, ms: performance.now() - t0 };
  }
};
for (let i = 0; i < steps.length; i++) {
  const s = steps[i];
  const gate = process.env.OC_GATES + "/go-" + i;
  if (process.env.OC_GATES) {
    fs.writeFileSync(process.env.OC_GATES + "/at-" + i, "");
    while (!fs.existsSync(gate)) await new Promise((r) => setTimeout(r, 20));
  }
  if (s.sleep) await new Promise((r) => setTimeout(r, s.sleep));
  else if (s.many) console.log(JSON.stringify(await Promise.all(s.many.map(one))));
  else console.log(JSON.stringify(await one(s)));
}
// As \`opencode run\` does at its end: whatever the adapter still waits for (a request a deadline gave up on) ends here.
process.exit(0);
`;

interface Driven {
  lines: any[];
  stderr: string;
  code: number | null;
}

/** A `node` first on PATH that logs each start, then runs the real one: counts the processes the plugin spawns. */
function nodeSpy(co: Checkout): { dir: string; starts: () => string[] } {
  const dir = path.join(co.root, "..", "spy-bin");
  const log = path.join(co.root, "..", "node-starts.log");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, "node"),
    `#!/bin/sh\necho "$*" >> ${JSON.stringify(log)}\nexec ${JSON.stringify(process.execPath)} "$@"\n`,
  );
  chmodSync(path.join(dir, "node"), 0o755);
  return {
    dir,
    starts: () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : []),
  };
}

/** Runs the plugin's host with the steps; `between(i)` runs before step i when given (the host waits for it). */
async function drive(
  co: Checkout,
  steps: Step[],
  o: { env?: Record<string, string>; between?: (i: number) => void | Promise<void>; pathDir?: string } = {},
): Promise<Driven> {
  const gates = o.between ? path.join(co.root, "..", `gates-${Date.now()}`) : "";
  if (gates) mkdirSync(gates);
  const env: Record<string, string> = {
    PATH: `${o.pathDir ? o.pathDir + ":" : ""}${process.env.PATH}`,
    HOME: co.home,
    OC_DIR: co.root,
    ...(gates ? { OC_GATES: gates } : {}),
    ...o.env,
  };
  const child = spawn(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      HOST,
      `file://${path.join(co.root, OPENCODE_PLUGIN_FILE)}`,
      JSON.stringify(steps),
    ],
    { cwd: co.root, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c) => (stdout += c));
  child.stderr.on("data", (c) => (stderr += c));
  const exited = new Promise<number | null>((r) => child.on("close", r));
  if (gates) {
    for (let i = 0; i < steps.length; i++) {
      while (!existsSync(path.join(gates, `at-${i}`)) && child.exitCode === null)
        await new Promise((r) => setTimeout(r, 20));
      await o.between!(i);
      writeFileSync(path.join(gates, `go-${i}`), "");
    }
  }
  const code = await exited;
  return {
    lines: stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l)),
    stderr,
    code,
  };
}

async function checkout(): Promise<Checkout> {
  const co = await makeCheckout(fx.backend.url, REPO);
  mkdirSync(path.join(co.root, path.dirname(OPENCODE_PLUGIN_FILE)), { recursive: true });
  writeFileSync(path.join(co.root, OPENCODE_PLUGIN_FILE), OPENCODE_PLUGIN);
  mkdirSync(path.join(co.root, "src", "feature"), { recursive: true });
  return co;
}

const S = "ses_oc1";
const write = (co: Checkout, rel: string, session = S) => ({
  hook: "tool.execute.before",
  args: [
    { tool: "write", sessionID: session, callID: `call_${rel}` },
    { args: { filePath: path.join(co.root, rel), content: "x" } },
  ],
});
const bash = (command: string, session = S) => ({
  hook: "tool.execute.before",
  args: [{ tool: "bash", sessionID: session, callID: "call_sh" }, { args: { command, description: "run" } }],
});
const read = (co: Checkout, rel: string) => ({
  hook: "tool.execute.before",
  args: [{ tool: "read", sessionID: S, callID: "call_r" }, { args: { filePath: path.join(co.root, rel) } }],
});
const prompt = (text: string, session = S) => ({
  hook: "chat.message",
  args: [{ sessionID: session }, { message: { id: "m1" }, parts: [{ type: "text", text }] }],
});
const created = (session = S) => ({
  hook: "event",
  args: [{ event: { type: "session.created", properties: { info: { id: session, version: "1.18.33" } } } }],
});

/** The agent's intent and scope, through its own shell as OpenCode runs it: the plugin guards, the CLI performs. */
async function declare(co: Checkout, env: Record<string, string>): Promise<void> {
  const intent = ["intent", intentJson({ objective: "Add the feature", outputs: ["feature"] })];
  const r1 = await run(co, intent, { env });
  expect(r1.code, r1.stderr).toBe(0);
  const r2 = await run(co, ["scope", "src/feature"], { env });
  expect(r2.code, r2.stderr).toBe(0);
}

/** A cohent.cjs that serves the plugin (its head says so) and answers by `body`, logging nothing. */
const standin = (body: string) => `// ${OPENCODE_IN_PROCESS_MARK}: a stand-in\nexports.hook = ${body};\n`;

describe("OpenCode's plugin runs the adapter in its own process", () => {
  it("the built cohent.cjs says it serves the plugin, with the plugin's own mark", async () => {
    const co = await checkout();
    expect(readFileSync(path.join(co.root, ".cohent", "cohent.cjs"), "latin1").slice(0, 4096)).toContain(
      OPENCODE_IN_PROCESS_MARK,
    );
  });

  it("deny and allow through the real adapter, with no node process per call", async () => {
    const co = await checkout();
    const env = { COHENT_AGENT_TOKEN: fx.tokens[0]! };
    const spy = nodeSpy(co);
    const steps: Step[] = [
      created(),
      prompt("Add the feature module"),
      write(co, "src/feature/early.ts"),
      read(co, "README.md"),
      bash("node .cohent/cohent.mjs intent '{}'"),
      { sleep: 0 },
      write(co, "src/feature/a.ts"),
      write(co, "docs/out.md"),
      bash("echo x > docs/shell.txt"),
      {
        hook: "tool.execute.after",
        args: [
          { tool: "write", sessionID: S, callID: "c", args: {} },
          { title: "", output: "Wrote file successfully.", metadata: {} },
        ],
      },
    ];
    const d = await drive(co, steps, {
      env,
      pathDir: spy.dir,
      between: async (i) => {
        if (i === 5) await declare(co, env);
      },
    });
    expect(d.code, d.stderr).toBe(0);
    const [, , early, readIt, exempt, , inScope, outside, shellOut] = d.lines;
    expect(early.r).toMatch(/^refused: Cohent: .*no (structured intent|prompt or intent)/);
    expect(readIt.r).toBe("allowed");
    expect(exempt.r).toBe("allowed");
    expect(inScope.r).toBe("allowed");
    expect(outside.r).toMatch(/^refused: Cohent: .*docs\/out\.md/);
    expect(shellOut.r).toMatch(/^refused: Cohent: .*docs\/shell\.txt/);
    // The plugin itself started no node: the only starts are the test's own CLI commands (`intent`, `scope`), run by the test.
    expect(spy.starts()).toEqual([]);
    // The backend holds the prompt under OpenCode's name, and the session is guarded (a guarded call reached it).
    const raw = await fx.backend.deps.db.prisma.$transaction((tx) =>
      tx.session.findFirst({ where: { key: S }, include: { intents: true } }),
    );
    expect(raw!.intents.map((i) => [i.client, i.prompt])).toEqual([["OpenCode", "Add the feature module"]]);
    expect(raw).toMatchObject({ host: "opencode", hostVersion: "1.18.33", wiring: "fail-closed" });
    expect(raw!.guardSeenAt).not.toBeNull();
  });

  it("the stop (session.idle) still goes to a node process that outlives the host: one start, for it alone", async () => {
    const co = await checkout();
    const spy = nodeSpy(co);
    const d = await drive(
      co,
      [
        prompt("go", "ses_stop"),
        { hook: "event", args: [{ event: { type: "session.idle", properties: { sessionID: "ses_stop" } } }] },
      ],
      { env: { COHENT_AGENT_TOKEN: fx.tokens[0]! }, pathDir: spy.dir },
    );
    expect(d.code, d.stderr).toBe(0);
    for (let i = 0; i < 100 && spy.starts().length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(spy.starts()).toEqual([".cohent/cohent.cjs hook --host opencode"]);
  });

  it("concurrent calls of two sessions in one process are each answered for their own session", async () => {
    const co = await checkout();
    const env = { COHENT_AGENT_TOKEN: fx.tokens[0]! };
    const d = await drive(
      co,
      [
        prompt("Add the feature module"),
        { sleep: 0 },
        {
          many: [
            ...Array.from({ length: 6 }, (_, i) => write(co, `src/feature/f${i}.ts`)),
            ...Array.from({ length: 6 }, (_, i) => write(co, `src/feature/g${i}.ts`, "ses_other")),
            read(co, "README.md"),
          ],
        },
      ],
      {
        env,
        between: async (i) => {
          if (i === 1) await declare(co, env);
        },
      },
    );
    expect(d.code, d.stderr).toBe(0);
    const many = d.lines[2] as { r: string }[];
    expect(many.slice(0, 6).map((x) => x.r)).toEqual(Array(6).fill("allowed"));
    // ses_other published nothing: refused, each for that reason.
    for (const x of many.slice(6, 12))
      expect(x.r).toMatch(/^refused: Cohent: .*no (structured intent|prompt)/);
    expect(many[12]!.r).toBe("allowed");
  });

  it("the adapter missing, not one that serves the plugin, or throwing at load: refused; repaired, it runs again", async () => {
    const co = await checkout();
    const adapter = path.join(co.root, ".cohent", "cohent.cjs");
    const saved = `${adapter}.saved`;
    const ran = path.join(co.root, "..", "old-adapter-ran");
    const steps = [read(co, "a"), read(co, "b"), read(co, "c"), read(co, "d"), read(co, "e"), read(co, "f")];
    const d = await drive(co, steps, {
      env: { COHENT_AGENT_TOKEN: fx.tokens[0]! },
      between: (i) => {
        if (i === 1) renameSync(adapter, saved);
        // An older or foreign cohent.cjs is never required: it would run its CLI in OpenCode's process.
        if (i === 2) writeFileSync(adapter, `require("fs").writeFileSync(${JSON.stringify(ran)}, "");\n`);
        if (i === 3)
          writeFileSync(
            adapter,
            `// ${OPENCODE_IN_PROCESS_MARK}\nthrow new Error("broken at " + __filename);\n`,
          );
        if (i === 4)
          writeFileSync(adapter, standin(`() => { throw new Error("per call at " + __filename); }`));
        if (i === 5) renameSync(saved, adapter);
      },
    });
    expect(d.code, d.stderr).toBe(0);
    expect(d.lines.map((l) => l.r)).toEqual([
      "allowed",
      `refused: ${FAIL_CLOSED_REASON}`,
      `refused: ${FAIL_CLOSED_REASON}`,
      `refused: ${FAIL_CLOSED_REASON}`,
      `refused: ${FAIL_CLOSED_REASON}`,
      "allowed",
    ]);
    expect(existsSync(ran)).toBe(false);
  });

  it("cohent-core.js missing or from another build: refused with the loader's reason, as the spawned hook says it", async () => {
    const co = await checkout();
    const core = path.join(co.root, ".cohent", "cohent-core.js");
    const d = await drive(co, [read(co, "a"), read(co, "b"), read(co, "c")], {
      env: { COHENT_AGENT_TOKEN: fx.tokens[0]! },
      between: (i) => {
        if (i === 1) renameSync(core, `${core}.saved`);
        if (i === 2) {
          renameSync(`${core}.saved`, core);
          writeFileSync(core, readFileSync(core, "latin1") + "\n", "latin1");
        }
      },
    });
    expect(d.code, d.stderr).toBe(0);
    expect(d.lines.map((l) => l.r)).toEqual([
      "allowed",
      expect.stringMatching(/^refused: Cohent: \.cohent\/cohent-core\.js is missing: .*init --upgrade/),
      expect.stringMatching(/^refused: Cohent: \.cohent\/cohent-core\.js is not from the same build/),
    ]);
  });

  it("an internal failure of the adapter on a call: refused with the adapter's reason", async () => {
    const co = await checkout();
    // runtime.json a folder: the session cannot be read, so the guard cannot decide.
    mkdirSync(path.join(co.root, ".cohent", "runtime.json", "x"), { recursive: true });
    const d = await drive(co, [write(co, "src/feature/a.ts")], {
      env: { COHENT_AGENT_TOKEN: fx.tokens[0]! },
    });
    expect(d.code, d.stderr).toBe(0);
    expect(d.lines[0].r).toMatch(/^refused: Cohent: /);
    expect(d.lines[0].r).not.toContain(co.root);
  });

  it("the service never answers: the adapter's own deadline refuses, a second before the plugin's", async () => {
    const sockets = new Set<Socket>();
    const hole = createServer((s) => {
      sockets.add(s);
      s.on("error", () => {});
    });
    await new Promise<void>((r) => hole.listen(0, "127.0.0.1", r));
    try {
      const co = await makeCheckout(`http://127.0.0.1:${(hole.address() as { port: number }).port}`, REPO);
      mkdirSync(path.join(co.root, path.dirname(OPENCODE_PLUGIN_FILE)), { recursive: true });
      writeFileSync(path.join(co.root, OPENCODE_PLUGIN_FILE), OPENCODE_PLUGIN);
      const d = await drive(co, [write(co, "src/a.ts")], {
        env: { COHENT_AGENT_TOKEN: "coh_x", COHENT_TIMEOUT_MS: "60000", COHENT_PLUGIN_TIMEOUT_MS: "3000" },
      });
      expect(d.code, d.stderr).toBe(0);
      expect(d.lines[0].r).toMatch(/^refused: Cohent: .*did not reach a verdict within 2 s/);
      expect(d.lines[0].ms).toBeGreaterThan(1900);
      // Before the plugin's own 3 s: the refusal above is the adapter's (the plugin's reads "did not
      // answer within"); that order needs no upper bound on the clock.
    } finally {
      for (const s of sockets) s.destroy();
      hole.close();
    }
  });

  it("an adapter that never answers: refused at the plugin's own deadline; the other hooks never throw", async () => {
    const co = await checkout();
    writeFileSync(path.join(co.root, ".cohent", "cohent.cjs"), standin(`() => new Promise(() => {})`));
    const after = {
      hook: "tool.execute.after",
      args: [
        { tool: "bash", sessionID: S, callID: "c", args: {} },
        { title: "", output: "", metadata: {} },
      ],
    };
    const d = await drive(
      co,
      [write(co, "src/a.ts"), prompt("go"), after, created(), { hook: "chat.message", args: [] }],
      {
        env: { COHENT_PLUGIN_TIMEOUT_MS: "1000" },
      },
    );
    expect(d.code, d.stderr).toBe(0);
    expect(d.lines[0].r).toMatch(
      /^refused: Cohent: the guard hook did not answer within 25 s, so this tool call is refused/,
    );
    expect(d.lines[0].ms).toBeGreaterThan(950);
    expect(d.lines.slice(1).map((l) => l.r)).toEqual(["allowed", "allowed", "allowed", "allowed"]);
  });

  it.each([
    ["junk", `async () => ({ stdout: "ok, go ahead", exitCode: 0 })`],
    ["two answers", `async () => ({ stdout: '{"decision":"allow"}{"decision":"allow"}', exitCode: 0 })`],
    ["allow with a non-zero exit", `async () => ({ stdout: '{"decision":"allow"}', exitCode: 1 })`],
    ["ask", `async () => ({ stdout: '{"decision":"ask"}', exitCode: 0 })`],
    ["a bare deny", `async () => ({ stdout: '{"decision":"deny"}', exitCode: 0 })`],
    ["a rejection", `async () => { throw new Error("at " + __filename); }`],
    ["nothing", `() => undefined`],
  ])("the adapter answers %s: refused with the one line, no path", async (_name, body) => {
    const co = await checkout();
    writeFileSync(path.join(co.root, ".cohent", "cohent.cjs"), standin(body));
    const d = await drive(co, [write(co, "src/a.ts")]);
    expect(d.code, d.stderr).toBe(0);
    expect(d.lines[0].r).toBe(`refused: ${FAIL_CLOSED_REASON}`);
  });

  it("the plugin text loads with node: builtins only and defines nothing at the top that can throw", () => {
    expect([...OPENCODE_PLUGIN.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1])).toEqual([
      "node:child_process",
      "node:fs",
      "node:module",
      "node:path",
      "node:url",
    ]);
  });
});
