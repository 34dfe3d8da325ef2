import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { signedInAdmin } from "../console/helpers.js";
import { agentClient, backendForFile } from "../helpers/backend.js";
import { sh, write } from "./git-repo.js";
import { agentRuns, claude, hook, intentJson, makeCheckout, run, type Checkout } from "./helpers.js";

/**
 * The shell held like the edit tools (issue 42), end to end: the built
 * adapter in child processes against a real backend, two sessions sharing
 * one checkout. Ana holds src/peer.ts and src/held/; Bo has declared the
 * scope docs/. Bo's edit of Ana's file is refused; so is every shell
 * command that visibly writes it; a write Cohent cannot see is caught by the
 * check after the call, told to Bo's model, noticed to Ana, and undone with
 * `restore`.
 */

const REPO = "acme/shell";
const fx = backendForFile(
  REPO,
  "Keep the shell to the claims",
  ["ana", "Claude Code"],
  ["bo", "Claude Code"],
);
const ANA = { session: "ana-sh", env: {} as Record<string, string> };
const BO = { session: "bo-sh", env: {} as Record<string, string> };
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

const bash = (who: typeof ANA, command: string, event = "PreToolUse", id = "toolu_b1") =>
  hook(co, { ...claude.bash(who.session, co.root, command, event), tool_use_id: id }, who.env);
const read = (f: string) => readFileSync(path.join(co.root, f), "utf8");

