import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { FAIL_CLOSED_REASON } from "../../adapter/src/guard/guard.js";
import { OPENCODE_PLUGIN, OPENCODE_PLUGIN_FILE } from "../../adapter/src/installer/opencode-plugin.js";
import { pathWithoutNode } from "../clients/failures.js";

/**
 * OpenCode's plugin as init writes it, imported the way OpenCode imports a
 * project plugin (its one exported factory, called with OpenCode's context),
 * in front of a fake adapter at .cohent/cohent.cjs that answers what each
 * case asks and logs the stdin it was given. A throw from
 * tool.execute.before is OpenCode's refusal (measured): every answer but an
 * explicit allow must throw, every other hook must never throw.
 */

/** The fake adapter: behaves by .cohent/mode, appends each stdin to .cohent/stdin.log. */
const FAKE = `const fs = require("fs");
const path = require("path");
const here = __dirname;
let raw = "";
process.stdin.on("data", (c) => (raw += c));
process.stdin.on("end", () => {
  if (fs.existsSync(path.join(here, "slow"))) {
    const until = Date.now() + 1000;
    while (Date.now() < until) {}
  }
  fs.appendFileSync(path.join(here, "stdin.log"), JSON.stringify({ argv: process.argv.slice(2), cwd: process.cwd(), raw }) + "\\n");
  const mode = fs.readFileSync(path.join(here, "mode"), "utf8").trim();
  const say = (o) => process.stdout.write(typeof o === "string" ? o : JSON.stringify(o));
  if (mode === "allow") say({ decision: "allow" });
  else if (mode === "allow-context") say({ decision: "allow", context: "CTX-PEERS" });
  else if (mode === "deny") say({ decision: "deny", reason: "Cohent: R-DENY" });
  else if (mode === "deny-bare") say({ decision: "deny" });
  else if (mode === "ask") say({ decision: "ask", reason: "maybe" });
  else if (mode === "throws") throw new Error("broken bundle at " + __filename);
  else if (mode === "exit1-allow") { say({ decision: "allow" }); process.exitCode = 1; }
  else if (mode === "junk") say("not json at all");
  else if (mode === "two") say('{"decision":"allow"}{"decision":"allow"}');
  else if (mode === "empty") {}
  else if (mode === "null") say("null");
  else if (mode === "hangs") {
    fs.writeFileSync(path.join(here, "hung.pid"), String(process.pid));
    setInterval(() => {}, 1000);
    setTimeout(() => process.exit(0), 10000); // a detached one is nobody's to kill in a test
  }
});
`;

interface Plugin {
  root: string;
  hooks: Record<string, (...a: any[]) => Promise<void>>;
  mode(m: string): void;
  calls(): { argv: string[]; cwd: string; stdin: any }[];
}

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function plugin(ctx: Record<string, unknown> | null = {}): Promise<Plugin> {
  const base = mkdtempSync(path.join(os.tmpdir(), "cohent-ocplugin-"));
  made.push(base);
  const root = path.join(base, "repo");
  mkdirSync(path.join(root, ".cohent"), { recursive: true });
  mkdirSync(path.join(root, path.dirname(OPENCODE_PLUGIN_FILE)), { recursive: true });
  writeFileSync(path.join(root, OPENCODE_PLUGIN_FILE), OPENCODE_PLUGIN);
  writeFileSync(path.join(root, ".cohent", "cohent.cjs"), FAKE);
  writeFileSync(path.join(root, ".cohent", "mode"), "allow");
  const mod = await import(pathToFileURL(path.join(root, OPENCODE_PLUGIN_FILE)).href);
  const factories = Object.values(mod).filter((v) => typeof v === "function") as ((c: unknown) => any)[];
  // OpenCode calls every exported function as a plugin: exactly one.
  expect(factories).toHaveLength(1);
  const hooks = await factories[0]!(
    ctx === null ? undefined : { directory: path.join(root, "src"), worktree: root, ...ctx },
  );
  return {
    root,
    hooks,
    mode: (m) => writeFileSync(path.join(root, ".cohent", "mode"), m),
    calls: () => {
      try {
        return readFileSync(path.join(root, ".cohent", "stdin.log"), "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => {
            const c = JSON.parse(l);
            return { argv: c.argv, cwd: c.cwd, stdin: JSON.parse(c.raw) };
          });
      } catch {
        return [];
      }
    },
  };
}

