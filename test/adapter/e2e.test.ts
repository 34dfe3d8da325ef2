import { writeFileSync, readFileSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { GUIDANCE } from "@cohent/protocol/actions";
import { admin, consoleOps } from "@cohent/backend";
import { backendForFile, startBackend } from "../helpers/backend.js";
import { addPatch, agentRuns, claude, codex, hook, intentJson, makeCheckout, run } from "./helpers.js";
import { intentEnvelope } from "./intent-envelope.js";

/**
 * The built cohent.mjs as child processes against a real backend on
 * loopback: the same checkout shared by two sessions (Codex and Claude
 * Code), each with its own person's token.
 */

const REPO = "acme/shop";
const fx = backendForFile(REPO, "Ship the new checkout", ["alice", "Codex"], ["bob", "Claude Code"]);

async function sessionByKey(key: string) {
  const rows = await admin.listSessions(fx.backend.deps, REPO);
  const row = rows.find((s) => s.key === key);
  if (!row) throw new Error(`no session ${key}`);
  return row;
}

describe("one agent: publish, intent, guarded edits, checkpoints", () => {
  it("publishes the prompt, refuses edits until intent, claims targets, and completes on Stop", async () => {
    const co = await makeCheckout(fx.backend.url, REPO);
    const env = { ...claude.env, COHENT_AGENT_TOKEN: fx.tokens[1] };
    const S = "claude-sess-1";

    expect((await hook(co, claude.sessionStart(S, co.root), env)).stdout).toBe("");
    const prompt = await hook(
      co,
      claude.prompt(
        S,
        co.root,
        "Refactor checkout validation; my key is sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123",
      ),
      env,
    );
    expect(prompt.code).toBe(0);
    expect(prompt.context).toMatch(/^\[cohent plan\] wki_\w+: plan\./);
    expect(prompt.context).toContain("Ship the new checkout");

    const intentRow = (await sessionByKey(S)).intents[0]!;
    const stored = await fx.backend.deps.db.prisma.$transaction((tx) =>
      tx.intent.findUnique({ where: { id: intentRow.id } }),
    );
    expect(stored!.prompt).toContain("[REDACTED:anthropic]");
    expect(stored!.prompt).not.toContain("sk-ant-api03");
    expect(stored!.client).toBe("Claude Code");
    // The injected plan packet is acknowledged with exactly the characters injected.
    const plan = await fx.backend.deps.db.prisma.$transaction((tx) =>
      tx.packet.findFirst({ where: { intentId: intentRow.id, kind: "plan" } }),
    );
    expect(plan!.ackedChars).toBe(prompt.context!.length);

    // Plan state: a visible edit is refused, a read-only shell command is not.
    const early = await hook(
      co,
      claude.write(S, co.root, path.join(co.root, "src/checkout/validate.ts")),
      env,
    );
    expect(early.denied).toMatch(/no structured intent/);
    expect((await hook(co, claude.bash(S, co.root, "git status"), env)).denied).toBeNull();
    expect(
      (
        await hook(
          co,
          { ...claude.bash(S, co.root, "ls"), tool_name: "Read", tool_input: { file_path: "x" } },
          env,
        )
      ).stdout,
    ).toBe("");

    const { pre, cmd } = await agentRuns(
      co,
      claude,
      S,
      ["intent", intentJson({ objective: "Refactor checkout validation", outputs: ["checkout-validation"] })],
      { env },
    );
    expect(pre.denied).toBeNull();
    expect(cmd!.code).toBe(0);
    expect(cmd!.stdout).toMatch(/\[cohent intent\] wki_\w+: proceed/);

    const edit = await hook(
      co,
      claude.write(S, co.root, path.join(co.root, "src/checkout/validate.ts")),
      env,
    );
    expect(edit.denied).toBeNull();
    const claim = await fx.backend.deps.db.prisma.$transaction((tx) =>
      tx.claim.findUnique({ where: { intentId: intentRow.id } }),
    );
    expect(JSON.parse(claim!.paths)).toEqual(["src/checkout/validate.ts"]);

    await hook(
      co,
      claude.write(S, co.root, path.join(co.root, "src/checkout/validate.ts"), "PostToolUse"),
      env,
    );
    await hook(co, claude.stop(S, co.root), env);
    const closed = await fx.backend.deps.db.prisma.$transaction((tx) =>
      tx.intent.findUnique({
        where: { id: intentRow.id },
        include: { checkpoints: { orderBy: { createdAt: "asc" } } },
      }),
    );
    expect(closed!.state).toBe("completed");
    expect(closed!.checkpoints.map((c) => c.status)).toEqual(["working", "completed"]);
    expect(JSON.parse(closed!.checkpoints[1]!.paths!)).toEqual(["src/checkout/validate.ts"]);
  });
});

describe("two sessions in one checkout", () => {
  it("answers wait and duplicate, refuses the colliding edit and scope with the peer named", async () => {
    const co = await makeCheckout(fx.backend.url, REPO);
    const A = "codex-sess-A";
    const B = "claude-sess-B";
    const envA = { ...codex.env, COHENT_AGENT_TOKEN: fx.tokens[0] };
    const envB = { ...claude.env, COHENT_AGENT_TOKEN: fx.tokens[1] };

    await hook(co, codex.sessionStart(A, co.root), envA);
    await hook(co, claude.sessionStart(B, co.root), envB);
    expect((await hook(co, codex.prompt(A, co.root, "Build the payments API"), envA)).context).toContain(
      "[cohent plan]",
    );
    expect((await hook(co, claude.prompt(B, co.root, "Build the payments UI"), envB)).context).toContain(
      "[cohent plan]",
    );

    const a = await agentRuns(
      co,
      codex,
      A,
      [
        "intent",
        intentJson({ objective: "Payments API", outputs: ["payments-api"], components: ["payments"] }),
      ],
      { env: envA },
    );
    expect(a.cmd!.code).toBe(0);

    // B depends on A's active output: wait, exit 2, and its edits are refused.
    const wait = await agentRuns(
      co,
      claude,
      B,
      [
        "intent",
        intentJson({ objective: "Payments UI", outputs: ["payments-ui"], dependsOn: ["payments-api"] }),
      ],
      { env: envB },
    );
    expect(wait.cmd!.code).toBe(2);
    expect(wait.cmd!.stdout).toMatch(/: wait\./);
    expect(wait.cmd!.stdout).toContain("Replan");
    const blocked = await hook(co, claude.write(B, co.root, path.join(co.root, "web/pay.tsx")), envB);
    expect(blocked.denied).toContain(`edit refused (wait): ${GUIDANCE.wait}`);

    // Same objective and output as A: duplicate, exit 2, in JSON form the v1 envelope.
    const dup = await agentRuns(
      co,
      claude,
      B,
      ["intent", intentJson({ objective: "Payments API", outputs: ["payments-api"] }), "--json"],
      { env: envB },
    );
    expect(dup.cmd!.code).toBe(2);
    const envelope = intentEnvelope(dup.cmd!.stdout, "duplicate");
    expect(envelope.meta.session.control).toBe("active");

    // B replans onto separate work and proceeds.
    const ok = await agentRuns(
      co,
      claude,
      B,
      ["intent", intentJson({ objective: "Payments UI shell", outputs: ["payments-ui-shell"] })],
      { env: envB },
    );
    expect(ok.cmd!.code).toBe(0);

    // A edits through an apply_patch (targets parsed from the patch): claimed automatically.
    const patchA = await hook(co, codex.patch(A, co.root, addPatch("src/payments/api.ts")), envA);
    expect(patchA.denied).toBeNull();

    // B's visible edit of the same file collides: refused, naming alice and her agent.
    const collide = await hook(co, claude.write(B, co.root, path.join(co.root, "src/payments/api.ts")), envB);
    expect(collide.denied).toMatch(/src\/payments\/api\.ts overlaps the scope of alice \(Codex gpt-5\.5\)/);
    expect(collide.denied).toContain("Payments API");

    // The heredoc form of apply_patch through the shell is an edit too.
    const heredoc = await hook(
      co,
      claude.bash(B, co.root, `apply_patch <<'EOF'\n${addPatch("src/payments/api.ts")}EOF`),
      envB,
    );
    expect(heredoc.denied).toMatch(/overlaps the scope of alice/);

    // An explicit scope that overlaps: exit 1, the peer named, the replacement rule stated.
    const scope = await agentRuns(co, claude, B, ["scope", "src/payments"], { env: envB });
    expect(scope.cmd!.code).toBe(1);
    expect(scope.cmd!.stdout).toContain(
      "- src/payments overlaps the scope of alice (Codex gpt-5.5): src/payments/api.ts",
    );
    expect(scope.cmd!.stdout).toContain("replaces your previous claim");

    // A non-overlapping scope is claimed; a write outside it is refused even though nobody holds that path.
    const mine = await agentRuns(co, claude, B, ["scope", "web/payments"], { env: envB });
    expect(mine.cmd!.code).toBe(0);
    expect(mine.cmd!.stdout).toContain("Scope claimed: web/payments.");
    expect(
      (await hook(co, claude.write(B, co.root, path.join(co.root, "web/payments/form.tsx")), envB)).denied,
    ).toBeNull();
    const catchesBefore = (await admin.metrics(fx.backend.deps, REPO)).pathGuardCatches;
    const outside = await hook(co, claude.write(B, co.root, path.join(co.root, "web/other.tsx")), envB);
    expect(outside.denied).toMatch(/web\/other\.tsx lies outside your declared scope \(web\/payments\)/);
    // The adapter reports the refusal it made locally, so the Control Room counts it as a path-guard catch.
    expect((await admin.metrics(fx.backend.deps, REPO)).pathGuardCatches).toBe(catchesBefore + 1);
    const reported = await fx.backend.deps.db.prisma.$transaction((tx) =>
      tx.guardCatch.findFirst({ where: { kind: "outside-scope" }, orderBy: { createdAt: "desc" } }),
    );
    expect(JSON.parse(reported!.paths)).toEqual(["web/other.tsx"]);

    // A shell command that visibly writes a path is held to the scope like an edit (issue 42).
    expect(
      (await hook(co, claude.bash(B, co.root, "sed -i s/a/b/ src/payments/api.ts"), envB)).denied,
    ).toMatch(
      /^Cohent: shell write refused .*src\/payments\/api\.ts lies outside your declared scope \(web\/payments\)/,
    );

    // The runtime keeps both sessions apart.
    const rt = JSON.parse(readFileSync(path.join(co.root, ".cohent", "runtime.json"), "utf8"));
    expect(rt.sessions[A].scope).toEqual(["src/payments/api.ts"]);
    expect(rt.sessions[B].scope).toEqual(["web/payments"]);
    expect(rt.sessions[B].explicitScope).toBe(true);
  });

  it("a Stop after wait or duplicate checkpoints blocked, never completed; an unchanged PreToolUse leaves runtime.json alone", async () => {
    const co = await makeCheckout(fx.backend.url, REPO);
    const [A, B, C] = ["codex-stop-A", "claude-stop-B", "claude-stop-C"];
    const envA = { ...codex.env, COHENT_AGENT_TOKEN: fx.tokens[0] };
    const envB = { ...claude.env, COHENT_AGENT_TOKEN: fx.tokens[1] };
    await hook(co, codex.prompt(A, co.root, "Build the ledger core"), envA);
    expect(
      (
        await agentRuns(
          co,
          codex,
          A,
          ["intent", intentJson({ objective: "Ledger core", outputs: ["ledger-core"] })],
          { env: envA },
        )
      ).cmd!.code,
    ).toBe(0);

    const runtime = path.join(co.root, ".cohent", "runtime.json");
    const stopped = async (session: string, intent: object, action: string) => {
      await hook(co, claude.prompt(session, co.root, "Work on the ledger"), envB);
      const r = await agentRuns(co, claude, session, ["intent", intentJson(intent)], { env: envB });
      expect(r.cmd!.stdout).toMatch(new RegExp(`: ${action}\\.`));
      await hook(co, claude.stop(session, co.root), envB);
      const intentId = JSON.parse(readFileSync(runtime, "utf8")).sessions[session].intentId;
      const row = await fx.backend.deps.db.prisma.$transaction((tx) =>
        tx.intent.findUnique({ where: { id: intentId }, include: { checkpoints: true } }),
      );
      expect(row!.state).not.toBe("completed");
      expect(row!.checkpoints.map((c) => [c.status, c.summary])).toEqual([
        ["blocked", `Stopped on ${action}.`],
      ]);
    };
    await stopped(B, { objective: "Ledger UI", outputs: ["ledger-ui"], dependsOn: ["ledger-core"] }, "wait");
    await stopped(C, { objective: "Ledger core", outputs: ["ledger-core"] }, "duplicate");

    // A shell call that changes nothing (no poll due, same control state) neither writes nor replaces the file.
    await hook(co, codex.shell(A, co.root, "git status"), { ...envA, COHENT_POLL_EVERY_MS: "600000" });
    const before = statSync(runtime);
    expect(
      (await hook(co, codex.shell(A, co.root, "git status"), { ...envA, COHENT_POLL_EVERY_MS: "600000" }))
        .denied,
    ).toBeNull();
    const after = statSync(runtime);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
  });

  it("a command outside any hook refuses when several sessions share the checkout", async () => {
    const co = await makeCheckout(fx.backend.url, REPO);
    await hook(co, codex.sessionStart("s-one", co.root), { COHENT_AGENT_TOKEN: fx.tokens[0] });
    await hook(co, claude.sessionStart("s-two", co.root), {
      ...claude.env,
      COHENT_AGENT_TOKEN: fx.tokens[1],
    });
    const r = await run(co, ["checkpoint", "working", "hi"], { env: { COHENT_AGENT_TOKEN: fx.tokens[0] } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/2 agent sessions share this checkout/);
    expect(r.stderr).toContain("s-one");
  });
});

describe("the kill switch and the failure rows", () => {
  it("a pause from the API refuses the next edit and shell call, but not the adapter's own command", async () => {
    const co = await makeCheckout(fx.backend.url, REPO);
    const env = { ...codex.env, COHENT_AGENT_TOKEN: fx.tokens[0] };
    const S = "codex-pause";
    await hook(co, codex.prompt(S, co.root, "Tidy the cart"), env);
    await agentRuns(
      co,
      codex,
      S,
      ["intent", intentJson({ objective: "Tidy cart", outputs: ["cart-tidy"] })],
      { env },
    );
    expect((await hook(co, codex.patch(S, co.root, addPatch("src/cart.ts")), env)).denied).toBeNull();

    const ses = await sessionByKey(S);
    await admin.controlSession(fx.backend.deps, {
      sessionId: ses.id,
      kind: "pause",
      actor: "test",
      reason: "hold on",
    });

    const edit = await hook(co, codex.patch(S, co.root, addPatch("src/cart.ts")), env);
    expect(edit.denied).toMatch(/paused from the Cohent Control Room \(hold on\)/);
    const shell = await hook(co, codex.shell(S, co.root, "git commit -am wip"), env);
    expect(shell.denied).toMatch(/paused/);
    const stdin = await hook(
      co,
      { ...codex.shell(S, co.root, ""), tool_name: "write_stdin", tool_input: { chars: "y\n" } },
      env,
    );
    expect(stdin.denied).toMatch(/paused/);
    const mcp = await hook(
      co,
      { ...codex.shell(S, co.root, ""), tool_name: "mcp__github__create_pr", tool_input: { title: "x" } },
      env,
    );
    expect(mcp.denied).toMatch(/paused/);
    // Cohent's own MCP tools are exempt like its command: the service decides for them.
    const ownMcp = await hook(
      co,
      {
        ...codex.shell(S, co.root, ""),
        tool_name: "mcp__cohent__checkpoint",
        tool_input: { status: "blocked", summary: "paused" },
      },
      env,
    );
    expect(ownMcp.denied).toBeNull();

    // The adapter's own command stays exempt: a paused agent can still report that it stopped,
    // while the server itself refuses a new claim.
    const own = await agentRuns(co, codex, S, ["checkpoint", "blocked", "paused by a human"], { env });
    expect(own.pre.denied).toBeNull();
    expect(own.cmd!.code).toBe(0);
    const claim = await agentRuns(co, codex, S, ["scope", "src/other.ts"], { env });
    expect(claim.pre.denied).toBeNull();
    expect(claim.cmd!.code).toBe(1);
    expect(claim.cmd!.stderr).toContain("SESSION_PAUSED");
    // A chained variant is not the adapter's command: refused like any shell call.
    expect(
      (await hook(co, codex.shell(S, co.root, "node .cohent/cohent.mjs context && git push"), env)).denied,
    ).toMatch(/paused/);

    await admin.controlSession(fx.backend.deps, { sessionId: ses.id, kind: "resume", actor: "test" });
    expect((await hook(co, codex.shell(S, co.root, "git status"), env)).denied).toBeNull();
  });

  it("the backend being down blocks edits and shell calls, with a reason that says how to fix it", async () => {
    const down = await startBackend();
    const url = down.url;
    await down.stop();
    const co = await makeCheckout(url, REPO);
    const env = { ...claude.env, COHENT_AGENT_TOKEN: fx.tokens[1] };
    const prompt = await hook(co, claude.prompt("s-down", co.root, "anything"), env);
    expect(prompt.code).toBe(0);
    expect(prompt.context).toMatch(/CONTROL_PLANE_UNREACHABLE/);
    const shell = await hook(co, claude.bash("s-down", co.root, "ls"), env);
    expect(shell.denied).toMatch(/cannot be reached .*ECONNREFUSED.*Start it or fix the service URL/);
    const edit = await hook(co, claude.write("s-down", co.root, path.join(co.root, "a.ts")), env);
    expect(edit.denied).toMatch(/cannot be reached/);
    const read = await hook(
      co,
      { ...claude.bash("s-down", co.root, "ls"), tool_name: "Grep", tool_input: { pattern: "x" } },
      env,
    );
    expect(read.stdout).toBe("");
  });

  it("an unusable configuration blocks both kinds", async () => {
    const bare = await makeCheckout(null, REPO);
    rmSync(path.join(bare.root, ".cohent", "project.json"), { force: true });
    const noProject = await hook(bare, claude.bash("s-x", bare.root, "ls"), claude.env);
    expect(noProject.denied).toMatch(/not usable in this checkout: No \.cohent\/project\.json/);

    const unpaired = await makeCheckout(fx.backend.url, REPO);
    const noToken = await hook(unpaired, claude.bash("s-y", unpaired.root, "ls"), claude.env);
    expect(noToken.denied).toMatch(/no Cohent credential for acme\/shop.*bootstrap --approve/);

    const revoked = await hook(unpaired, claude.bash("s-y", unpaired.root, "ls"), {
      ...claude.env,
      COHENT_AGENT_TOKEN: "coh_not-a-real-token-at-all-000000",
    });
    // The kill-switch read is authenticated, so a bad token blocks even a shell command before any intent.
    expect(revoked.denied).toMatch(/refused this machine's credential.*bootstrap --approve/);
    const publish = await hook(unpaired, claude.prompt("s-y", unpaired.root, "hi"), {
      ...claude.env,
      COHENT_AGENT_TOKEN: "coh_not-a-real-token-at-all-000000",
    });
    expect(publish.context).toMatch(/UNAUTHENTICATED/);

    writeFileSync(path.join(unpaired.root, ".cohent", "project.json"), "{not json");
    expect(
      (
        await hook(unpaired, claude.write("s-z", unpaired.root, path.join(unpaired.root, "a.ts")), {
          ...claude.env,
          COHENT_AGENT_TOKEN: fx.tokens[1],
        })
      ).denied,
    ).toMatch(/not valid JSON/);
  });
});

describe("Claude Code sub-agents", () => {
  it("a background sub-agent works under the parent's intent and scope after the main Stop; the intent completes at its SubagentStop", async () => {
    const co = await makeCheckout(fx.backend.url, REPO);
    const usage = path.join(co.home, "usage.jsonl");
    const env = { ...claude.env, COHENT_AGENT_TOKEN: fx.tokens[1], COHENT_USAGE_LOG: usage };
    const S = "claude-sub";
    const runtime = path.join(co.root, ".cohent", "runtime.json");
    const state = () => JSON.parse(readFileSync(runtime, "utf8")).sessions[S];
    const sub = (agent: string, payload: object) => ({
      ...payload,
      agent_id: agent,
      agent_type: "general-purpose",
    });
    const intentState = async () =>
      (await fx.backend.deps.db.prisma.$transaction((tx) =>
        tx.intent.findUnique({ where: { id: state().intentId } }),
      ))!.state;

    await hook(co, claude.prompt(S, co.root, "Build the feature"), env);
    await agentRuns(co, claude, S, ["intent", intentJson({ objective: "Feature", outputs: ["feature"] })], {
      env,
    });
    await agentRuns(co, claude, S, ["scope", "src/feature"], { env });
    const spawn = {
      ...claude.bash(S, co.root, "x"),
      tool_name: "Agent",
      tool_input: { description: "d", prompt: "p", run_in_background: true },
    };
    expect((await hook(co, spawn, env)).denied).toBeNull();
    expect(state().subagents).toEqual({ ids: [], pending: 1 });

    expect(
      (await hook(co, sub("ag1", claude.write(S, co.root, path.join(co.root, "src/feature/a.ts"))), env))
        .denied,
    ).toBeNull();
    // Claude Code fires the main agent's Stop while the background sub-agent still works: held, the intent stays open.
    await hook(co, claude.stop(S, co.root), env);
    expect(state().subagents).toEqual({ ids: ["ag1"], pending: 0, stopHeld: true });
    expect(await intentState()).not.toBe("completed");
    expect(
      (await hook(co, sub("ag1", claude.write(S, co.root, path.join(co.root, "src/feature/b.ts"))), env))
        .denied,
    ).toBeNull();
    expect(
      (await hook(co, sub("ag1", claude.write(S, co.root, path.join(co.root, "docs/x.md"))), env)).denied,
    ).toMatch(/docs\/x\.md lies outside your declared scope \(src\/feature\)/);
    // The refusal is recorded with the sub-agent's id, and the Control Room names the sub-agent on the intent.
    const work = (await consoleOps.repoOverview(fx.backend.deps, REPO)).work.find(
      (w) => w.intentId === state().intentId,
    )!;
    expect(work.subagents).toEqual([
      expect.objectContaining({ agentId: "ag1", refusals: 1, lastKind: "outside-scope" }),
    ]);

    // Two more sub-agents whose first calls run in parallel: both count (SessionFile.update re-applies under the lock).
    await hook(co, spawn, env);
    await hook(co, spawn, env);
    await Promise.all(
      ["ag2", "ag3"].map((a) => hook(co, sub(a, claude.bash(S, co.root, "git status")), env)),
    );
    expect(state().subagents.ids.sort()).toEqual(["ag1", "ag2", "ag3"]);
    expect(state().subagents.pending).toBe(0);
    // A known sub-agent's call that changes nothing writes nothing.
    const quiet = { ...env, COHENT_POLL_EVERY_MS: "600000" };
    await hook(co, sub("ag2", claude.bash(S, co.root, "git status")), quiet);
    const before = statSync(runtime);
    await hook(co, sub("ag2", claude.bash(S, co.root, "git status")), quiet);
    expect([statSync(runtime).ino, statSync(runtime).mtimeMs]).toEqual([before.ino, before.mtimeMs]);

    for (const a of ["ag2", "ag3"])
      await hook(co, sub(a, { ...claude.stop(S, co.root), hook_event_name: "SubagentStop" }), env);
    expect(await intentState()).not.toBe("completed");
    await hook(co, sub("ag1", { ...claude.stop(S, co.root), hook_event_name: "SubagentStop" }), env);
    expect(state().subagents).toBeUndefined();
    expect(await intentState()).toBe("completed");

    // The usage ledger names the sub-agent of each of its calls, and only those.
    const rows = readFileSync(usage, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(rows.filter((r) => r.agentId === "ag1").map((r) => r.op)).toEqual([
      "hook:PreToolUse",
      "hook:PreToolUse",
      "hook:PreToolUse",
      "hook:SubagentStop",
    ]);
    expect(rows.find((r) => r.op === "hook:Stop").agentId).toBeUndefined();
  });

  it("Claude Code 2.1.332 wakes a stopped sub-agent when its own background command ends: the intent stays open through its SubagentStop and the parent's task notification, and completes at its last stop", async () => {
    // The payloads as the real client sent them (test/clients scenario subagent-late, hooks logged).
    const co = await makeCheckout(fx.backend.url, REPO);
    const env = { ...claude.env, COHENT_AGENT_TOKEN: fx.tokens[1] };
    const S = "claude-wake";
    const state = () =>
      JSON.parse(readFileSync(path.join(co.root, ".cohent", "runtime.json"), "utf8")).sessions[S];
    const intent = async () =>
      (await fx.backend.deps.db.prisma.$transaction((tx) =>
        tx.intent.findUnique({ where: { id: state().intentId } }),
      ))!;
    const A = "a11af1961474b3b94";
    const sub = (payload: object) => ({ ...payload, agent_id: A, agent_type: "general-purpose" });
    const task = (id: string, type: string) => ({ id, type, status: "running", description: id });
    const stopWith = (event: string, tasks: object[]) => ({
      ...claude.stop(S, co.root),
      hook_event_name: event,
      background_tasks: tasks,
      session_crons: [],
    });
    const write = async (file: string) =>
      (await hook(co, sub(claude.write(S, co.root, path.join(co.root, file))), env)).denied;

    await hook(co, claude.prompt(S, co.root, "Build the feature"), env);
    await agentRuns(co, claude, S, ["intent", intentJson({ objective: "Feature", outputs: ["feature"] })], {
      env,
    });
    await agentRuns(co, claude, S, ["scope", "src/feature"], { env });
    const first = state().intentId;
    await hook(co, { ...claude.bash(S, co.root, "x"), tool_name: "Agent", tool_input: { prompt: "p" } }, env);
    await hook(co, stopWith("Stop", [task(A, "subagent")]), env);
    expect(await write("src/feature/a.ts")).toBeNull();
    await hook(
      co,
      sub({
        ...claude.bash(S, co.root, "sleep 5", "PostToolUse"),
        tool_response: { stdout: "", stderr: "", backgroundTaskId: "bv2ytt223" },
      }),
      env,
    );
    // Its turn ends while its command runs: parked, not done.
    await hook(co, sub(stopWith("SubagentStop", [task(A, "subagent"), task("bv2ytt223", "shell")])), env);
    expect((await intent()).state).not.toBe("completed");
    // The parent's task notification is not a new prompt: nothing is published, the intent stays.
    const notice = await hook(
      co,
      claude.prompt(S, co.root, `<task-notification>\n<task-id>${A}</task-id>\n<status>completed</status>`),
      env,
    );
    expect(notice.context).toBeNull();
    expect(state().intentId).toBe(first);
    await hook(co, stopWith("Stop", [task("bv2ytt223", "shell")]), env);
    expect((await intent()).state).not.toBe("completed");
    // Woken: its writes are held to the scope, not refused as completed.
    expect(await write("src/feature/b.ts")).toBeNull();
    expect(await write("docs/x.md")).toMatch(/docs\/x\.md lies outside your declared scope \(src\/feature\)/);
    await hook(co, sub(stopWith("SubagentStop", [task(A, "subagent")])), env);
    expect((await intent()).state).toBe("completed");
    expect(state().subagents).toBeUndefined();
  });
});
