import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BOUNDS } from "@cohent/protocol/bounds";
import { backendForFile } from "../helpers/backend.js";
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
 * The claim queue from the client side (issue 13): `scope --queue` and
 * `scope --wait`, `request-release`, the notices a hook injects (a grant, a
 * lost claim), and the release at SessionEnd. Two people, each in a
 * checkout of their own, against one real backend; every command is the
 * built adapter in a child process.
 */

const REPO = "acme/queue";
const fx = backendForFile(REPO, "Share the files", ["alice", "Claude Code"], ["bob", "Codex"]);

interface Agent {
  co: Checkout;
  session: string;
  env: Record<string, string>;
}

let n = 0;
/** A person's Claude Code session in a checkout of its own, with a published prompt and a proceeding intent. */
async function agent(person: 0 | 1, objective: string): Promise<Agent> {
  const co = await makeCheckout(fx.backend.url, REPO);
  execFileSync("git", ["init", "-q"], { cwd: co.root }); // the agent CLI binds to a Git top-level
  const session = `q-${person}-${++n}`;
  const env = { ...claude.env, COHENT_AGENT_TOKEN: fx.tokens[person], COHENT_SESSION: session };
  await hook(co, claude.prompt(session, co.root, objective), env);
  const r = await cli({ co, session, env }, ["intent", intentJson({ objective, outputs: [`out-${n}`] })]);
  expect(r.code, r.stdout + r.stderr).toBe(0);
  return { co, session, env };
}

/** The adapter's command run directly, bound to the agent's session by COHENT_SESSION. */
const cli = (a: Agent, args: string[]) => run(a.co, args, { env: a.env });
const write = (a: Agent, file: string, event = "PreToolUse") =>
  hook(a.co, claude.write(a.session, a.co.root, path.join(a.co.root, file), event), a.env);
const agentJson = async (a: Agent, op: string, input: object) => {
  const file = path.join(a.co.root, `${op}-${++n}.json`);
  writeFileSync(file, JSON.stringify(input));
  const r = await run(a.co, ["agent", op, "--input", file], { env: a.env });
  return { code: r.code, env: JSON.parse(r.stdout), stderr: r.stderr };
};
const runtime = (a: Agent) =>
  JSON.parse(readFileSync(path.join(a.co.root, ".cohent", "runtime.json"), "utf8")).sessions[a.session];

describe("scope --queue", () => {
  it("queues behind the holder, says what to do meanwhile, and the next edit after the release lands with the grant told once", async () => {
    const alice = await agent(0, "Auth rework");
    const bob = await agent(1, "Auth tests");
    expect((await cli(alice, ["scope", "app/auth"])).code).toBe(0);

    const q = await cli(bob, ["scope", "--queue", "app/auth"]);
    expect(q.code).toBe(1);
    expect(q.stdout).toContain("the claim joined the queue");
    expect(q.stdout).toMatch(
      /You are queued for app\/auth at place 1, behind alice \(Claude Code\) holding app\/auth/,
    );
    expect(q.stdout).toContain("Meanwhile, work on files outside app/auth.");
    expect(runtime(bob).queued).toEqual(["app/auth"]);
    // The holder learns it in its next packet.
    expect((await cli(alice, ["context"])).stdout).toMatch(/bob\S* .*waits for app\/auth \(1 in queue\)/);

    // Bob works elsewhere meanwhile (that call polls; the next ones within 10 s read only the kill switch).
    expect((await write(bob, "lib/other.ts")).denied).toBeNull();
    await write(bob, "lib/other.ts", "PostToolUse");
    // Alice releases; Bob's next edit of the path passes: the grant came with the kill-switch read's notice count.
    expect((await cli(alice, ["scope"])).code).toBe(0);
    const pre = await write(bob, "app/auth/login.ts");
    expect(pre.denied).toBeNull();
    // The edit elsewhere kept the place, and the grant keeps that work: the waited paths and what Bob held.
    expect(runtime(bob).scope).toEqual(["app/auth", "lib/other.ts"]);
    const post = await write(bob, "app/auth/login.ts", "PostToolUse");
    expect(post.context).toMatch(/app\/auth/);
    expect(post.context).toMatch(/granted/);
    // Told once.
    await write(bob, "app/auth/login.ts");
    expect((await write(bob, "app/auth/login.ts", "PostToolUse")).context ?? "").not.toMatch(/granted/);
  });

  it("the agent CLI and the JSON form carry the queue place as data", async () => {
    const alice = await agent(0, "Billing rework");
    const bob = await agent(1, "Billing tests");
    expect((await cli(alice, ["scope", "app/billing"])).code).toBe(0);
    const r = await agentJson(bob, "scope", { paths: ["app/billing"], queue: true });
    expect(r.code).toBe(1);
    expect(r.env.error.code).toBe("SCOPE_CONFLICT");
    expect(r.env.error.details.queued).toMatchObject({ paths: ["app/billing"], place: 1 });
    expect(r.env.error.details.queued.behind[0]).toMatchObject({ person: "alice", holds: true });
    const human = await cli(bob, ["scope", "--queue", "app/billing", "--json"]);
    expect(JSON.parse(human.stdout).error.details.queued.place).toBe(1);
  });
});

