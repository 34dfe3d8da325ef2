import { writeFileSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin } from "@cohent/backend";
import { startBackend, type TestBackend } from "../helpers/backend.js";
import { addPatch, agentRuns, claude, codex, hook, makeCheckout, run } from "./helpers.js";

/**
 * The built cohent.mjs as child processes against a real backend on
 * loopback: the same checkout shared by two sessions (Codex and Claude
 * Code), each with its own person's token.
 */

let server: TestBackend;
const REPO = "acme/shop";
let aliceToken: string;
let bobToken: string;

beforeAll(async () => {
  server = await startBackend();
  await server.addRepo(REPO, "Ship the new checkout");
  aliceToken = await server.issueToken(REPO, "alice", "Codex");
  bobToken = await server.issueToken(REPO, "bob", "Claude Code");
});
afterAll(async () => {
  await server?.stop();
});

const intentJson = (o: object) => JSON.stringify({ plan: [], components: [], dependsOn: [], deferred: [], requires: [], capabilities: [], state: "planned", ...o });

async function sessionByKey(key: string) {
  const rows = await admin.listSessions(server.deps, REPO);
  const row = rows.find((s) => s.key === key);
  if (!row) throw new Error(`no session ${key}`);
  return row;
}

describe("one agent: publish, intent, guarded edits, checkpoints", () => {
  it("publishes the prompt, refuses edits until intent, claims targets, and completes on Stop", async () => {
    const co = await makeCheckout(server.url, REPO);
    const env = { ...claude.env, COHENT_AGENT_TOKEN: bobToken };
    const S = "claude-sess-1";

    expect((await hook(co, claude.sessionStart(S, co.root), env)).stdout).toBe("");
    const prompt = await hook(co, claude.prompt(S, co.root, "Refactor checkout validation; my key is sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123"), env);
    expect(prompt.code).toBe(0);
    expect(prompt.context).toMatch(/^\[cohent plan\] wki_\w+: plan\./);
    expect(prompt.context).toContain("Ship the new checkout");

    const intentRow = (await sessionByKey(S)).intents[0]!;
    const stored = await server.deps.db.tx((tx) => tx.intent.findUnique({ where: { id: intentRow.id } }));
    expect(stored!.prompt).toContain("[REDACTED:anthropic]");
    expect(stored!.prompt).not.toContain("sk-ant-api03");
    expect(stored!.client).toBe("Claude Code");
    // The injected plan packet is acknowledged with exactly the characters injected.
    const plan = await server.deps.db.tx((tx) => tx.packet.findFirst({ where: { intentId: intentRow.id, kind: "plan" } }));
    expect(plan!.ackedChars).toBe(prompt.context!.length);

    // Plan state: a visible edit is refused, a read-only shell command is not.
    const early = await hook(co, claude.write(S, co.root, path.join(co.root, "src/checkout/validate.ts")), env);
    expect(early.denied).toMatch(/no structured intent/);
    expect((await hook(co, claude.bash(S, co.root, "git status"), env)).denied).toBeNull();
    expect((await hook(co, { ...claude.bash(S, co.root, "ls"), tool_name: "Read", tool_input: { file_path: "x" } }, env)).stdout).toBe("");

    const { pre, cmd } = await agentRuns(co, claude, S, ["intent", intentJson({ objective: "Refactor checkout validation", outputs: ["checkout-validation"] })], { env });
    expect(pre.denied).toBeNull();
    expect(cmd!.code).toBe(0);
    expect(cmd!.stdout).toMatch(/\[cohent intent\] wki_\w+: proceed/);

    const edit = await hook(co, claude.write(S, co.root, path.join(co.root, "src/checkout/validate.ts")), env);
    expect(edit.denied).toBeNull();
    const claim = await server.deps.db.tx((tx) => tx.claim.findUnique({ where: { intentId: intentRow.id } }));
    expect(JSON.parse(claim!.paths)).toEqual(["src/checkout/validate.ts"]);

    await hook(co, claude.write(S, co.root, path.join(co.root, "src/checkout/validate.ts"), "PostToolUse"), env);
    await hook(co, claude.stop(S, co.root), env);
    const closed = await server.deps.db.tx((tx) => tx.intent.findUnique({ where: { id: intentRow.id }, include: { checkpoints: { orderBy: { createdAt: "asc" } } } }));
    expect(closed!.state).toBe("completed");
    expect(closed!.checkpoints.map((c) => c.status)).toEqual(["working", "completed"]);
    expect(JSON.parse(closed!.checkpoints[1]!.paths!)).toEqual(["src/checkout/validate.ts"]);
  });
});
