import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { pathToFileURL } from "node:url";
import { listCatches } from "../../adapter/src/held/files.js";
import { hookInProcess } from "../../adapter/src/transports/hook-in-process.js";
import { signedInAdmin } from "../console/helpers.js";
import { agentClient, backendForFile } from "../helpers/backend.js";
import { sh, write } from "./git-repo.js";
import { agentRuns, claude, hook, intentJson, makeCheckout, run, type Checkout } from "./helpers.js";

/**
 * Nothing silent (issue 49): the watch runs around every shell call, a
 * command the reader takes for a read included, and between calls, so that
 * a write into a peer's claim is refused or caught whatever runs it and
 * whenever: a misjudged "read", a background job after the call, a call
 * whose PostToolUse never came. A Git-ignored file in a held folder is
 * nobody's work. A change to the clients' hook settings is put back at once.
 * The built adapter in child processes against a real backend; Ana holds
 * src/peer.ts and src/held/, Bo has declared docs/.
 */

const REPO = "acme/watch";
const fx = backendForFile(REPO, "Keep every write in sight", ["ana", "Claude Code"], ["bo", "Claude Code"]);
const ANA = { session: "", env: {} as Record<string, string> };
const BO = { session: "", env: {} as Record<string, string> };
const PEER = "export const peer = 1; // Ana's uncommitted work\n";

let co: Checkout;
let anaIntent: string;

async function startWork(who: typeof ANA, x: string, scope: string[]): Promise<string> {
  await hook(co, claude.prompt(who.session, co.root, `Work on ${x}`), who.env);
  const intent = intentJson({ objective: `Work on ${x}`, outputs: [`out-${x}`] });
  const r = await agentRuns(co, claude, who.session, ["intent", intent, "--json"], { env: who.env });
  const intentId = JSON.parse(r.cmd!.stdout).data.intentId as string;
  const scoped = await agentRuns(co, claude, who.session, ["scope", ...scope], { env: who.env });
  expect(scoped.cmd!.code, scoped.cmd!.stdout + scoped.cmd!.stderr).toBe(0);
  return intentId;
}

const bash = (who: typeof ANA, command: string, event = "PreToolUse", id = "toolu_w1") =>
  hook(co, { ...claude.bash(who.session, co.root, command, event), tool_use_id: id }, who.env);
/** A call the model makes and the command really runs, as the client would: Pre, the command, Post. */
async function call(who: typeof ANA, command: string, id: string) {
  const pre = await bash(who, command, "PreToolUse", id);
  if (pre.denied) return { pre, post: null };
  execFileSync("sh", ["-c", command], { cwd: co.root, stdio: "ignore" });
  return { pre, post: await bash(who, command, "PostToolUse", id) };
}
const read = (f: string) => readFileSync(path.join(co.root, f), "utf8");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Ana's next packet, as text: where a shell-write notice reaches the holder. */
const anaPacket = async () =>
  JSON.stringify(await agentClient(fx.backend.url, fx.tokens[0]!, ANA.session).poll(anaIntent));

beforeEach(async () => {
  ANA.session = `ana-${Math.random().toString(36).slice(2, 8)}`;
  BO.session = `bo-${Math.random().toString(36).slice(2, 8)}`;
  ANA.env = { ...claude.env, COHENT_AGENT_TOKEN: fx.tokens[0]!, COHENT_SESSION: ANA.session };
  BO.env = { ...claude.env, COHENT_AGENT_TOKEN: fx.tokens[1]!, COHENT_SESSION: BO.session };
  co = await makeCheckout(fx.backend.url, REPO);
  sh(co.root, "init", "-q", "-b", "main");
  sh(co.root, "config", "user.name", "Test");
  sh(co.root, "config", "user.email", "test@example.com");
  write(co.root, ".gitignore", ".cohent/runtime.json*\n*.log\ndist/\n");
  for (const [f, t] of Object.entries({
    "src/peer.ts": "export const peer = 0;\n",
    "src/held/x.ts": "x0\n",
    "docs/guide.md": "g0\n",
  }))
    write(co.root, f, t);
  sh(co.root, "add", "-A");
  sh(co.root, "commit", "-q", "-m", "initial");
  anaIntent = await startWork(ANA, "peer", ["src/peer.ts", "src/held/"]);
  write(co.root, "src/peer.ts", PEER);
  await startWork(BO, "docs", ["docs/"]);
});

afterEach(async () => {
  for (const who of [ANA, BO])
    await agentRuns(co, claude, who.session, ["checkpoint", "abandoned", "case over"], { env: who.env });
});

