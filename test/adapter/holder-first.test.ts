import path from "node:path";
import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { backendForFile } from "../helpers/backend.js";
import { sh, write } from "./git-repo.js";
import { agentRuns, claude, codex, hook, intentJson, makeCheckout, type Checkout } from "./helpers.js";

/**
 * The holder first (issue 49, item 5), end to end: the built adapter in
 * child processes against a real backend. Ana holds src/peer.ts and
 * src/held/; Bo has declared the scope docs/. Bo's Write, Edit, apply_patch
 * and shell writes of Ana's files are refused with a reason that opens with
 * Ana, her intent and what to do, not with "outside your declared scope"
 * (which once advised claiming Ana's file, a claim the service refuses).
 */

const REPO = "acme/holder";
const fx = backendForFile(REPO, "Name the holder", ["ana", "Claude Code"], ["bo", "Claude Code"]);
const ANA = { session: "", env: {} as Record<string, string> };
const BO = { session: "", env: {} as Record<string, string> };

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

const edit = (session: string, file: string) => ({
  ...claude.write(session, co.root, path.join(co.root, file)),
  tool_name: "Edit",
  tool_input: { file_path: path.join(co.root, file), old_string: "peer", new_string: "bo" },
});

beforeEach(async () => {
  const tag = Math.random().toString(36).slice(2, 8);
  ANA.session = `ana-${tag}`;
  BO.session = `bo-${tag}`;
  ANA.env = { ...claude.env, COHENT_AGENT_TOKEN: fx.tokens[0], COHENT_SESSION: ANA.session };
  BO.env = { ...claude.env, COHENT_AGENT_TOKEN: fx.tokens[1], COHENT_SESSION: BO.session };
  co = await makeCheckout(fx.backend.url, REPO);
  sh(co.root, "init", "-q", "-b", "main");
  sh(co.root, "config", "user.name", "Test");
  sh(co.root, "config", "user.email", "test@example.com");
  write(co.root, ".gitignore", ".cohent/runtime.json*\n");
  for (const [f, t] of Object.entries({
    "src/peer.ts": "export const peer = 0;\n",
    "src/held/x.ts": "x0\n",
    "docs/guide.md": "g0\n",
  }))
    write(co.root, f, t);
  sh(co.root, "add", "-A");
  sh(co.root, "commit", "-q", "-m", "initial");
  anaIntent = await startWork(ANA, "peer", ["src/peer.ts", "src/held/"]);
  await startWork(BO, "docs", ["docs/"]);
});

// Each case's intents end with it: the next case's claims start from nobody's.
afterEach(async () => {
  for (const who of [ANA, BO])
    await agentRuns(co, claude, who.session, ["checkpoint", "abandoned", "case over"], { env: who.env });
});

describe("a write into a peer's claim, with a declared scope", () => {
  it("an Edit, a Write, an apply_patch and shell writes name the holder first, then the scope", async () => {
    const ana = (paths: string, theirs: string) =>
      new RegExp(
        `^Cohent: (edit refused|shell write refused \\(this command writes [^)]*\\)): ${paths.replace(/[./]/g, "\\$&")} overlaps the scope of ana \\(Claude Code[^)]*\\): ${theirs.replace(/[./]/g, "\\$&")}, working on "Work on peer" \\(${anaIntent}\\)\\. Meanwhile, work on files outside`,
      );
    const refusals: [string, () => Promise<{ denied: string | null }>, RegExp][] = [
      ["Edit", () => hook(co, edit(BO.session, "src/peer.ts"), BO.env), ana("src/peer.ts", "src/peer.ts")],
      [
        "Write",
        () => hook(co, claude.write(BO.session, co.root, path.join(co.root, "src/held/y.ts")), BO.env),
        ana("src/held/y.ts", "src/held"),
      ],
      [
        "apply_patch",
        () => hook(co, { ...codex.patch(BO.session, co.root, patchOf("src/peer.ts")) }, BO.env),
        ana("src/peer.ts", "src/peer.ts"),
      ],
      [
        "sed -i",
        () => hook(co, claude.bash(BO.session, co.root, "sed -i 's/0/1/' src/peer.ts"), BO.env),
        ana("src/peer.ts", "src/peer.ts"),
      ],
      [
        "echo >",
        () => hook(co, claude.bash(BO.session, co.root, "echo x > src/held/x.ts"), BO.env),
        ana("src/held/x.ts", "src/held"),
      ],
    ];
    for (const [name, answer, expected] of refusals) {
      const { denied } = await answer();
      expect(denied, name).toMatch(expected);
      expect(denied, name).toContain("scope --queue docs ");
      expect(denied, name).toContain("request-release");
      expect(denied, name).toMatch(
        /Besides, src\/\S+ lies outside your declared scope \(docs\): the queue command above/,
      );
      // Claiming Ana's file is refused by the service: never advised.
      expect(denied, name).not.toContain("Declare a scope that covers it");
    }
    expect(readFileSync(path.join(co.root, "src/peer.ts"), "utf8")).toBe("export const peer = 0;\n");

    // A path nobody holds: "outside your declared scope", alone.
    const free = await hook(co, edit(BO.session, "lib/free.ts"), BO.env);
    expect(free.denied).toMatch(
      /^Cohent: edit refused: lib\/free\.ts lies outside your declared scope \(docs\)/,
    );
    expect(free.denied).not.toContain("ana");
  });

  it("before any intent, the holder comes first too", async () => {
    const fresh = { ...BO.env, COHENT_SESSION: `${BO.session}-new` };
    const r = await hook(co, edit(`${BO.session}-new`, "src/peer.ts"), fresh);
    expect(r.denied).toMatch(
      new RegExp(
        `^Cohent: edit refused: src/peer\\.ts overlaps the scope of ana \\(Claude Code[^)]*\\): src/peer\\.ts, working on "Work on peer" \\(${anaIntent}\\)`,
      ),
    );
    expect(r.denied).toMatch(
      /Also, before you queue: no prompt or intent has been announced for this session/,
    );
  });
});

const patchOf = (file: string) =>
  `*** Begin Patch\n*** Update File: ${file}\n@@\n-export const peer = 0;\n+export const peer = 2;\n*** End Patch\n`;
