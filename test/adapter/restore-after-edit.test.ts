import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { signedInAdmin } from "../console/helpers.js";
import { backendForFile } from "../helpers/backend.js";
import { sh, write } from "./git-repo.js";
import { agentRuns, claude, hook, intentJson, makeCheckout, run, type Checkout } from "./helpers.js";

/**
 * A restore after the holder's own edit (issue 49, item 7), end to end: the
 * built adapter in child processes against a real backend, two Claude Code
 * sessions in one checkout. Bo's script overwrites part of Ana's
 * uncommitted src/peer.ts; the check after the call catches it; before
 * anyone restores, Ana edits the file again through her Write tool (her
 * edit lands on Bo's bytes). Then restore runs: from Bo's shell, or from the
 * Control Room. Ana's later edit is merged over her bytes from before Bo's
 * call, or, where it touches Bo's lines, her bytes come back and the edited
 * version is kept in the stash, outside the work tree; the text says which.
 */

const REPO = "acme/restore-edit";
const fx = backendForFile(REPO, "Restore over a later edit", ["ana", "Claude Code"], ["bo", "Claude Code"]);
const ANA = { session: "", env: {} as Record<string, string> };
const BO = { session: "", env: {} as Record<string, string> };
const ANAS = Array.from({ length: 12 }, (_, i) => `export const v${i} = ${i}; // Ana's uncommitted work\n`);
const PEER = ANAS.join("");
/** Ana's file with line i (0-based) replaced. */
const withLine = (i: number, text: string, lines = ANAS) =>
  lines.map((l, j) => (j === i ? text : l)).join("");

let co: Checkout;

async function startWork(who: typeof ANA, x: string, scope: string[]): Promise<void> {
  await hook(co, claude.prompt(who.session, co.root, `Work on ${x}`), who.env);
  const intent = intentJson({ objective: `Work on ${x}`, outputs: [`out-${x}`] });
  await agentRuns(co, claude, who.session, ["intent", intent, "--json"], { env: who.env });
  const scoped = await agentRuns(co, claude, who.session, ["scope", ...scope], { env: who.env });
  expect(scoped.cmd!.code, scoped.cmd!.stdout + scoped.cmd!.stderr).toBe(0);
}

const bash = (who: typeof ANA, command: string, event = "PreToolUse", id = "toolu_b1") =>
  hook(co, { ...claude.bash(who.session, co.root, command, event), tool_use_id: id }, who.env);
const read = (f: string) => readFileSync(path.join(co.root, f), "utf8");

/** Bo's script rewrites line 3 of Ana's file through a path built at run time: caught after the call. */
async function bosCaughtWrite(): Promise<void> {
  write(co.root, "docs/w.sh", `p=src; f=peer.ts; sed -i 's/v2 = 2/v2 = "bo"/' $p/$f\n`);
  expect((await bash(BO, "sh docs/w.sh")).denied).toBeNull();
  execFileSync("sh", ["docs/w.sh"], { cwd: co.root });
  const post = await bash(BO, "sh docs/w.sh", "PostToolUse");
  expect(post.json.decision).toBe("block");
  expect(post.json.reason).toContain("src/peer.ts (modified)");
}

/** Ana's own guarded Write of her file, on top of whatever lies there now. */
async function anasEdit(text: string): Promise<void> {
  const file = path.join(co.root, "src/peer.ts");
  const call = (event: string) => ({
    ...claude.write(ANA.session, co.root, file, event),
    tool_use_id: "toolu_a1",
  });
  expect((await hook(co, call("PreToolUse"), ANA.env)).denied).toBeNull();
  writeFileSync(file, text);
  await hook(co, call("PostToolUse"), ANA.env);
}

const BOS = withLine(2, `export const v2 = "bo"; // Ana's uncommitted work\n`);

