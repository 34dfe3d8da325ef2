import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { Script } from "node:vm";
import { describe, expect, it } from "vitest";
import {
  codeCacheFile,
  readCodeCache,
  STALE_MS,
  writeCodeCache,
} from "../../adapter/src/loader/code-cache.js";
import { previewHook } from "../../adapter/src/loader/fast-path.js";

const needsNoDecision = (stdin: string) => previewHook(stdin).needsNoDecision;
import { REGENERATE, VERSION } from "../../adapter/build.mjs";
import { ADAPTER_FILES } from "../../adapter/src/installer/init.js";
import { builtAdapter, makeCheckout, run, type Checkout } from "./helpers.js";

/**
 * cohent.cjs compiles its bundle through vm.Script with a V8 code cache in
 * the user's cache folder. V8 in Node 20 aborts the process on a damaged
 * cache (a hook that aborts fails open), so every kind of bad cache here
 * must be ignored, and the command must answer as without one.
 */

/** The adapter beside an entry: cohent.cjs, which names the hash of its bundle (cohent-core.js). */
const adapterOf = (script: string) => script.replace(/\.mjs$/, ".cjs");
const hashOf = (script: string) =>
  /bundle sha256:([0-9a-f]{64})/.exec(readFileSync(adapterOf(script), "utf8").slice(0, 600))![1]!;

function cacheOf(co: Checkout): string {
  return path.join(
    co.home,
    ".cache",
    "cohent",
    "code-cache",
    `${hashOf(co.script).slice(0, 32)}-cli-${process.versions.v8}-${process.arch}.bin`,
  );
}

const help = (co: Checkout, env: Record<string, string> = {}) => run(co, ["help"], { env });

