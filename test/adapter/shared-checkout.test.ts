import { beforeEach, describe, expect, it } from "vitest";
import { agentClient, backendForFile } from "../helpers/backend.js";
import { sh, snapshot, write } from "./git-repo.js";
import {
  agentRuns,
  claude,
  codex,
  hook,
  intentJson,
  makeCheckout,
  run,
  sandboxed,
  type Checkout,
} from "./helpers.js";

/**
 * Two sessions share one checkout against a real backend and the built
 * adapter: Ana (Codex, token alice, scope src/a) and Bo (Claude Code, token
 * bob, scope src/b). Bo has staged work, unstaged work on top of it and an
 * untracked file. Ana's commands run in a process that cannot open a socket
 * (Codex's sandbox), so `commit` goes through the PreToolUse hook's relay.
 */

const REPO = "acme/shared";
const fx = backendForFile(REPO, "One checkout, two agents", ["alice", "Codex"], ["bob", "Claude Code"]);
const ANA = { env: { COHENT_AGENT_TOKEN: "" }, session: "ana-1" };
const BO = { env: { COHENT_AGENT_TOKEN: "" }, session: "bo-1" };

let co: Checkout;
let anaIntent: string;
let boIntent: string;

/** A session's prompt, its intent ("Feature X", output feature-x) and its scope, as the agent would run them. */
async function startWork(
  client: typeof codex | typeof claude,
  who: typeof ANA,
  x: string,
  scope: string,
): Promise<string> {
  await hook(co, client.prompt(who.session, co.root, `Build feature ${x}`), { ...client.env, ...who.env });
  const intent = intentJson({ objective: `Feature ${x}`, outputs: [`feature-${x.toLowerCase()}`] });
  const r = await agentRuns(co, client, who.session, ["intent", intent, "--json"], { env: who.env });
  const intentId = JSON.parse(r.cmd!.stdout).data.intentId;
  expect((await agentRuns(co, client, who.session, ["scope", scope], { env: who.env })).cmd!.code).toBe(0);
  return intentId;
}

/** A committed checkout with .cohent/ in it, as `cohent init` leaves one; both agents have an intent and a scope. */
beforeEach(async () => {
  ANA.env.COHENT_AGENT_TOKEN = fx.tokens[0];
  BO.env.COHENT_AGENT_TOKEN = fx.tokens[1];
  co = await makeCheckout(fx.backend.url, REPO);
  sh(co.root, "init", "-q", "-b", "main");
  sh(co.root, "config", "user.name", "Test");
  sh(co.root, "config", "user.email", "test@example.com");
  sh(co.root, "config", "commit.gpgsign", "false");
  write(co.root, ".gitignore", ".cohent/runtime.json*\n");
  for (const [f, t] of Object.entries({ "src/a/x.ts": "a1\n", "src/b/y.ts": "b1\n", "README.md": "r1\n" }))
    write(co.root, f, t);
  sh(co.root, "add", "-A");
  sh(co.root, "commit", "-q", "-m", "initial");

  anaIntent = await startWork(codex, ANA, "A", "src/a");
  boIntent = await startWork(claude, BO, "B", "src/b");

  // Ana: a change and a new file. Bo: staged, edited again, and an untracked file.
  write(co.root, "src/a/x.ts", "a2\n");
  write(co.root, "src/a/new.ts", "new\n");
  write(co.root, "src/b/y.ts", "b2\n");
  sh(co.root, "add", "src/b/y.ts");
  write(co.root, "src/b/y.ts", "b3\n");
  write(co.root, "src/b/z.ts", "z\n");
});

const committed = (rev: string) =>
  sh(co.root, "show", "--name-only", "--format=", rev).trim().split("\n").filter(Boolean).sort();