beforeEach(async () => {
  ANA.env = { ...claude.env, COHENT_AGENT_TOKEN: fx.tokens[0], COHENT_SESSION: ANA.session };
  BO.env = { ...claude.env, COHENT_AGENT_TOKEN: fx.tokens[1], COHENT_SESSION: BO.session };
  ANA.session = `ana-${Math.random().toString(36).slice(2, 8)}`;
  BO.session = `bo-${Math.random().toString(36).slice(2, 8)}`;
  ANA.env.COHENT_SESSION = ANA.session;
  BO.env.COHENT_SESSION = BO.session;
  co = await makeCheckout(fx.backend.url, REPO);
  sh(co.root, "init", "-q", "-b", "main");
  sh(co.root, "config", "user.name", "Test");
  sh(co.root, "config", "user.email", "test@example.com");
  write(co.root, ".gitignore", ".cohent/runtime.json*\nbuild/\n");
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

// Each case's intents end with it: the next case's claims start from nobody's.
afterEach(async () => {
  for (const who of [ANA, BO])
    await agentRuns(co, claude, who.session, ["checkpoint", "abandoned", "case over"], { env: who.env });
});

describe("a visible shell write follows the edit rules", () => {
  it("refuses Bo's edit of Ana's file, and then each shell command that writes it, naming Ana", async () => {
    const edit = await hook(co, claude.write(BO.session, co.root, path.join(co.root, "src/peer.ts")), BO.env);
    expect(edit.denied).toMatch(/src\/peer\.ts lies outside your declared scope|overlaps the scope of ana/);

    const commands = [
      "sed -i 's/1/2/' src/peer.ts",
      "echo x > src/peer.ts",
      "printf x >> src/held/x.ts",
      "cat > src/peer.ts <<'EOF'\nexport const peer = 3;\nEOF",
      "echo x | tee src/peer.ts",
      "cp docs/guide.md src/peer.ts",
      "mv docs/guide.md src/held/x.ts",
      "rm -f src/peer.ts",
      "git checkout -- src/peer.ts",
      "perl -pi -e 's/1/2/' src/peer.ts",
      "truncate -s 0 src/peer.ts",
      `python3 -c "open('src/peer.ts','w').write('x')"`,
      `node -e "require('fs').writeFileSync('src/held/x.ts','x')"`,
      "cd src && sed -i 's/1/2/' peer.ts",
      "git rm -q src/peer.ts",
    ];
    for (const command of commands) {
      const r = await bash(BO, command);
      expect(r.denied, command).toMatch(/^Cohent: shell write refused/);
      expect(r.denied, command).toMatch(/ana|outside your declared scope/);
    }
    expect(read("src/peer.ts")).toBe(PEER);
  });

  it("refuses a write into a peer's path by a session with no declared scope, naming the peer and the queue", async () => {
    // Bo's scope released: the guard claims a shell command's targets on the fly, as an edit's.
    await agentRuns(co, claude, BO.session, ["scope"], { env: BO.env });
    const r = await bash(BO, "echo x > src/peer.ts");
    expect(r.denied).toMatch(/overlaps the scope of ana/);
    expect(r.denied).toContain("scope --queue");
    expect(r.denied).toContain("request-release");
    // A file nobody holds is claimed and written.
    expect((await bash(BO, "echo x > lib/new.ts")).denied).toBeNull();
  });

  it("lets read-only commands that name held paths through, and never holds ignored or outside paths", async () => {
    for (const command of [
      "cat src/peer.ts",
      "grep -n peer src/peer.ts src/held/x.ts",
      "git diff src/peer.ts",
      "git log -p -- src/held/x.ts",
      "sed -n 1,5p src/peer.ts",
      "echo done > /tmp/cohent-shell-guard.txt",
      "mkdir -p build && echo x > build/out.js",
    ])
      expect((await bash(BO, command)).denied, command).toBeNull();
  });
});

describe("an invisible shell write is caught after the call", () => {
  it("tells the model, notices the peer, and restore puts Ana's bytes back", async () => {
    write(co.root, "docs/w.sh", "p=src; f=peer.ts; echo overwritten > $p/$f\n");
    const command = "sh docs/w.sh";
    expect((await bash(BO, command)).denied).toBeNull();
    execFileSync("sh", ["docs/w.sh"], { cwd: co.root });
    const post = await bash(BO, command, "PostToolUse");
    expect(post.json.decision).toBe("block");
    expect(post.json.reason).toContain("src/peer.ts (modified)");
    expect(post.json.reason).toContain("claimed by ana");
    expect(post.json.reason).toContain("node .cohent/cohent.mjs restore src/peer.ts");

    // Ana's next packet carries the notice, with the command as untrusted peer text.
    const ana = agentClient(fx.backend.url, fx.tokens[0], ANA.session);
    const polled = await ana.poll(anaIntent);
    const text = JSON.stringify(polled);
    expect(text).toContain("changed your claimed src/peer.ts");
    expect(text).toContain("sh docs/w.sh");

    const restored = await run(co, ["restore", "src/peer.ts"], { env: BO.env });
    expect(restored.code, restored.stderr).toBe(0);
    expect(read("src/peer.ts")).toBe(PEER);
  });

  it("does not blame the call for the holder's own guarded edit that lands during it", async () => {
    expect((await bash(BO, "sh docs/noop.sh")).denied).toBeNull();
    const file = path.join(co.root, "src/peer.ts");
    const pre = await hook(
      co,
      { ...claude.write(ANA.session, co.root, file), tool_use_id: "toolu_a1" },
      ANA.env,
    );
    expect(pre.denied).toBeNull();
    writeFileSync(file, "export const peer = 2; // Ana's edit\n");
    await hook(
      co,
      { ...claude.write(ANA.session, co.root, file, "PostToolUse"), tool_use_id: "toolu_a1" },
      ANA.env,
    );
    const post = await bash(BO, "sh docs/noop.sh", "PostToolUse");
    expect(post.json?.decision).toBeUndefined();
    expect(read("src/peer.ts")).toContain("Ana's edit");
  });
});

describe("the model is told in its client's own way", () => {
  const copilot = (session: string, extra: object) =>
    run(co, ["hook", "--host", "copilot"], {
      stdin: JSON.stringify({ sessionId: session, timestamp: Date.now(), cwd: co.root, ...extra }),
      env: { ...BO.env, CLAUDECODE: undefined, COPILOT_CLI: "1", COPILOT_CLI_BINARY_VERSION: "1.0.102" },
    });

  it("Copilot CLI reads no PostToolUse answer: the session's next shell or edit call is refused with the catch, once", async () => {
    write(co.root, "docs/w.sh", "echo overwritten > src/held/x.ts\n");
    const call = { toolName: "bash", toolArgs: { command: "sh docs/w.sh", description: "run" } };
    const pre = await copilot(BO.session, call);
    expect(pre.stdout).not.toContain("deny");
    execFileSync("sh", ["docs/w.sh"], { cwd: co.root });
    const post = await copilot(BO.session, {
      ...call,
      toolResult: { resultType: "success", textResultForLlm: "" },
    });
    expect(post.stdout.trim()).toBe("");
    // A read passes (the loader answers it without the session); the next shell or edit call carries the catch.
    const ls = { toolName: "bash", toolArgs: { command: "ls docs", description: "list" } };
    const view = await copilot(BO.session, {
      toolName: "view",
      toolArgs: { path: path.join(co.root, "docs") },
    });
    expect(view.stdout).not.toContain("deny");
    const next = await copilot(BO.session, ls);
    const refused = JSON.parse(next.stdout);
    expect(refused.permissionDecision).toBe("deny");
    expect(refused.permissionDecisionReason).toContain("src/held/x.ts (modified)");
    expect(refused.permissionDecisionReason).toContain("restore src/held/x.ts");
    const again = await copilot(BO.session, ls);
    expect(again.stdout).not.toContain("deny");
    expect((await run(co, ["restore", "src/held/x.ts"], { env: BO.env })).code).toBe(0);
    expect(read("src/held/x.ts")).toBe("x0\n");
  });

  it("Copilot CLI: restore through the shell (relayed by the hook) undoes the catch, and the next call is not refused for it", async () => {
    write(co.root, "docs/w.sh", "echo overwritten > src/held/x.ts\n");
    const call = { toolName: "bash", toolArgs: { command: "sh docs/w.sh", description: "run" } };
    await copilot(BO.session, call);
    execFileSync("sh", ["docs/w.sh"], { cwd: co.root });
    await copilot(BO.session, { ...call, toolResult: { resultType: "success", textResultForLlm: "" } });
    const restore = "node .cohent/cohent.mjs restore src/held/x.ts";
    const pre = await copilot(BO.session, {
      toolName: "bash",
      toolArgs: { command: restore, description: "undo" },
    });
    expect(pre.stdout).not.toContain("deny");
    expect(read("src/held/x.ts")).toBe("x0\n"); // the hook performed it
    // The command itself prints the hook's answer and does not restore again.
    const cmd = await run(co, ["restore", "src/held/x.ts"], { env: BO.env });
    expect(cmd.code, cmd.stderr).toBe(0);
    expect(cmd.stdout).toContain("Restored 1 file(s)");
    const ls = { toolName: "bash", toolArgs: { command: "ls docs", description: "list" } };
    expect((await copilot(BO.session, ls)).stdout).not.toContain("deny");
    expect((await run(co, ["restore", "--list"], { env: BO.env })).stdout).toContain("restored");
  });

  it("an opaque MCP tool's write into a peer's file is caught the same way", async () => {
    const call = (event: string) => ({
      ...claude.bash(BO.session, co.root, "", event),
      tool_name: "mcp__fs__write_file",
      tool_input: { path: "src/peer.ts", content: "mcp" },
      tool_use_id: "toolu_m1",
    });
    expect((await hook(co, call("PreToolUse"), BO.env)).denied).toBeNull();
    writeFileSync(path.join(co.root, "src/peer.ts"), "mcp\n");
    const post = await hook(co, call("PostToolUse"), BO.env);
    expect(post.json.decision).toBe("block");
    expect(post.json.reason).toContain("this mcp__fs__write_file call changed src/peer.ts (modified)");
    const listed = await run(co, ["restore", "--list"], { env: BO.env });
    expect(listed.stdout).toContain("src/peer.ts (modified)");
    expect((await run(co, ["restore", "src/peer.ts"], { env: BO.env })).code).toBe(0);
    expect(read("src/peer.ts")).toBe(PEER);
  });
});

describe("before an intent", () => {
  it("refuses a shell command that writes the checkout, and lets one that only reads through", async () => {
    const env = { ...claude.env, COHENT_AGENT_TOKEN: fx.tokens[1] };
    const r = await hook(co, claude.bash("nobody-yet", co.root, "echo x > docs/new.md"), env);
    expect(r.denied).toMatch(/no prompt or intent has been announced for this session/);
    expect((await hook(co, claude.bash("nobody-yet", co.root, "cat docs/guide.md"), env)).denied).toBeNull();
  });
});

describe("restore", () => {
  it("keeps a file changed again since the catch, somebody's newer work, in the stash, and says where", async () => {
    write(co.root, "docs/w.sh", "echo overwritten > src/peer.ts\n");
    expect((await bash(BO, "sh docs/w.sh")).denied).toBeNull();
    execFileSync("sh", ["docs/w.sh"], { cwd: co.root });
    expect((await bash(BO, "sh docs/w.sh", "PostToolUse")).json.decision).toBe("block");
    writeFileSync(path.join(co.root, "src/peer.ts"), "newer\n");
    const r = await run(co, ["restore", "src/peer.ts"], { env: BO.env });
    expect(r.code, r.stderr).toBe(0);
    expect(read("src/peer.ts")).toBe(PEER);
    const kept = /the edited version is kept at (\S+);/.exec(r.stdout)?.[1];
    expect(read(kept!)).toBe("newer\n"); // more in restore-after-edit.test.ts
  });
});

describe("a person restores a caught shell write from the Control Room", () => {
  it("the writer's adapter puts Ana's bytes back at its next tool call, and tells its model", async () => {
    write(co.root, "docs/w.sh", "p=src; f=peer.ts; echo overwritten > $p/$f\n");
    expect((await bash(BO, "sh docs/w.sh")).denied).toBeNull();
    execFileSync("sh", ["docs/w.sh"], { cwd: co.root });
    expect((await bash(BO, "sh docs/w.sh", "PostToolUse")).json.decision).toBe("block");
    expect(read("src/peer.ts")).toBe("overwritten\n");

    // The admin's Restore on the newest catch (the Control Room's overview lists it).
    const admin = await signedInAdmin(fx.backend);
    const [w] = (await admin.get(`/api/console/repos/${REPO}`)).body.data.shellWrites;
    expect(w).toMatchObject({ restorable: true, paths: ["src/peer.ts"], restoreRequested: null });
    const asked = await admin.post(`/api/console/repos/${REPO}/shell-writes/${w.id}/restore`);
    expect(asked.status, JSON.stringify(asked.body)).toBe(200);
    expect(read("src/peer.ts")).toBe("overwritten\n"); // nothing happens until Bo's adapter runs

    // Bo's next shell call: the kill-switch read says a notice waits, the poll brings it, the adapter restores.
    expect((await bash(BO, "echo x > docs/n.md", "PreToolUse", "toolu_b2")).denied).toBeNull();
    expect(read("src/peer.ts")).toBe(PEER);
    // …and Bo's model reads the request with what was done at the call's PostToolUse.
    const shown = JSON.stringify((await bash(BO, "echo x > docs/n.md", "PostToolUse", "toolu_b2")).json);
    expect(shown).toContain("admin asks from the Control Room that your checkout put src/peer.ts back");
    expect(shown).toContain("Restored 1 file(s) as before the caught call");
    // The page shows the request.
    const [after] = (await admin.get(`/api/console/repos/${REPO}`)).body.data.shellWrites;
    expect(after).toMatchObject({ id: w.id, restoreRequested: { by: "admin" } });
  });
});
