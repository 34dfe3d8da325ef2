import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { admin } from "@cohent/backend";
import { backendForFile } from "../helpers/backend.js";
import { MAX_GUARDS } from "../../adapter/src/loader/warm-forward.js";
import { addPatch, agentRuns, codex, intentJson, makeCheckout, run, type Checkout } from "./helpers.js";

/**
 * The warm guard (adapter/src/loader/warm-*.ts) as init wires the hook
 * (`--host codex`): the first call cold, which starts a guard; the next ones
 * answered by it, with the same answers, the pause included; every way it
 * can end leaves the next call cold, never unanswered. Real processes, a
 * real backend; each test's own TMPDIR, so that its guards are its own.
 */

const REPO = "acme/warm";
const fx = backendForFile(REPO, "Warm the guard", ["alice", "Codex"], ["bob", "Codex"]);

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

/** The warm guards running now for a TMPDIR: pid and socket name, read from /proc. */
function guards(tmp: string): { pid: number; name: string }[] {
  const dir = path.join(tmp, `cohent-warm-${process.getuid!()}`);
  const names = new Set(readdirSync(dir, { withFileTypes: true }).map((d) => d.name));
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
    let v: T | null | undefined | false;
    try {
      v = f();
    } catch {
      v = null;
    }
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** A Codex hook as init wires it: `--host codex`, so that a warm guard may answer it. */
async function warmHook(co: Checkout, payload: object, env: Record<string, string>) {
  const r = await run(co, ["hook", "--host", "codex"], { stdin: JSON.stringify(payload), env });
  const json = r.stdout.trim() ? JSON.parse(r.stdout) : null;
  const out = json?.hookSpecificOutput;
  return {
    ...r,
    denied: out?.permissionDecision === "deny" ? (out.permissionDecisionReason as string) : null,
  };
}

/** A checkout with a session that has an intent and the scope src/<session>: an in-scope edit is allowed. */
async function session(S: string, extra: Record<string, string> = {}) {
  const co = await makeCheckout(fx.backend.url, REPO);
  const tmp = mkdtempSync(path.join(os.tmpdir(), "cohent-warm-test-"));
  folders.push(tmp, path.dirname(co.root));
  const env = { COHENT_AGENT_TOKEN: fx.tokens[0]!, TMPDIR: tmp, COHENT_HOOK_DEADLINE_MS: "3000", ...extra };
  const prompt = await warmHook(co, codex.prompt(S, co.root, `Warm module ${S}`), env);
  expect(prompt.code).toBe(0);
  for (const args of [
    ["intent", intentJson({ objective: `Warm module ${S}`, outputs: [`module-${S}`] })],
    ["scope", `src/${S}`],
  ]) {
    const r = await agentRuns(co, codex, S, args, { env });
    if (r.cmd?.code !== 0)
      throw new Error(`${args[0]}: ${r.pre.denied ?? ""} ${r.cmd?.stderr ?? ""}${r.cmd?.stdout ?? ""}`);
  }
  return { co, tmp, env };
}

describe("the warm guard", () => {
  it("answers the calls after the first with the cold call's answers, and a paused session is refused", async () => {
    const S = "warm-answers";
    const { co, tmp, env } = await session(S);
    const [g] = await until("a warm guard", () => (guards(tmp).length === 1 ? guards(tmp) : null));
    const inScope = codex.patch(S, co.root, addPatch(`src/${S}/cart.ts`));
    const outside = codex.patch(S, co.root, addPatch("docs/cart.md"));
    for (const payload of [inScope, outside]) {
      const warm = await warmHook(co, payload, env);
      const cold = await warmHook(co, payload, { ...env, COHENT_WARM: "0" });
      expect(warm.stdout).toBe(cold.stdout);
      expect(warm.code).toBe(cold.code);
    }
    expect((await warmHook(co, inScope, env)).denied).toBeNull();
    // The pause is read on every call, as a hook process reads it: no window.
    const ses = (await admin.listSessions(fx.backend.deps, REPO)).find((s) => s.key === S)!;
    const control = (kind: "pause" | "resume") =>
      admin.controlSession(fx.backend.deps, { sessionId: ses.id, kind, actor: "test", reason: "hold" });
    await control("pause");
    expect((await warmHook(co, inScope, env)).denied).toMatch(/paused from the Cohent Control Room \(hold\)/);
    expect(guards(tmp).map((x) => x.pid)).toEqual([g!.pid]);
    await control("resume");
    expect((await warmHook(co, inScope, env)).denied).toBeNull();
    // It was the guard that answered: frozen, it leaves the call to the hook's deadline, a refusal,
    // and loses its name: the next call runs cold, and starts another guard.
    process.kill(g!.pid, "SIGSTOP");
    try {
      const late = await warmHook(co, inScope, env);
      expect(late.denied).toMatch(/warm guard did not answer within 3 s/);
    } finally {
      process.kill(g!.pid, "SIGCONT");
    }
    expect((await warmHook(co, inScope, env)).denied).toBeNull();
    await until("the frozen guard to end", () => !alive(g!.pid));
    await until("another guard", () => guards(tmp).find((x) => x.pid !== g!.pid));
    rmSync(path.dirname(co.root), { recursive: true, force: true });
  });

  it("a guard killed leaves the next call cold, and that call starts another", async () => {
    const S = "warm-killed";
    const { co, tmp, env } = await session(S);
    const [g] = await until("a warm guard", () => (guards(tmp).length === 1 ? guards(tmp) : null));
    process.kill(g!.pid, "SIGKILL");
    await until("the guard gone", () => !alive(g!.pid));
    const r = await warmHook(co, codex.patch(S, co.root, addPatch(`src/${S}/cart.ts`)), env);
    expect(r.code).toBe(0);
    expect(r.denied).toBeNull();
    const next = await until("another guard", () => guards(tmp).find((x) => x.pid !== g!.pid));
    expect(next.name).toBe(g!.name);
  });

  it("ends when the adapter is upgraded or the checkout removed, and when idle", async () => {
    const S = "warm-ends";
    const { co, tmp, env } = await session(S, { COHENT_WARM_IDLE_MS: "600000" });
    const [g] = await until("a warm guard", () => (guards(tmp).length === 1 ? guards(tmp) : null));
    // An upgrade: cohent-core.js written again (another file, the same text).
    const core = path.join(co.root, ".cohent", "cohent-core.js");
    copyFileSync(core, `${core}.new`);
    renameSync(`${core}.new`, core);
    await until("the old guard to end", () => !alive(g!.pid));
    const r = await warmHook(co, codex.patch(S, co.root, addPatch(`src/${S}/cart.ts`)), env);
    expect(r.denied).toBeNull();
    const g2 = await until("the new build's guard", () => guards(tmp).find((x) => x.pid !== g!.pid));
    expect(g2.name).not.toBe(g!.name);
    rmSync(path.dirname(co.root), { recursive: true, force: true });
    await until("the guard of a removed checkout to end", () => !alive(g2.pid));

    const idle = await session("warm-idle", { COHENT_WARM_IDLE_MS: "1000" });
    const g3 = await until("a warm guard", () => guards(idle.tmp)[0]);
    await until("the idle guard to end", () => !alive(g3.pid));
  });

  it("another agent's environment gets a guard of its own", async () => {
    const S = "warm-two";
    const { co, tmp, env } = await session(S);
    await until("a warm guard", () => guards(tmp).length === 1);
    const bob = { ...env, COHENT_AGENT_TOKEN: fx.tokens[1]! };
    expect((await warmHook(co, codex.prompt("warm-bob", co.root, "Another task"), bob)).code).toBe(0);
    const two = await until("two guards", () => (guards(tmp).length === 2 ? guards(tmp) : null));
    expect(new Set(two.map((x) => x.name)).size).toBe(2);
  });

  it("one agent's hooks share one guard whatever else their environments differ in", async () => {
    const S = "warm-one";
    const { co, tmp, env } = await session(S);
    const [g] = await until("a warm guard", () => (guards(tmp).length === 1 ? guards(tmp) : null));
    // A client that sets a variable for some events only (as Claude Code's hooks see several sets):
    // each call is decided by the one guard, with its own variables, as a cold call would be.
    const inScope = codex.patch(S, co.root, addPatch(`src/${S}/cart.ts`));
    const outside = codex.patch(S, co.root, addPatch("docs/cart.md"));
    const extras: Record<string, string>[] = [
      { CLAUDE_ENV_FILE: "/tmp/env.sh" },
      { PATH: `/nowhere:${process.env.PATH}` },
      {},
    ];
    for (const extra of extras)
      for (const payload of [inScope, outside]) {
        const warm = await warmHook(co, payload, { ...env, ...extra });
        const cold = await warmHook(co, payload, { ...env, ...extra, COHENT_WARM: "0" });
        expect(warm.stdout).toBe(cold.stdout);
        expect(warm.code).toBe(cold.code);
      }
    expect(guards(tmp).map((x) => x.pid)).toEqual([g!.pid]);
  });

  it("is not used with COHENT_WARM=0, nor from a folder other users can read", async () => {
    const S = "warm-off";
    const { co, tmp, env } = await session(S, { COHENT_WARM: "0" });
    const dir = path.join(tmp, `cohent-warm-${process.getuid!()}`);
    expect(() => readdirSync(dir)).toThrow(/ENOENT/);

    const open = await session("warm-open");
    const g = await until("a warm guard", () => guards(open.tmp)[0]);
    process.kill(g!.pid, "SIGKILL");
    const shared = path.join(open.tmp, `cohent-warm-${process.getuid!()}`);
    chmodSync(shared, 0o755);
    for (let i = 0; i < 2; i++) {
      const r = await warmHook(
        open.co,
        codex.patch("warm-open", open.co.root, addPatch("src/warm-open/cart.ts")),
        open.env,
      );
      expect(r.denied).toBeNull();
    }
    await new Promise((r) => setTimeout(r, 1500));
    expect(guards(open.tmp)).toEqual([]);

    // A folder holding MAX_GUARDS sockets already: the calls run cold, no guard more is started.
    const full = await session("warm-full", { COHENT_WARM: "0" });
    const fullDir = path.join(full.tmp, `cohent-warm-${process.getuid!()}`);
    mkdirSync(fullDir, { mode: 0o700 });
    for (let i = 0; i < MAX_GUARDS; i++)
      writeFileSync(path.join(fullDir, `${String(i).padStart(16, "0")}.sock`), "");
    const on = { ...full.env, COHENT_WARM: "1" };
    for (let i = 0; i < 2; i++)
      expect(
        (
          await warmHook(
            full.co,
            codex.patch("warm-full", full.co.root, addPatch("src/warm-full/cart.ts")),
            on,
          )
        ).denied,
      ).toBeNull();
    await new Promise((r) => setTimeout(r, 1500));
    expect(guards(full.tmp)).toEqual([]);
    void co;
    void env;
  });
});