beforeEach(async () => {
  ANA.session = `ana-${Math.random().toString(36).slice(2, 8)}`;
  BO.session = `bo-${Math.random().toString(36).slice(2, 8)}`;
  ANA.env = { ...claude.env, COHENT_AGENT_TOKEN: fx.tokens[0], COHENT_SESSION: ANA.session };
  BO.env = { ...claude.env, COHENT_AGENT_TOKEN: fx.tokens[1], COHENT_SESSION: BO.session };
  co = await makeCheckout(fx.backend.url, REPO);
  sh(co.root, "init", "-q", "-b", "main");
  sh(co.root, "config", "user.name", "Test");
  sh(co.root, "config", "user.email", "test@example.com");
  write(co.root, ".gitignore", ".cohent/runtime.json*\n");
  write(co.root, "src/peer.ts", "export const peer = 0;\n");
  write(co.root, "docs/guide.md", "g0\n");
  sh(co.root, "add", "-A");
  sh(co.root, "commit", "-q", "-m", "initial");
  await startWork(ANA, "peer", ["src/peer.ts"]);
  write(co.root, "src/peer.ts", PEER);
  await startWork(BO, "docs", ["docs/"]);
});

afterEach(async () => {
  for (const who of [ANA, BO])
    await agentRuns(co, claude, who.session, ["checkpoint", "abandoned", "case over"], { env: who.env });
});

describe("restore after the holder's own edit", () => {
  it("merges Ana's later edit over her bytes from before Bo's call, and says so", async () => {
    await bosCaughtWrite();
    expect(read("src/peer.ts")).toBe(BOS);
    const anas = withLine(9, "export const v9 = 'Ana, later';\n", BOS.split(/(?<=\n)/));
    await anasEdit(anas);

    const r = await run(co, ["restore", "src/peer.ts"], { env: BO.env });
    expect(r.code, r.stderr).toBe(0);
    expect(read("src/peer.ts")).toBe(withLine(9, "export const v9 = 'Ana, later';\n"));
    const kept = /kept at (\.git\/cohent\/held\/kept\/c\w+\/src\/peer\.ts)\./.exec(r.stdout)?.[1];
    expect(r.stdout).toMatch(/^Merged src\/peer\.ts: it had been edited since the catch/);
    expect(kept).toBeDefined();
    expect(read(kept!)).toBe(anas);
    expect((await run(co, ["restore", "--list"], { env: BO.env })).stdout).toContain(
      `src/peer.ts (modified, restored; the version it had then is kept at ${kept})`,
    );
  });

  it("an edit of Bo's very line: Ana's bytes come back, her edited version is kept outside the work tree, and the text says where", async () => {
    await bosCaughtWrite();
    const anas = withLine(2, "export const v2 = 'Ana, over it';\n", BOS.split(/(?<=\n)/));
    await anasEdit(anas);

    const r = await run(co, ["restore", "src/peer.ts", "--json"], { env: BO.env });
    expect(r.code, r.stderr).toBe(0);
    expect(read("src/peer.ts")).toBe(PEER);
    const data = JSON.parse(r.stdout).data;
    expect(data.restored).toEqual(["src/peer.ts"]);
    expect(data.merged).toEqual([]);
    const at: string = data.kept[0].at;
    expect(at).toMatch(/^\.git\/cohent\/held\/kept\/c\w+\/src\/peer\.ts$/);
    expect(read(at)).toBe(anas);
    expect(data.text).toContain(
      `src/peer.ts had been edited since the catch and was not merged (that edit touches the lines the caught call changed)`,
    );
    expect(data.text).toContain(`the edited version is kept at ${at}; re-apply that edit from it`);
    expect(sh(co.root, "status", "--porcelain", "--untracked-files=all")).toBe(
      " M src/peer.ts\n?? docs/w.sh\n",
    );
  });

  it("a restore asked from the Control Room merges too, and Bo's model reads which", async () => {
    await bosCaughtWrite();
    await anasEdit(withLine(11, "export const v11 = 'Ana, later';\n", BOS.split(/(?<=\n)/)));
    const admin = await signedInAdmin(fx.backend);
    const [w] = (await admin.get(`/api/console/repos/${REPO}`)).body.data.shellWrites;
    expect((await admin.post(`/api/console/repos/${REPO}/shell-writes/${w.id}/restore`)).status).toBe(200);

    expect((await bash(BO, "echo x > docs/n.md", "PreToolUse", "toolu_b2")).denied).toBeNull();
    expect(read("src/peer.ts")).toBe(withLine(11, "export const v11 = 'Ana, later';\n"));
    const shown = JSON.stringify((await bash(BO, "echo x > docs/n.md", "PostToolUse", "toolu_b2")).json);
    expect(shown).toContain("Merged src/peer.ts: it had been edited since the catch");
  });
});