describe("sharing one checkout", () => {
  it("refuses Ana's sweeping git add -A && git commit through the hook, naming Bo's paths, and reports a guard catch", async () => {
    const before = { ...snapshot(co.root, "."), head: sh(co.root, "rev-parse", "HEAD") };
    const pre = await hook(
      co,
      codex.shell(ANA.session, co.root, "git add -A && git commit -m 'ship it'"),
      ANA.env,
    );
    expect(pre.denied).not.toBeNull();
    expect(pre.denied).toContain("bob");
    expect(pre.denied).toContain(boIntent);
    expect(pre.denied).toContain("src/b/y.ts");
    expect(pre.denied).toContain("src/b/z.ts");
    expect(pre.denied).not.toContain("src/a/x.ts,");
    expect(pre.denied).toContain("node .cohent/cohent.mjs commit -m 'ship it'");
    // The hook only looked: the tree, the index and HEAD are as they were.
    expect({ ...snapshot(co.root, "."), head: sh(co.root, "rev-parse", "HEAD") }).toEqual(before);
    const catches = await fx.backend.deps.db.prisma.$transaction((tx) =>
      tx.guardCatch.findMany({ where: { intentId: anaIntent } }),
    );
    expect(catches.map((c) => c.kind)).toEqual(["git-peer-changes"]);
    expect(JSON.parse(catches[0]!.paths).sort()).toEqual(["src/b/y.ts", "src/b/z.ts"]);

    // Git commands that take only Ana's own paths, and ordinary shell commands, pass.
    expect(
      (await hook(co, codex.shell(ANA.session, co.root, "git add src/a && git status"), ANA.env)).denied,
    ).toBeNull();
    expect(
      (await hook(co, codex.shell(ANA.session, co.root, "ls -la && cat README.md"), ANA.env)).denied,
    ).toBeNull();
    // Bo's own sweep would take Ana's changes: refused the other way round.
    const bo = await hook(co, claude.bash(BO.session, co.root, "git commit -am wip"), {
      ...claude.env,
      ...BO.env,
    });
    expect(bo.denied).toContain("alice");
    expect(bo.denied).toContain("src/a/x.ts");
  });

  it("commit -m (sandboxed, through the hook's relay) commits only Ana's paths with the trailers and leaves Bo's staged and unstaged work exactly as it was", async () => {
    const bo = snapshot(co.root, "src/b");
    const r = await agentRuns(co, codex, ANA.session, ["commit", "-m", "Feature A: x and new"], {
      env: ANA.env,
      commandNodeArgs: sandboxed,
    });
    expect(r.pre.denied).toBeNull();
    expect(r.cmd!.code, r.cmd!.stdout + r.cmd!.stderr).toBe(0);
    const hash = sh(co.root, "rev-parse", "HEAD").trim();
    expect(r.cmd!.stdout).toContain(`Committed ${hash}: src/a/new.ts, src/a/x.ts.`);
    expect(r.cmd!.stdout).toContain(`src/b/y.ts, src/b/z.ts (bob, ${boIntent})`);
    expect(committed("HEAD")).toEqual(["src/a/new.ts", "src/a/x.ts"]);
    const message = sh(co.root, "log", "-1", "--format=%B");
    expect(message).toContain("Feature A: x and new");
    expect(message).toContain(`Cohent-Intent: ${anaIntent}`);
    expect(message).toContain("Cohent-Person: alice");
    expect(message).toContain("Cohent-Client: Codex");
    expect(snapshot(co.root, "src/b")).toEqual(bo);
    expect(sh(co.root, "status", "--porcelain", "--", "src/a")).toBe("");

    // The commit is a checkpoint of Ana's intent; the claim stays; the Control Room and the recap show it.
    const cps = await fx.backend.deps.db.prisma.$transaction((tx) =>
      tx.checkpoint.findMany({ where: { intentId: anaIntent, source: { startsWith: "commit:" } } }),
    );
    expect(cps.map((c) => [c.source, JSON.parse(c.paths!)])).toEqual([
      [`commit:${hash}`, ["src/a/new.ts", "src/a/x.ts"]],
    ]);
    const claim = await fx.backend.deps.db.prisma.$transaction((tx) =>
      tx.claim.findUnique({ where: { intentId: anaIntent } }),
    );
    expect(JSON.parse(claim!.paths)).toEqual(["src/a"]);
    const { repoOverview } = await import("../../backend/src/operations/people/overview.js");
    const overview = await repoOverview(fx.backend.deps, REPO);
    const work = overview.work.find((w) => w.intentId === anaIntent)!;
    expect(work.commits).toMatchObject([
      {
        hash,
        paths: ["src/a/new.ts", "src/a/x.ts"],
        summary: `Committed ${hash.slice(0, 12)}: Feature A: x and new`,
      },
    ]);
    expect(overview.work.find((w) => w.intentId === boIntent)!.commits).toEqual([]);
    const { recap, renderRecap } = await import("../../backend/src/operations/people/recap.js");
    const text = renderRecap(await recap(fx.backend.deps, REPO, new Date(Date.now() - 3_600_000)));
    expect(text).toContain(`commit ${hash.slice(0, 12)}`);

    // Nothing of Ana's left: a second commit says so and changes nothing.
    const again = await agentRuns(co, codex, ANA.session, ["commit", "-m", "again", "--json"], {
      env: ANA.env,
      commandNodeArgs: sandboxed,
    });
    expect(again.cmd!.code).toBe(1);
    expect(JSON.parse(again.cmd!.stdout)).toMatchObject({
      ok: false,
      operation: "commit",
      error: { code: "NOTHING_TO_COMMIT" },
    });
    expect(sh(co.root, "rev-parse", "HEAD").trim()).toBe(hash);
  });

  it("two commits at once both land, each with its own paths", async () => {
    const [a, b] = await Promise.all([
      agentRuns(co, codex, ANA.session, ["commit", "-m", "A at once"], { env: ANA.env }),
      agentRuns(co, claude, BO.session, ["commit", "-m", "B at once"], { env: BO.env }),
    ]);
    expect(a.cmd!.code, a.cmd!.stderr).toBe(0);
    expect(b.cmd!.code, b.cmd!.stderr).toBe(0);
    const log = sh(co.root, "log", "--format=%H %s", "-3").trim().split("\n");
    expect(
      log
        .slice(0, 2)
        .map((l) => l.split(" ").slice(1).join(" "))
        .sort(),
    ).toEqual(["A at once", "B at once"]);
    for (const line of log.slice(0, 2)) {
      const [h, ...subject] = line.split(" ");
      expect(committed(h!)).toEqual(
        subject.join(" ") === "A at once" ? ["src/a/new.ts", "src/a/x.ts"] : ["src/b/y.ts", "src/b/z.ts"],
      );
    }
    expect(sh(co.root, "status", "--porcelain", "--", "src")).toBe("");
    // Bo's commit took the working-tree version of y.ts, not the staged one.
    expect(
      sh(co.root, "show", "HEAD:src/b/y.ts") === "b3\n" ||
        sh(co.root, "show", "HEAD~1:src/b/y.ts") === "b3\n",
    ).toBe(true);
  });

  it("the JSON agent CLI commits too, with its exit code and envelope", async () => {
    write(co.root, "commit.json", JSON.stringify({ message: "B via agent CLI" }));
    sh(co.root, "add", "commit.json"); // an unclaimed path staged by someone: neither taken nor unstaged
    const r = await agentRuns(co, claude, BO.session, ["agent", "commit", "--input", "commit.json"], {
      env: BO.env,
    });
    expect(r.cmd!.code, r.cmd!.stdout).toBe(0);
    const env = JSON.parse(r.cmd!.stdout);
    expect(env).toMatchObject({
      version: 1,
      ok: true,
      operation: "commit",
      data: { intentId: boIntent, paths: ["src/b/y.ts", "src/b/z.ts"], recorded: true },
    });
    expect(env.data.leftForPeers).toEqual([
      { intentId: anaIntent, person: "alice", paths: ["src/a/new.ts", "src/a/x.ts"] },
    ]);
    expect(committed("HEAD")).toEqual(["src/b/y.ts", "src/b/z.ts"]);
    expect(sh(co.root, "diff", "--cached", "--name-only").trim()).toBe("commit.json");
    const bad = await run(co, ["agent", "commit", "--input", "-"], {
      env: { ...BO.env, COHENT_SESSION: BO.session },
      stdin: "{}",
    });
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout).error.code).toBe("INVALID_INPUT");
  });

  it("the scopes read names every other live claim, not the caller's own, and drops a claim whose lease expired", async () => {
    const asAna = agentClient(fx.backend.url, fx.tokens[0], ANA.session);
    const r = await asAna.post({ type: "scopes" });
    expect(r.status).toBe(200);
    expect(r.body.data.peers).toContainEqual({
      intentId: boIntent,
      person: "bob",
      client: "Claude Code",
      model: null,
      objective: "Feature B",
      paths: ["src/b"],
    });
    expect(r.body.data.peers.map((p: { intentId: string }) => p.intentId)).not.toContain(anaIntent);
    // Ten minutes later only Ana calls in: Bo's lease expired, his claim no longer holds.
    fx.backend.advance(11 * 60_000);
    const later = await asAna.post({ type: "scopes" });
    expect(later.body.data.peers.map((p: { intentId: string }) => p.intentId)).not.toContain(boIntent);
  });
});
