import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { backendForFile } from "../helpers/backend.js";
import { signedInAdmin } from "../console/helpers.js";
import { sh, write } from "./git-repo.js";
import { agentRuns, claude, hook, intentJson, makeCheckout, type Checkout } from "./helpers.js";

/**
 * Every refusal the guard decides once it has asked the service reaches the
 * Control Room with its rule's name (issue 50, item 1), end to end: the
 * built hook in child processes against a real backend. Ana's write over a
 * file Bo changed since she read it is refused by the `stale-write` rule, a
 * write outside her declared scope by `outside-scope`: both are counted by
 * rule on the metrics API. A write of the guard's own files is refused
 * before any contact with the service, and stays uncounted.
 */

const REPO = "acme/refusal-report";
const fx = backendForFile(REPO, "Refusals by rule", ["ana", "Claude Code"], ["bo", "Claude Code"]);
const FILE = "src/x.ts";
const TEXT = Array.from({ length: 8 }, (_, i) => `export const v${i} = ${i};\n`).join("");

async function startWork(
  co: Checkout,
  env: Record<string, string>,
  session: string,
  x: string,
  scope: string[],
) {
  await hook(co, claude.prompt(session, co.root, `Work on ${x}`), env);
  const intent = intentJson({ objective: `Work on ${x}`, outputs: [`out-${x}`] });
  const r = await agentRuns(co, claude, session, ["intent", intent, "--json"], { env });
  expect(r.cmd?.code, r.pre.stdout + r.cmd?.stderr).toBe(0);
  if (scope.length) {
    const scoped = await agentRuns(co, claude, session, ["scope", ...scope], { env });
    expect(scoped.cmd!.code, scoped.cmd!.stdout + scoped.cmd!.stderr).toBe(0);
  }
}

describe("refusals reach the Control Room with their rule", () => {
  it("counts a stale write and a write outside the scope by rule, not a refusal made before any contact", async () => {
    const co = await makeCheckout(fx.backend.url, REPO);
    const abs = (f: string) => path.join(co.root, f);
    sh(co.root, "init", "-q", "-b", "main");
    sh(co.root, "config", "user.name", "Test");
    sh(co.root, "config", "user.email", "test@example.com");
    write(co.root, ".gitignore", ".cohent/runtime.json*\n");
    write(co.root, FILE, TEXT);
    write(co.root, "docs/guide.md", "g0\n");
    sh(co.root, "add", "-A");
    sh(co.root, "commit", "-q", "-m", "initial");
    const ana = "ana-rr";
    const bo = "bo-rr";
    const anaEnv = { ...claude.env, COHENT_AGENT_TOKEN: fx.tokens[0], COHENT_SESSION: ana };
    const boEnv = { ...claude.env, COHENT_AGENT_TOKEN: fx.tokens[1], COHENT_SESSION: bo };
    await startWork(co, boEnv, bo, "x", [FILE]);
    await startWork(co, anaEnv, ana, "docs", []);

    // Ana reads src/x.ts; Bo changes it with a guarded Write and completes.
    await hook(
      co,
      {
        ...claude.bash(ana, co.root, "x", "PostToolUse"),
        tool_name: "Read",
        tool_input: { file_path: abs(FILE) },
      },
      anaEnv,
    );
    const bosWrite = (event: string) => ({
      ...claude.write(bo, co.root, abs(FILE), event),
      tool_use_id: "toolu_b",
    });
    expect((await hook(co, bosWrite("PreToolUse"), boEnv)).denied).toBeNull();
    writeFileSync(abs(FILE), TEXT.replace("v4 = 4", 'v4 = "bo"'));
    await hook(co, bosWrite("PostToolUse"), boEnv);
    const done = await agentRuns(co, claude, bo, ["checkpoint", "completed", "x done"], { env: boEnv });
    expect(done.cmd?.code, done.cmd?.stderr).toBe(0);

    // Ana's write over it: the stale-write rule.
    const stale = await hook(co, claude.write(ana, co.root, abs(FILE)), anaEnv);
    expect(stale.denied).toContain("Read src/x.ts again");
    // A declared scope, and a write outside it: the outside-scope rule.
    const scoped = await agentRuns(co, claude, ana, ["scope", "docs/guide.md"], { env: anaEnv });
    expect(scoped.cmd?.code, scoped.cmd?.stderr).toBe(0);
    const outside = await hook(co, claude.write(ana, co.root, abs("src/y.ts")), anaEnv);
    expect(outside.denied).toMatch(/outside/i);
    // A write of the guard's own files: refused before the service is asked, so not reported.
    const own = await hook(co, claude.write(ana, co.root, abs(".cohent/project.json")), anaEnv);
    expect(own.denied).toContain("guard files");

    const admin = await signedInAdmin(fx.backend);
    const m = (await admin.get(`/api/console/repos/${REPO}/metrics?since=1h`)).body.data;
    expect(m.refusalsByRule).toEqual([
      { rule: "outside-scope", count: 1 },
      { rule: "stale-write", count: 1 },
    ]);
  }, 120_000);
});