describe("every shell call is watched", () => {
  it("a command the reader misjudges as a read is refused or caught, never silent", async () => {
    // Writers the reader may not know; each either is refused before it runs or is caught after it.
    const commands = [
      "sed -n 'w src/held/x.ts' docs/guide.md",
      "uniq docs/guide.md src/peer.ts",
      "xxd docs/guide.md src/held/x.ts",
      "find docs -name guide.md -fprint src/peer.ts",
    ];
    for (const [i, command] of commands.entries()) {
      const before = { peer: read("src/peer.ts"), x: read("src/held/x.ts") };
      const { pre, post } = await call(BO, command, `toolu_m${i}`);
      if (pre.denied) {
        expect(pre.denied, command).toMatch(/ana/);
        expect({ peer: read("src/peer.ts"), x: read("src/held/x.ts") }).toEqual(before);
        continue;
      }
      expect(post!.json?.decision, command).toBe("block");
      expect(post!.json.reason, command).toMatch(/claimed by ana/);
      const r = await run(co, ["restore", "src/peer.ts", "src/held/x.ts"], { env: BO.env });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect({ peer: read("src/peer.ts"), x: read("src/held/x.ts") }).toEqual(before);
    }
  });

  it("a Git-ignored file in a held folder is nobody's work: not caught", async () => {
    write(
      co.root,
      "docs/build.sh",
      "mkdir -p src/held/dist; echo log > src/held/debug.log; echo o > src/held/dist/out.js\n",
    );
    const { pre, post } = await call(BO, "sh docs/build.sh", "toolu_i1");
    expect(pre.denied).toBeNull();
    expect(post!.json).toBeNull();
    // …and not between calls either: Ana's next call hears nothing, nor does the service.
    const next = await call(ANA, "ls src", "toolu_i2");
    expect(next.pre.denied).toBeNull();
    expect(next.post!.json).toBeNull();
    expect(await anaPacket()).not.toContain("changed your claimed");
  });
});

describe("between calls", () => {
  it("a background job's write two seconds after the call is caught at the next call, its writer named", async () => {
    write(co.root, "docs/late.sh", "sleep 2; echo late > src/peer.ts\n");
    const { pre, post } = await call(BO, "nohup sh docs/late.sh >/dev/null 2>&1 &", "toolu_b1");
    expect(pre.denied).toBeNull();
    expect(post!.json).toBeNull(); // nothing changed yet
    await sleep(3000);
    expect(read("src/peer.ts")).toBe("late\n");
    // Ana's next call (a read) notices: her model is told, her intent gets the notice.
    const next = await call(ANA, "cat src/peer.ts", "toolu_a1");
    expect(next.pre.denied).toBeNull();
    const told = JSON.stringify(next.post?.json ?? next.pre.json);
    expect(told).toMatch(/src\/peer\.ts, which you hold, changed between tool calls/);
    expect(told).toContain(`writer: session ${BO.session}`);
    const [c] = listCatches(co.root);
    expect(c).toMatchObject({ sessionId: `between:${BO.session}` });
    expect(c!.changes.map((x) => x.path)).toEqual(["src/peer.ts"]);
    // The Control Room lists it as changed between calls, noticed by Ana, restorable.
    const admin = await signedInAdmin(fx.backend);
    const [w] = (await admin.get(`/api/console/repos/${REPO}`)).body.data.shellWrites;
    expect(w).toMatchObject({ between: true, paths: ["src/peer.ts"], restorable: true });
    expect(w.writer.person).toBe("ana");
    // Bo's next call is told it was his job's, and restore brings Ana's bytes back.
    const bo = await bash(BO, "ls docs", "PreToolUse", "toolu_b2");
    expect(bo.denied ?? "").toBe(""); // noticed already: the baseline moved on, told once
    const r = await run(co, ["restore", "src/peer.ts"], { env: ANA.env });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(read("src/peer.ts")).toBe(PEER);
  });

  it("a write by a process outside any agent is noticed at the next call of any session, writer unknown", async () => {
    await call(BO, "ls", "toolu_o1"); // a baseline exists
    writeFileSync(path.join(co.root, "src/held/x.ts"), "outside\n");
    const next = await call(BO, "ls docs", "toolu_o2");
    expect(next.pre.denied).toBeNull(); // not Bo's: his model is not blamed
    const [c] = listCatches(co.root);
    expect(c).toMatchObject({ sessionId: "between:unknown" });
    expect(c!.changes.map((x) => x.path)).toEqual(["src/held/x.ts"]);
    expect(await anaPacket()).toMatch(/your claimed src\/held\/x\.ts changed between tool calls/);
  });

  it("a long-lived guard (the MCP server, the warm guard, the plugin) notices it when it happens, with no call after it", async () => {
    await call(BO, "ls", "toolu_l0"); // the checkout's last known state exists
    const saved = { ...process.env };
    Object.assign(process.env, BO.env);
    try {
      // One call served in this process, as Claude Code's MCP server serves its session's.
      const payload = {
        ...claude.bash(BO.session, co.root, "ls docs", "PostToolUse"),
        tool_use_id: "toolu_l1",
      };
      const scriptUrl = pathToFileURL(path.join(co.root, ".cohent/cohent.mjs")).href;
      await hookInProcess(JSON.stringify(payload), { host: "claude", root: co.root, scriptUrl });
      writeFileSync(path.join(co.root, "src/held/x.ts"), "a process outside any call\n");
      let caught: ReturnType<typeof listCatches>[number] | undefined;
      for (let i = 0; i < 60 && !caught; i++) {
        await sleep(250);
        caught = listCatches(co.root).find((c) => c.sessionId.startsWith("between:"));
      }
      expect(caught?.changes.map((x) => x.path)).toEqual(["src/held/x.ts"]);
      expect(await anaPacket()).toMatch(/your claimed src\/held\/x\.ts changed between tool calls/);
    } finally {
      process.env = saved;
    }
  });

  it("a call whose PostToolUse never came is compared at the session's next call, whatever its id", async () => {
    write(co.root, "docs/w.sh", "p=src; f=peer.ts; echo overwritten > $p/$f\n");
    expect((await bash(BO, "sh docs/w.sh", "PreToolUse", "toolu_lost")).denied).toBeNull();
    execFileSync("sh", ["docs/w.sh"], { cwd: co.root });
    // No PostToolUse: the client was interrupted. Bo's next call carries the catch.
    const next = await bash(BO, "ls docs", "PreToolUse", "toolu_next");
    expect(next.denied).toMatch(/changed src\/peer\.ts \(modified\), which it had not claimed/);
  });
});