describe("scope --wait", () => {
  it("blocks until a peer releases, then prints the grant and exits 0 (human CLI)", async () => {
    const alice = await agent(0, "Cart rework");
    const bob = await agent(1, "Cart page");
    expect((await cli(alice, ["scope", "app/cart"])).code).toBe(0);
    const started = Date.now();
    const waiting = cli(bob, ["scope", "--wait", "40", "app/cart"]);
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await cli(alice, ["checkpoint", "completed", "Cart done"])).code).toBe(0);
    const w = await waiting;
    expect(w.code, w.stdout + w.stderr).toBe(0);
    expect(w.stdout).toMatch(/granted/);
    expect(w.stdout).toContain("Scope claimed: app/cart.");
    // Granted on the release (1.5 s in), not at the end of its 40 s wait: 30 s tells one from the other.
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(runtime(bob).scope).toEqual(["app/cart"]);
  });

  it("the agent CLI's wait ends in the grant too, with the scope's data", async () => {
    const alice = await agent(0, "Search rework");
    const bob = await agent(1, "Search page");
    expect((await cli(alice, ["scope", "app/search"])).code).toBe(0);
    const waiting = agentJson(bob, "scope", { paths: ["app/search"], wait: 40 });
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await cli(alice, ["scope"])).code).toBe(0);
    const w = await waiting;
    expect(w.code, JSON.stringify(w.env)).toBe(0);
    expect(w.env.data.paths).toEqual(["app/search"]);
    expect(w.env.data.packet.notices.map((x: { kind: string }) => x.kind)).toContain("scope-granted");
  });

  it("when the time is up it is still queued: SCOPE_CONFLICT, its place, exit 1", async () => {
    const alice = await agent(0, "Docs rework");
    const bob = await agent(1, "Docs pages");
    expect((await cli(alice, ["scope", "docs"])).code).toBe(0);
    const w = await cli(bob, ["scope", "--wait", "2", "docs", "--json"]);
    expect(w.code).toBe(1);
    const env = JSON.parse(w.stdout);
    expect(env.error.code).toBe("SCOPE_CONFLICT");
    expect(env.error.message).toMatch(/Still queued after 2 s/);
    expect(env.error.details.queued.place).toBe(1);
    expect(env.error.details.wait).toEqual({ seconds: 2, waited: true });
    const human = await cli(bob, ["scope", "--wait", "1", "docs"]);
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/Still queued after 1 s[\s\S]*place 1/);
  });

  it("refuses a bad wait with a stable code, in both CLIs", async () => {
    const bob = await agent(1, "Bad waits");
    for (const bad of ["0", "121", "abc", "1.5"]) {
      const r = await cli(bob, ["scope", "--wait", bad, "x", "--json"]);
      expect(r.code).toBe(1);
      expect(JSON.parse(r.stdout).error.code).toBe("INVALID_WAIT");
    }
    expect((await cli(bob, ["scope", "--wait"])).stderr).toContain("--wait needs a value");
    const big = await agentJson(bob, "scope", { paths: ["x"], wait: BOUNDS.scopeWaitSeconds + 1 });
    expect(big.env.error.code).toBe("INVALID_INPUT");
  });

  it("under Codex's sandbox the hook queues and the command returns at once, saying it could not wait", async () => {
    const alice = await agent(0, "Ledger rework");
    expect((await cli(alice, ["scope", "app/ledger"])).code).toBe(0);
    const co = await makeCheckout(fx.backend.url, REPO);
    const env = { COHENT_AGENT_TOKEN: fx.tokens[1] };
    const S = "q-sandbox";
    await hook(co, codex.prompt(S, co.root, "Ledger tests"), env);
    await agentRuns(co, codex, S, ["intent", intentJson({ objective: "Ledger tests", outputs: ["lt"] })], {
      env,
      commandNodeArgs: sandboxed,
    });
    const started = Date.now();
    const r = await agentRuns(co, codex, S, ["scope", "--wait", "60", "app/ledger"], {
      env,
      commandNodeArgs: sandboxed,
    });
    expect(r.pre.denied).toBeNull();
    expect(r.cmd!.code).toBe(1);
    expect(r.cmd!.stdout).toContain(
      "under the sandbox relay the hook that performs this command cannot wait",
    );
    expect(r.cmd!.stdout).toMatch(/place 1, behind alice/);
    // Refused at once, not after its 60 s wait: 15 s tells one from the other (two hook processes).
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});

