import path from "node:path";
import { describe, expect, it } from "vitest";
import { backendForFile } from "../helpers/backend.js";
import { sh, write } from "./git-repo.js";
import { agentRuns, claude, hook, intentJson, makeCheckout } from "./helpers.js";
import { whyEnvelope, whyText } from "../../adapter/src/transports/why.js";
import { aggregate, readUsage } from "../../client/src/state/usage-report.js";

/**
 * Why was I refused (issue 50, item 4), end to end: the built adapter in
 * child processes against a real backend. Ana holds src/peer.ts; Bo, with
 * the scope docs/, writes it and runs a Git command over it. Each refusal
 * is kept in Bo's session with the rule that gave it, the facts it read and
 * what to do (`why` prints them), and the usage ledger's row names the rule
 * (`doctor --cost` counts them by rule).
 */

const REPO = "acme/why";
const fx = backendForFile(REPO, "Why refused", ["ana", "Claude Code"], ["bo", "Claude Code"]);

describe("a refusal's rule, kept for why and the ledger", () => {
  it("Bo's refused Write and git stash: why names outside-scope and git-refused, the ledger too", async () => {
    const tag = Math.random().toString(36).slice(2, 8);
    const co = await makeCheckout(fx.backend.url, REPO);
    const ledger = path.join(co.home, "usage.jsonl");
    const ana = {
      session: `ana-${tag}`,
      env: { ...claude.env, COHENT_AGENT_TOKEN: fx.tokens[0], COHENT_SESSION: `ana-${tag}` },
    };
    const bo = {
      session: `bo-${tag}`,
      env: {
        ...claude.env,
        COHENT_AGENT_TOKEN: fx.tokens[1],
        COHENT_SESSION: `bo-${tag}`,
        COHENT_USAGE_LOG: ledger,
      },
    };
    sh(co.root, "init", "-q", "-b", "main");
    sh(co.root, "config", "user.name", "Test");
    sh(co.root, "config", "user.email", "test@example.com");
    write(co.root, ".gitignore", ".cohent/runtime.json*\n");
    write(co.root, "src/peer.ts", "export const peer = 0;\n");
    write(co.root, "docs/guide.md", "g0\n");
    sh(co.root, "add", "-A");
    sh(co.root, "commit", "-q", "-m", "initial");
    for (const [who, scope] of [
      [ana, "src/peer.ts"],
      [bo, "docs/"],
    ] as const) {
      await hook(co, claude.prompt(who.session, co.root, `Work on ${scope}`), who.env);
      const intent = intentJson({ objective: `Work on ${scope}`, outputs: [`out-${who.session}`] });
      await agentRuns(co, claude, who.session, ["intent", intent, "--json"], { env: who.env });
      const scoped = await agentRuns(co, claude, who.session, ["scope", scope], { env: who.env });
      expect(scoped.cmd!.code, scoped.cmd!.stdout + scoped.cmd!.stderr).toBe(0);
    }
    // Ana's uncommitted change, which Bo's stash would take.
    write(co.root, "src/peer.ts", "export const peer = 1;\n");

    const w = await hook(co, claude.write(bo.session, co.root, path.join(co.root, "src/peer.ts")), bo.env);
    expect(w.denied).toMatch(/^Cohent: edit refused: src\/peer\.ts overlaps the scope of ana/);
    const g = await hook(co, claude.bash(bo.session, co.root, "git stash"), bo.env);
    expect(g.denied).toContain("ana");

    const envelope = whyEnvelope(["why"], co.root, undefined, { ...process.env, COHENT_SESSION: bo.session });
    expect(envelope.ok).toBe(true);
    const refusals = (envelope as any).data.refusals;
    expect(refusals.map((r: any) => [r.rule, r.code, r.tool])).toEqual([
      ["outside-scope", "outsideScope", "Write"],
      ["git-refused", "gitRefused", "Bash"],
    ]);
    expect(refusals[0].facts).toMatchObject({
      targets: "src/peer.ts",
      scope: "docs (declared)",
      peers: expect.stringMatching(/^ana \(wki_\w+\) holds src\/peer\.ts$/),
    });
    // A peer holds it: the advice is the holder's first (queue, work elsewhere, ask), then the scope's.
    expect(refusals[0].todo).toMatch(/^Work elsewhere, queue .* Then: Declare a scope/);
    expect(refusals[1].facts).toMatchObject({ command: "git stash", git: "would take src/peer.ts" });
    expect(refusals[0].reason).toBe(w.denied!.replace(/^Cohent: /, ""));
    const text = whyText(envelope);
    expect(text).toContain("Write refused by rule outside-scope (outsideScope)");
    expect(text).toContain("Bash refused by rule git-refused (gitRefused)");
    expect(text).toContain("what to do: Work elsewhere, queue");

    const rows = readUsage(ledger).filter((r) => r.op === "hook:PreToolUse" && !r.ok);
    expect(rows.map((r) => [r.ok, r.code, r.rule])).toEqual([
      [false, "DENIED", "outside-scope"],
      [false, "DENIED", "git-refused"],
    ]);
    const report = aggregate(readUsage(ledger), ledger);
    expect(report.by.rule.map((g) => [g.key, g.calls])).toEqual([
      ["outside-scope", 1],
      ["git-refused", 1],
    ]);
    // The command itself, through Bo's shell tool: his hook binds it to his session (no COHENT_SESSION in its environment).
    const { COHENT_SESSION: _, ...boEnv } = bo.env;
    const cmd = await agentRuns(co, claude, bo.session, ["why"], { env: boEnv });
    expect(cmd.pre.denied).toBeNull();
    expect(cmd.cmd!.code, cmd.cmd!.stderr).toBe(0);
    expect(cmd.cmd!.stdout.trim()).toBe(whyText(envelope));
    if (process.env.H50_SHOW) console.log(cmd.cmd!.stdout);
    // Ana, never refused, has nothing to show.
    const none = whyEnvelope(["why"], co.root, undefined, { ...process.env, COHENT_SESSION: ana.session });
    expect(whyText(none)).toBe(`No refusal kept for session ${ana.session}.`);
  });
});