describe("no file the agent can write opens the guard", () => {
  it("a scope forged into runtime.json grants nothing: the peers' live claims decide", async () => {
    const file = path.join(co.root, ".cohent/runtime.json");
    const rt = JSON.parse(readFileSync(file, "utf8"));
    rt.sessions[BO.session].scope.push("src/peer.ts", "src/held/");
    rt.sessions[BO.session].polledAt = Date.now() + 3_600_000; // and no poll for an hour
    writeFileSync(file, JSON.stringify(rt));
    const edit = await hook(co, claude.write(BO.session, co.root, path.join(co.root, "src/peer.ts")), BO.env);
    expect(edit.denied).toMatch(/overlaps the scope of ana/);
    expect((await bash(BO, "echo x > src/held/x.ts")).denied).toMatch(/overlaps the scope of ana/);
    expect(read("src/peer.ts")).toBe(PEER);
  });
});

describe("the clients' hook settings are the guard's own files", () => {
  it("disableAllHooks written by a script into .claude/settings.local.json is put back at once, and the session told", async () => {
    const file = path.join(co.root, ".claude/settings.local.json");
    const had = existsSync(file) ? read(".claude/settings.local.json") : null;
    // The path built at run time: the reader cannot name it, the watch must catch it.
    write(
      co.root,
      "docs/off.sh",
      `d=$(printf .cla; printf ude); mkdir -p "$d"; echo '{"disableAllHooks":true}' > "$d/settings.local.json"\n`,
    );
    const { pre, post } = await call(BO, "sh docs/off.sh", "toolu_s1");
    expect(pre.denied).toBeNull();
    expect(post!.json?.decision).toBe("block");
    expect(post!.json.reason).toMatch(/changed Cohent's guard files/);
    expect(post!.json.reason).toMatch(/Put back as they were/);
    expect(existsSync(file) ? read(".claude/settings.local.json") : null).toBe(had);
    // The session is paused until a person resumes it: its next call is refused with the reason.
    const next = await bash(BO, "ls docs", "PreToolUse", "toolu_s2");
    expect(next.denied).toMatch(/paused/i);
    expect(next.denied).toMatch(/guard files/);
  });

  it("the user's settings outside the checkout ($CLAUDE_CONFIG_DIR) likewise; a permission granted is left alone", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "cohent-claude-config-"));
    const settings = path.join(dir, "settings.json");
    writeFileSync(settings, '{"permissions":{"allow":["Bash(ls)"]}}\n');
    const env = { ...BO.env, CLAUDE_CONFIG_DIR: dir };
    const shell = (command: string, event: string, id: string) =>
      hook(co, { ...claude.bash(BO.session, co.root, command, event), tool_use_id: id }, env);
    // A person's "always allow", recorded by the client while the call waits, is no guard change.
    expect((await shell("ls docs", "PreToolUse", "toolu_u1")).denied).toBeNull();
    const granted = '{"permissions":{"allow":["Bash(ls)","Bash(cat:*)"]}}\n';
    writeFileSync(settings, granted);
    expect((await shell("ls docs", "PostToolUse", "toolu_u1")).json).toBeNull();
    expect(readFileSync(settings, "utf8")).toBe(granted);
    // The switch that turns every hook off, written outside the checkout by a script the reader cannot see
    // into: put back at once, and the session paused.
    expect((await shell("sh docs/tool.sh", "PreToolUse", "toolu_u2")).denied).toBeNull();
    writeFileSync(settings, '{"disableAllHooks":true}');
    const post = await shell("sh docs/tool.sh", "PostToolUse", "toolu_u2");
    expect(post.json?.decision).toBe("block");
    expect(post.json.reason).toContain(settings);
    expect((await shell("ls docs", "PreToolUse", "toolu_u3")).denied).toMatch(/paused/i);
    expect(readFileSync(settings, "utf8")).toBe(granted);
  });
});