describe("request-release", () => {
  it("asks the holder, who reads the note in a packet; NOT_HELD and RATE_LIMITED say what to do", async () => {
    const alice = await agent(0, "Profile rework");
    const bob = await agent(1, "Profile page");
    expect((await cli(alice, ["scope", "app/profile"])).code).toBe(0);
    const r = await cli(bob, ["request-release", "app/profile", "--note", "I need the avatar upload"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Release requested: asked alice \(Claude Code\) for app\/profile/);
    // Alice's next poll carries the note, framed, with the commands to answer it.
    const ctx = await cli(alice, ["context"]);
    expect(ctx.stdout).toContain("I need the avatar upload");

    const free = await cli(bob, ["request-release", "nobody/holds/this"]);
    expect(free.code).toBe(1);
    expect(free.stderr).toContain("NOT_HELD: nobody holds any of those paths now");

    let limited = null;
    for (let i = 0; i < BOUNDS.releaseRequestsPerMinute + 1 && !limited; i++) {
      const again = await cli(bob, ["request-release", "app/profile"]);
      if (again.code !== 0) limited = again;
    }
    expect(limited?.stderr).toContain("RATE_LIMITED: too many release requests");
    const json = await agentJson(bob, "request-release", { paths: ["app/profile"], note: "still need it" });
    expect(json.env.error.code).toBe("RATE_LIMITED");
  });

  it("rejects a missing path and a long note before any request", async () => {
    const bob = await agent(1, "Notes");
    expect((await cli(bob, ["request-release"])).stderr).toContain("Name the paths to ask for");
    const long = await cli(bob, ["request-release", "x", "--note", "n".repeat(BOUNDS.releaseNoteChars + 1)]);
    expect(long.stderr).toMatch(/INVALID_INPUT: The note is \d+ characters/);
  });
});

describe("the hook and the claim", () => {
  it("refuses a peer's path with how to queue or wait, and what to do meanwhile", async () => {
    const alice = await agent(0, "Orders rework");
    const bob = await agent(1, "Orders page");
    expect((await write(alice, "app/orders/list.ts")).denied).toBeNull();
    const refused = await write(bob, "app/orders/list.ts");
    expect(refused.denied).toMatch(/overlaps the scope of alice/);
    expect(refused.denied).toContain("Meanwhile, work on files outside app/orders/list.ts.");
    expect(refused.denied).toContain("node .cohent/cohent.mjs scope --queue app/orders/list.ts");
    expect(refused.denied).toContain("node .cohent/cohent.mjs scope --wait <seconds");
  });

  it("SessionEnd frees the scope at once and clears it locally", async () => {
    const alice = await agent(0, "Mail rework");
    const bob = await agent(1, "Mail page");
    expect((await write(alice, "app/mail/send.ts")).denied).toBeNull();
    expect((await write(bob, "app/mail/send.ts")).denied).toMatch(/overlaps the scope of alice/);
    await hook(
      alice.co,
      { session_id: alice.session, cwd: alice.co.root, hook_event_name: "SessionEnd", reason: "exit" },
      alice.env,
    );
    expect(runtime(alice).scope).toEqual([]);
    expect(runtime(alice).endedAt).toBeTruthy();
    expect((await write(bob, "app/mail/send.ts")).denied).toBeNull();
  });

  it("a lost claim is told once, before the refusal, and the next edit claims again", async () => {
    const alice = await agent(0, "Feed rework");
    expect((await write(alice, "app/feed/a.ts")).denied).toBeNull();
    // Alice goes quiet past her lease; Bob takes the path.
    fx.backend.advance(11 * 60_000);
    const bob = await agent(1, "Feed page");
    expect((await write(bob, "app/feed/a.ts")).denied).toBeNull();
    const back = await write(alice, "app/feed/a.ts");
    expect(back.denied).toMatch(
      /^Cohent: \[cohent notice\] Your claim on app\/feed\/a\.ts was freed without you asking[\s\S]*\n\nedit refused: app\/feed\/a\.ts overlaps the scope of bob/,
    );
    expect(runtime(alice).scope).not.toContain("app/feed/a.ts");
    // Told once: the next refusal carries no notice.
    const again = await write(alice, "app/feed/a.ts");
    expect(again.denied).not.toMatch(/freed without you asking/);
    expect(again.denied).toMatch(/^Cohent: edit refused/);
  });

  it("the lease epoch fences a late edit even when the lost-claim notice never arrives", async () => {
    const alice = await agent(0, "Search rework");
    expect((await write(alice, "app/search/a.ts")).denied).toBeNull();
    const epochBefore = runtime(alice).epoch;
    expect(typeof epochBefore).toBe("number");
    fx.backend.advance(11 * 60_000);
    const bob = await agent(1, "Search page");
    expect((await write(bob, "app/search/a.ts")).denied).toBeNull();
    // The notice is lost (told already): only the epoch on the kill-switch read can tell Alice.
    await fx.backend.deps.db.prisma.notice.updateMany({
      where: { toldAt: null },
      data: { toldAt: new Date() },
    });
    const late = await write(alice, "app/search/a.ts");
    expect(late.denied).toMatch(/^Cohent: edit refused: app\/search\/a\.ts overlaps the scope of bob/);
    expect(runtime(alice).epoch).toBe(epochBefore + 1);
    expect(runtime(alice).scope).not.toContain("app/search/a.ts");
  });
});