const before = (p: Plugin) =>
  p.hooks["tool.execute.before"]!(
    { tool: "write", sessionID: "ses_1", callID: "call_1" },
    { args: { filePath: path.join(p.root, "src/a.ts"), content: "x" } },
  ).then(
    () => "allowed",
    (e: Error) => `refused: ${e.message}`,
  );

describe("the OpenCode plugin", () => {
  it("runs the adapter with the contract's stdin, in the checkout, and lets an explicit allow through", async () => {
    const p = await plugin();
    expect(await before(p)).toBe("allowed");
    const [call] = p.calls();
    expect(call!.argv).toEqual(["hook", "--host", "opencode"]);
    expect(call!.cwd).toBe(p.root);
    expect(call!.stdin).toEqual({
      event: "tool.execute.before",
      input: { tool: "write", sessionID: "ses_1", callID: "call_1" },
      output: { args: { filePath: path.join(p.root, "src/a.ts"), content: "x" } },
      directory: path.join(p.root, "src"),
    });
  });

  it.each([
    ["deny", "Cohent: R-DENY"],
    ["deny-bare", FAIL_CLOSED_REASON],
    ["ask", FAIL_CLOSED_REASON],
    ["throws", FAIL_CLOSED_REASON],
    ["exit1-allow", FAIL_CLOSED_REASON],
    ["junk", FAIL_CLOSED_REASON],
    ["two", FAIL_CLOSED_REASON],
    ["empty", FAIL_CLOSED_REASON],
    ["null", FAIL_CLOSED_REASON],
  ])(
    "adapter answers %s: tool.execute.before throws, the model reads one line without a path",
    async (mode, reason) => {
      const p = await plugin();
      p.mode(mode);
      const got = await before(p);
      expect(got).toBe(`refused: ${reason}`);
      expect(got).not.toContain(p.root);
    },
  );

  it("the adapter missing, or node not on PATH: refused", async () => {
    const p = await plugin();
    rmSync(path.join(p.root, ".cohent", "cohent.cjs"));
    expect(await before(p)).toBe(`refused: ${FAIL_CLOSED_REASON}`);
    writeFileSync(path.join(p.root, ".cohent", "cohent.cjs"), FAKE);
    const saved = process.env.PATH;
    process.env.PATH = pathWithoutNode(path.join(p.root, "..", "no-node-bin"));
    try {
      expect(await before(p)).toBe(`refused: ${FAIL_CLOSED_REASON}`);
    } finally {
      process.env.PATH = saved;
    }
    expect(await before(p)).toBe("allowed");
  });

  it("a hanging adapter: refused at the plugin's own deadline, and the adapter is killed", async () => {
    const p = await plugin();
    p.mode("hangs");
    process.env.COHENT_PLUGIN_TIMEOUT_MS = "1500";
    try {
      const t0 = Date.now();
      const got = await before(p);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(1400);
      expect(Date.now() - t0).toBeLessThan(10_000);
      expect(got).toMatch(
        /^refused: Cohent: the guard hook did not answer within 25 s, so this tool call is refused/,
      );
      const pid = Number(readFileSync(path.join(p.root, ".cohent", "hung.pid"), "utf8"));
      await new Promise((r) => setTimeout(r, 200));
      expect(() => process.kill(pid, 0)).toThrow();
    } finally {
      delete process.env.COHENT_PLUGIN_TIMEOUT_MS;
    }
  });

  it("the other hooks forward the contract's stdin and never throw, whatever the adapter does", async () => {
    const p = await plugin();
    for (const mode of ["deny", "throws", "junk", "hangs"]) {
      p.mode(mode);
      process.env.COHENT_PLUGIN_TIMEOUT_MS = "800";
      try {
        await expect(
          p.hooks["chat.message"]!({ sessionID: "ses_1" }, { message: { id: "m" }, parts: [] }),
        ).resolves.toBeUndefined();
        await expect(
          p.hooks["tool.execute.after"]!(
            { tool: "bash", sessionID: "ses_1", callID: "c", args: {} },
            { title: "", output: "", metadata: {} },
          ),
        ).resolves.toBeUndefined();
        await expect(
          p.hooks.event!({ event: { type: "session.idle", properties: { sessionID: "ses_1" } } }),
        ).resolves.toBeUndefined();
        // Nothing OpenCode could pass makes them throw: no argument, an event without properties.
        await expect(p.hooks.event!(undefined)).resolves.toBeUndefined();
        await expect(p.hooks["chat.message"]!(undefined, undefined)).resolves.toBeUndefined();
      } finally {
        delete process.env.COHENT_PLUGIN_TIMEOUT_MS;
      }
    }
    p.mode("allow");
    rmSync(path.join(p.root, ".cohent", "stdin.log"));
    await p.hooks.event!({
      event: { type: "session.created", properties: { sessionID: "s2", info: { id: "s2" } } },
    });
    await p.hooks.event!({ event: { type: "message.updated", properties: { sessionID: "s2" } } });
    await p.hooks.event!({ event: { type: "session.deleted", properties: { sessionID: "s2" } } });
    // session.deleted goes to an adapter nobody waits for: its line comes in a moment.
    for (let i = 0; i < 100 && p.calls().length < 2; i++) await new Promise((r) => setTimeout(r, 50));
    expect(p.calls().map((c) => c.stdin)).toEqual([
      {
        event: "session.created",
        input: {},
        output: { sessionID: "s2", info: { id: "s2" } },
        directory: path.join(p.root, "src"),
      },
      {
        event: "session.deleted",
        input: {},
        output: { sessionID: "s2" },
        directory: path.join(p.root, "src"),
      },
    ]);
  });

  it("the stop (session.idle) reaches an adapter that outlives OpenCode, which exits right after it", async () => {
    const p = await plugin();
    writeFileSync(path.join(p.root, ".cohent", "slow"), "");
    // A host that fires session.idle and exits at once, as `opencode run` does (measured: the stop was lost).
    const host = `const m = await import(${JSON.stringify(pathToFileURL(path.join(p.root, OPENCODE_PLUGIN_FILE)).href)});
const hooks = await Object.values(m)[0]({ directory: ${JSON.stringify(p.root)}, worktree: ${JSON.stringify(p.root)} });
const t0 = Date.now();
await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_9" } } });
console.log(Date.now() - t0);
process.exit(0);`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", host], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    expect(Number(r.stdout.trim())).toBeLessThan(500); // the host never waits for it
    expect(p.calls()).toEqual([]); // the host is gone, the adapter still at work
    for (let i = 0; i < 100 && p.calls().length < 1; i++) await new Promise((r) => setTimeout(r, 50));
    expect(p.calls().map((c) => c.stdin)).toEqual([
      { event: "session.idle", input: {}, output: { sessionID: "ses_9" }, directory: p.root },
    ]);
  });

  it("the prompt's context reaches the system prompt of that session's model calls, and no other's", async () => {
    const p = await plugin();
    p.mode("allow-context");
    await p.hooks["chat.message"]!(
      { sessionID: "ses_1" },
      { message: {}, parts: [{ type: "text", text: "go" }] },
    );
    const mine = { system: ["base"] };
    const other = { system: ["base"] };
    await p.hooks["experimental.chat.system.transform"]!({ sessionID: "ses_1" }, mine);
    await p.hooks["experimental.chat.system.transform"]!({ sessionID: "ses_2" }, other);
    expect(mine.system).toEqual(["base", "CTX-PEERS"]);
    expect(other.system).toEqual(["base"]);
    expect(p.calls()[0]!.stdin.event).toBe("chat.message");
  });

  it("a tool call's context (peers' changes after the call) is appended to the tool's result the model reads", async () => {
    const p = await plugin();
    p.mode("allow-context");
    const output = { title: "src/a.ts", output: "Wrote file successfully.", metadata: {} };
    await p.hooks["tool.execute.after"]!(
      { tool: "write", sessionID: "ses_1", callID: "c", args: {} },
      output,
    );
    expect(output.output).toBe("Wrote file successfully.\n\nCTX-PEERS");
    p.mode("allow");
    const plain = { title: "", output: "ok", metadata: {} };
    await p.hooks["tool.execute.after"]!({ tool: "bash", sessionID: "ses_1", callID: "d", args: {} }, plain);
    expect(plain.output).toBe("ok");
  });

  it("loads with any context OpenCode might pass, none included", async () => {
    for (const ctx of [null, { directory: undefined, worktree: undefined }, { directory: 42 }]) {
      const p = await plugin(ctx);
      expect(await before(p)).toBe("allowed");
    }
  });
});
