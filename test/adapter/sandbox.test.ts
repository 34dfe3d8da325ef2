import { execFileSync } from "node:child_process";
import path from "node:path";
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { backendForFile } from "../helpers/backend.js";
import { agentRuns, codex, hook, intentJson, makeCheckout, run, sandboxed } from "./helpers.js";
import { intentEnvelope } from "./intent-envelope.js";

/**
 * Codex's default sandbox: the agent's shell cannot open a socket, while
 * hooks run outside it. The command process here is started with a
 * preload that makes every connect fail with EPERM; the PreToolUse hook
 * runs as a normal process. The relay must carry the operation across.
 */

const REPO = "acme/sandbox";
const fx = backendForFile(REPO, "Sandboxed work", ["alice", "Codex"], ["bob", "Codex"]);

describe("the sandbox relay", () => {
  it("the JSON agent CLI with its request in a file is relayed too; from stdin it cannot be", async () => {
    const co = await makeCheckout(fx.backend.url, REPO);
    execFileSync("git", ["init", "-q"], { cwd: co.root }); // the agent CLI binds to a Git top-level
    const env = { COHENT_AGENT_TOKEN: fx.tokens[1] };
    await hook(co, codex.prompt("sbx-agent", co.root, "agent cli in the sandbox"), env);
    writeFileSync(
      path.join(co.root, "intent.json"),
      JSON.stringify({ intent: { objective: "Agent CLI in the sandbox", outputs: ["agent-cli-out"] } }),
    );
    const relayed = await agentRuns(co, codex, "sbx-agent", ["agent", "intent", "--input", "intent.json"], {
      env,
      commandNodeArgs: sandboxed,
    });
    expect(relayed.pre.denied).toBeNull();
    expect(relayed.cmd!.code, relayed.cmd!.stdout + relayed.cmd!.stderr).toBe(0);
    const envelope = intentEnvelope(relayed.cmd!.stdout, "proceed");
    const stored = await fx.backend.deps.db.prisma.$transaction((tx) =>
      tx.intent.findUnique({ where: { id: envelope.data.intentId } }),
    );
    expect(JSON.parse(stored!.record!).objective).toBe("Agent CLI in the sandbox");
    // A request on stdin is invisible to the hook: the sandboxed command reports it cannot reach the service.
    const args = ["agent", "context", "--input", "-"];
    expect(
      (await hook(co, codex.shell("sbx-agent", co.root, `node .cohent/cohent.mjs ${args.join(" ")}`), env))
        .denied,
    ).toBeNull();
    const fromStdin = await run(co, args, { env, nodeArgs: sandboxed, stdin: "{}" });
    expect(fromStdin.code).toBe(1);
    expect(JSON.parse(fromStdin.stdout).error.code).toBe("CONTROL_PLANE_UNREACHABLE");
  });

  it("the sandboxed command alone cannot reach the service (the stand-in sandbox is real)", async () => {
    const co = await makeCheckout(fx.backend.url, REPO);
    const env = { COHENT_AGENT_TOKEN: fx.tokens[0] };
    await hook(co, codex.prompt("sbx-0", co.root, "probe"), env);
    const direct = await run(co, ["checkpoint", "working", "direct"], { env, nodeArgs: sandboxed });
    expect(direct.code).toBe(1);
    expect(direct.stderr).toMatch(/CONTROL_PLANE_UNREACHABLE.*EPERM/);
    expect(direct.stderr).toContain("PreToolUse hook performs it outside the sandbox");
    // The same command without the sandbox reaches it.
    expect((await run(co, ["checkpoint", "working", "direct"], { env })).code).toBe(0);
  });

  it("intent, scope, checkpoint and context work through the PreToolUse hook, with the right exit codes", async () => {
    const peer = await makeCheckout(fx.backend.url, REPO);
    await hook(peer, codex.prompt("sbx-peer", peer.root, "Build the ledger"), {
      COHENT_AGENT_TOKEN: fx.tokens[1],
    });
    const p = await agentRuns(
      peer,
      codex,
      "sbx-peer",
      ["intent", intentJson({ objective: "Ledger", outputs: ["ledger"] })],
      { env: { COHENT_AGENT_TOKEN: fx.tokens[1] } },
    );
    expect(p.cmd!.code).toBe(0);

    const co = await makeCheckout(fx.backend.url, REPO);
    const env = { COHENT_AGENT_TOKEN: fx.tokens[0] };
    const S = "sbx-1";
    await hook(co, codex.prompt(S, co.root, "Build the ledger report"), env);

    const wait = await agentRuns(
      co,
      codex,
      S,
      [
        "intent",
        intentJson({ objective: "Ledger report", outputs: ["ledger-report"], dependsOn: ["ledger"] }),
      ],
      { env, commandNodeArgs: sandboxed },
    );
    expect(wait.pre.denied).toBeNull();
    expect(wait.cmd!.code).toBe(2);
    expect(wait.cmd!.stdout).toMatch(/: wait\./);

    const go = await agentRuns(
      co,
      codex,
      S,
      ["intent", intentJson({ objective: "Ledger report skeleton", outputs: ["report-skeleton"] }), "--json"],
      { env, commandNodeArgs: sandboxed },
    );
    expect(go.cmd!.code).toBe(0);
    const envelope = intentEnvelope(go.cmd!.stdout, "proceed");

    const scope = await agentRuns(co, codex, S, ["scope", "reports/ledger"], {
      env,
      commandNodeArgs: sandboxed,
    });
    expect(scope.cmd!.code).toBe(0);
    expect(scope.cmd!.stdout).toContain("Scope claimed: reports/ledger.");
    const claim = await fx.backend.deps.db.prisma.$transaction((tx) =>
      tx.claim.findUnique({ where: { intentId: envelope.data.intentId } }),
    );
    expect(JSON.parse(claim!.paths)).toEqual(["reports/ledger"]);

    const context = await agentRuns(co, codex, S, ["context"], { env, commandNodeArgs: sandboxed });
    expect(context.cmd!.code).toBe(0);
    expect(context.cmd!.stdout).toContain("Sandboxed work");
    expect(context.cmd!.stdout).toContain(`[cohent context] ${envelope.data.intentId}: proceed.`);

    const done = await agentRuns(co, codex, S, ["checkpoint", "completed", "report skeleton done"], {
      env,
      commandNodeArgs: sandboxed,
    });
    expect(done.cmd!.code).toBe(0);
    const intent = await fx.backend.deps.db.prisma.$transaction((tx) =>
      tx.intent.findUnique({ where: { id: envelope.data.intentId } }),
    );
    expect(intent!.state).toBe("completed");

    // Each relay is claimed once: nothing is left behind for a later command to pick up.
    const rt = JSON.parse(readFileSync(path.join(co.root, ".cohent", "runtime.json"), "utf8"));
    expect(rt.relays).toEqual([]);
  });

  it("binds each command to the session whose hook saw it, when two sessions share the checkout", async () => {
    const co = await makeCheckout(fx.backend.url, REPO);
    const envA = { COHENT_AGENT_TOKEN: fx.tokens[0] };
    const envB = { COHENT_AGENT_TOKEN: fx.tokens[1] };
    await hook(co, codex.prompt("sbx-A", co.root, "A's prompt"), envA);
    await hook(co, codex.prompt("sbx-B", co.root, "B's prompt"), envB);
    const b = await agentRuns(
      co,
      codex,
      "sbx-B",
      ["intent", intentJson({ objective: "B work", outputs: ["b-out"] }), "--json"],
      { env: envB, commandNodeArgs: sandboxed },
    );
    expect(b.cmd!.code).toBe(0);
    const rt = JSON.parse(readFileSync(path.join(co.root, ".cohent", "runtime.json"), "utf8"));
    expect(JSON.parse(b.cmd!.stdout).data.intentId).toBe(rt.sessions["sbx-B"].intentId);
    expect(rt.sessions["sbx-A"].action).toBe("plan");
  });
});