describe("the bundle's header", () => {
  it("every file names its version and the command that regenerates it", async () => {
    const bundle = await builtAdapter();
    const pkg = JSON.parse(
      readFileSync(path.join(import.meta.dirname, "../../adapter/package.json"), "utf8"),
    );
    expect(VERSION).toBe(pkg.version);
    for (const name of ADAPTER_FILES) {
      const file = path.join(path.dirname(bundle), name);
      const head = readFileSync(file, "utf8").split("\n").slice(0, 3).join("\n");
      expect(head).toContain(`${path.basename(file)} ${pkg.version}`);
      expect(head).toContain(`Regenerate: ${REGENERATE}`);
    }
    expect(hashOf(bundle)).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("the entry and the adapter", () => {
  it("cohent.mjs runs cohent.cjs, the CommonJS adapter the hooks run directly: the same answers", async () => {
    const co = await makeCheckout(null);
    const entry = readFileSync(co.script, "utf8");
    expect(entry.split("\n").filter((l) => l && !l.startsWith("//"))).toEqual([
      'process.getBuiltinModule("node:module").createRequire(import.meta.url)("./cohent.cjs");',
    ]);
    const viaEntry = await help(co);
    expect(viaEntry.code).toBe(0);
    const direct = await run({ ...co, script: adapterOf(co.script) }, ["help"]);
    expect(direct).toMatchObject({ code: 0, stdout: viaEntry.stdout, stderr: "" });
    // CommonJS: no ES module syntax at its top level, or Node would refuse it (or pay the ES loader).
    expect(readFileSync(adapterOf(co.script), "utf8")).not.toMatch(/^(import|export)\b/m);
  });
});

describe("the V8 code cache", () => {
  it("is written on the first run, keyed by the bundle's hash, and used as is on the next", async () => {
    const co = await makeCheckout(null);
    const first = await help(co);
    expect(first.code).toBe(0);
    const file = cacheOf(co);
    const data = readCodeCache(file, hashOf(co.script));
    expect(data?.length).toBeGreaterThan(1000);
    const before = statSync(file).mtimeMs;
    const second = await help(co);
    expect(second).toMatchObject({ code: 0, stdout: first.stdout, stderr: "" });
    expect(statSync(file).mtimeMs).toBe(before); // accepted: not rewritten
  });

  it("goes under an absolute XDG_CACHE_HOME, and nowhere with COHENT_CODE_CACHE=0", async () => {
    const co = await makeCheckout(null);
    const xdg = path.join(co.home, "xdg");
    expect((await help(co, { XDG_CACHE_HOME: xdg })).code).toBe(0);
    expect(readdirSync(path.join(xdg, "cohent", "code-cache"))).toEqual([path.basename(cacheOf(co))]);
    expect((await help(co, { COHENT_CODE_CACHE: "0" })).code).toBe(0);
    expect(existsSync(cacheOf(co))).toBe(false);
  });

  it("a damaged, truncated, foreign or garbage cache is ignored and rewritten", async () => {
    const co = await makeCheckout(null);
    const good = await help(co);
    const file = cacheOf(co);
    const valid = readFileSync(file);
    const n = (valid.length - 128) / 2;
    const flipped = Buffer.from(valid);
    for (let i = 128 + 64; i < 128 + n; i += 997) flipped[i]! ^= 0x5a; // one copy damaged: V8 alone would abort on this
    const foreignHeader = Buffer.from(valid);
    foreignHeader.write("0".repeat(64), valid.indexOf(" ") + 1, "latin1"); // another bundle's hash
    const otherScript = new Script(
      `(function(){return ${JSON.stringify("x".repeat(5000))}})`,
    ).createCachedData();
    const bad: Record<string, Buffer> = {
      flipped,
      truncated: valid.subarray(0, valid.length - 100),
      foreignHeader,
      garbage: Buffer.alloc(valid.length, 7),
      empty: Buffer.alloc(0),
    };
    const cases: [string, () => void][] = [
      ...Object.entries(bad).map(([name, content]): [string, () => void] => [
        name,
        () => writeFileSync(file, content),
      ]),
      // Well-formed, but V8 data of another script: V8 itself rejects it.
      ["otherScript", () => writeCodeCache(file, hashOf(co.script), otherScript)],
    ];
    for (const [name, spoil] of cases) {
      spoil();
      const r = await help(co);
      expect({ name, code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
        name,
        code: 0,
        stdout: good.stdout,
        stderr: "",
      });
      expect(readCodeCache(file, hashOf(co.script)), name).toBeDefined();
    }
  });

  it("the MCP file still loads through the warm cache (code from a cache has no import() of its own)", async () => {
    const co = await makeCheckout(null);
    for (let i = 0; i < 2; i++) {
      const r = await run(co, ["doctor", "--cost", "--json"]);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).ok).toBe(true);
    }
    expect(existsSync(cacheOf(co))).toBe(true);
  });

  it("reading and writing: header checked, stale caches of other bundles pruned", () => {
    const dir = path.join(
      import.meta.dirname,
      "..",
      "..",
      "node_modules",
      ".cache",
      `cohent-cc-${process.pid}`,
    );
    mkdirSync(dir, { recursive: true });
    const env = { HOME: dir, XDG_CACHE_HOME: "relative/ignored" };
    const file = codeCacheFile("a".repeat(64), "cli", env)!;
    expect(file.startsWith(path.join(dir, ".cache", "cohent", "code-cache"))).toBe(true);
    expect(codeCacheFile("a".repeat(64), "cli", { ...env, COHENT_CODE_CACHE: "off" })).toBeNull();
    mkdirSync(path.dirname(file), { recursive: true });
    const stale = path.join(path.dirname(file), "old-bundle.bin");
    const fresh = path.join(path.dirname(file), "other-checkout.bin");
    writeFileSync(stale, "x");
    writeFileSync(fresh, "x");
    const old = (Date.now() - STALE_MS - 60_000) / 1000;
    utimesSync(stale, old, old);
    const data = Buffer.from("some v8 data");
    expect(writeCodeCache(file, "a".repeat(64), data)).toBe(true);
    expect(readCodeCache(file, "a".repeat(64))).toEqual(data);
    expect(readCodeCache(file, "b".repeat(64))).toBeUndefined();
    chmodSync(file, 0o666); // others may write it: not code to run
    expect(readCodeCache(file, "a".repeat(64))).toBeUndefined();
    chmodSync(file, 0o600);
    expect(codeCacheFile("a".repeat(64), "cli", { XDG_CACHE_HOME: "relative" })).toBeNull(); // no HOME: never relative to the checkout
    expect(path.basename(codeCacheFile("a".repeat(64), "../../x", env)!)).toMatch(/^a{32}-other-/); // a path is never a path
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(fresh)).toBe(true);
    expect(readdirSync(path.dirname(file)).some((f) => f.endsWith(".tmp"))).toBe(false);
  });
});

describe("a code cache per code path", () => {
  const call = (event: string, tool?: string) =>
    JSON.stringify({
      session_id: "s1",
      cwd: "/tmp",
      hook_event_name: event,
      tool_name: tool,
      tool_input: {},
    });

  it.each<[string, string]>([
    [call("PreToolUse", "apply_patch"), "hook-PreToolUse-edit"],
    [call("PreToolUse", "Write"), "hook-PreToolUse-edit"],
    [call("PreToolUse", "Bash"), "hook-PreToolUse-shell"],
    [call("PreToolUse", "Agent"), "hook-PreToolUse-other"],
    [call("PostToolUse", "Edit"), "hook-PostToolUse-edit"],
    [call("UserPromptSubmit"), "hook-UserPromptSubmit"],
    [call("Stop"), "hook-Stop"],
    [call("../../etc"), "hook-other"],
    ["{not json", "hook-other"],
    ["null", "hook-other"],
  ])("%s → %s", (stdin, want) => {
    expect(previewHook(stdin).path).toBe(want);
  });

  it("an edit's decision writes and then reads its own cache, which a prompt's run leaves alone", async () => {
    const co = await makeCheckout("http://127.0.0.1:9");
    const dir = path.dirname(cacheOf(co));
    // One bundle, one hash; a cache per code path (an edit, a prompt).
    const fileOf = (p: string) => path.basename(cacheOf(co)).replace("-cli-", `-${p}-`);
    const edit = call("PreToolUse", "apply_patch");
    expect((await run(co, ["hook"], { stdin: edit })).code).toBe(0);
    expect(readdirSync(dir)).toEqual([fileOf("hook-PreToolUse-edit")]);
    const written = statSync(path.join(dir, fileOf("hook-PreToolUse-edit"))).mtimeMs;
    expect((await run(co, ["hook"], { stdin: call("UserPromptSubmit") })).code).toBe(0);
    expect((await run(co, ["hook"], { stdin: edit })).code).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(
      [fileOf("hook-PreToolUse-edit"), fileOf("hook-UserPromptSubmit")].sort(),
    );
    expect(statSync(path.join(dir, fileOf("hook-PreToolUse-edit"))).mtimeMs).toBe(written); // read, not rewritten
  });
});

describe("a PreToolUse call that needs no decision", () => {
  const payload = (tool: string) =>
    JSON.stringify({
      session_id: "s1",
      cwd: "/tmp",
      hook_event_name: "PreToolUse",
      tool_name: tool,
      tool_input: { file_path: "x", command: "ls" },
    });

  it("is a tool that is neither an edit nor a shell, with the usage ledger off", () => {
    const saved = process.env.COHENT_USAGE_LOG;
    process.env.COHENT_USAGE_LOG = "0";
    try {
      expect(needsNoDecision(payload("Read"))).toBe(true);
      expect(needsNoDecision(payload("mcp__cohent__context"))).toBe(true);
      for (const tool of ["Write", "apply_patch", "Bash", "mcp__github__create_issue"])
        expect(needsNoDecision(payload(tool)), tool).toBe(false);
      // A spawn is counted by the hook, so that a main Stop waits for the sub-agent.
      for (const tool of ["Agent", "Task"]) expect(needsNoDecision(payload(tool)), tool).toBe(false);
      expect(needsNoDecision(payload("Read").replace("PreToolUse", "PostToolUse"))).toBe(false);
      expect(needsNoDecision("{not json")).toBe(false);
      process.env.COHENT_USAGE_LOG = "1";
      expect(needsNoDecision(payload("Read"))).toBe(false); // the ledger records every hook call
    } finally {
      if (saved === undefined) delete process.env.COHENT_USAGE_LOG;
      else process.env.COHENT_USAGE_LOG = saved;
    }
  });

  it("ends before the bundle loads: no answer, no runtime.json, no code cache; a shell call still gets its decision", async () => {
    const co = await makeCheckout("http://127.0.0.1:9");
    const read = await run(co, ["hook"], { stdin: payload("Read") });
    expect(read).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(existsSync(path.join(co.root, ".cohent", "runtime.json"))).toBe(false);
    expect(existsSync(path.dirname(cacheOf(co)))).toBe(false);
    const bash = await run(co, ["hook"], { stdin: payload("Bash") });
    expect(bash.code).toBe(0);
    expect(JSON.parse(bash.stdout).hookSpecificOutput.permissionDecision).toBe("deny");
  });
});
