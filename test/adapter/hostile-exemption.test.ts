import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { admin } from "@cohent/backend";
import { PREFIXES } from "../../adapter/src/guard/exemption.js";
import { backendForFile } from "../helpers/backend.js";
import { agentRuns, codex, hook, intentJson, makeCheckout, run, type Checkout } from "./helpers.js";

/**
 * The hostile corpus of the exemption: every COHENT_* prefix on the
 * adapter's own command, run through the real built hook (a checkout as init
 * wires it, a real backend), for a paused session and for an active one.
 * An inert prefix keeps the exemption: the hook performs the command for
 * the calling session (the relay) and the command prints that answer. Any
 * other is an ordinary shell command: refused by the kill switch while
 * paused, with the refused name in the reason; allowed but never relayed
 * while active (shell commands are advisory there, spec: "Verify paths").
 */

const REPO = "acme/shop";
const fx = backendForFile(REPO, "Ship the new checkout", ["alice", "Codex"], ["bob", "Claude Code"]);

interface Setup {
  /** The calling session, and the same person's peer session: fresh ones per setup (a pause is the server's, by session). */
  self: string;
  peer: string;
  co: Checkout;
  /** A second checkout of the repository, where the same person's peer session works. */
  peerCo: Checkout;
  env: Record<string, string>;
}

/** One row: the prefix (built from the setup), and whether it keeps the exemption. */
interface Row {
  name: string;
  prefix: (s: Setup) => Record<string, string>;
  exempt: boolean;
}

const ROWS: Row[] = [
  { name: "COHENT_TIMEOUT_MS", prefix: () => ({ COHENT_TIMEOUT_MS: "8000" }), exempt: true },
  { name: "COHENT_HOOK_DEADLINE_MS", prefix: () => ({ COHENT_HOOK_DEADLINE_MS: "25000" }), exempt: true },
  { name: "COHENT_POLL_EVERY_MS", prefix: () => ({ COHENT_POLL_EVERY_MS: "0" }), exempt: true },
  { name: "COHENT_CODE_CACHE", prefix: () => ({ COHENT_CODE_CACHE: "0" }), exempt: true },
  { name: "COHENT_PLUGIN_TIMEOUT_MS", prefix: () => ({ COHENT_PLUGIN_TIMEOUT_MS: "5000" }), exempt: true },
  { name: "COHENT_WARM", prefix: () => ({ COHENT_WARM: "0" }), exempt: true },
  { name: "COHENT_WARM_IDLE_MS", prefix: () => ({ COHENT_WARM_IDLE_MS: "1000" }), exempt: true },
  { name: "COHENT_SESSION", prefix: (s) => ({ COHENT_SESSION: s.self }), exempt: true },
  { name: "COHENT_SESSION", prefix: (s) => ({ COHENT_SESSION: s.peer }), exempt: false },
  { name: "COHENT_AGENT_TOKEN", prefix: () => ({ COHENT_AGENT_TOKEN: fx.tokens[1] }), exempt: false },
  { name: "COHENT_CLIENT", prefix: () => ({ COHENT_CLIENT: "Claude-Code" }), exempt: false },
  { name: "COHENT_ROOT", prefix: (s) => ({ COHENT_ROOT: s.peerCo.root }), exempt: false },
  {
    name: "COHENT_USAGE_LOG",
    prefix: (s) => ({ COHENT_USAGE_LOG: path.join(s.co.root, "src", "usage.jsonl") }),
    exempt: false,
  },
  { name: "COHENT_TRANSPORT", prefix: () => ({ COHENT_TRANSPORT: "node" }), exempt: false },
  { name: "COHENT_BUNDLE_HEAD", prefix: () => ({ COHENT_BUNDLE_HEAD: "x" }), exempt: false },
  { name: "COHENT_BUNDLE_LENGTH", prefix: () => ({ COHENT_BUNDLE_LENGTH: "1" }), exempt: false },
  { name: "COHENT_BUNDLE_HASH", prefix: () => ({ COHENT_BUNDLE_HASH: "abc" }), exempt: false },
  { name: "COHENT_SCHEMAS", prefix: () => ({ COHENT_SCHEMAS: "x" }), exempt: false },
  { name: "COHENT_VERSION", prefix: () => ({ COHENT_VERSION: "9.9.9" }), exempt: false },
  { name: "COHENT_TIMEOUT_MS", prefix: () => ({ COHENT_TIMEOUT_MS: "86400000" }), exempt: false },
  { name: "COHENT_SERVER", prefix: () => ({ COHENT_SERVER: "http://127.0.0.1:9" }), exempt: false },
];

const shellPrefix = (env: Record<string, string>) =>
  Object.entries(env)
    .map(([k, v]) => `${k}=${v}`)
    .join(" ");

function relaysFor(co: Checkout, argv: string[]): { sessionId: string }[] {
  const file = path.join(co.root, ".cohent", "runtime.json");
  if (!existsSync(file)) return [];
  const rt = JSON.parse(readFileSync(file, "utf8")) as { relays: { key: string; sessionId: string }[] };
  return rt.relays.filter((r) => r.key === JSON.stringify(argv));
}

async function checkpointsWith(summary: string) {
  return fx.backend.deps.db.prisma.$transaction((tx) =>
    tx.checkpoint.findMany({ where: { summary }, include: { intent: { include: { session: true } } } }),
  );
}

async function sessionId(key: string): Promise<string> {
  const row = (await admin.listSessions(fx.backend.deps, REPO)).find((s) => s.key === key);
  if (!row) throw new Error(`no session ${key}`);
  return row.id;
}

let setups = 0;
/** A checkout with the calling session and, in a second checkout, the same person's peer session, both with an intent. */
async function setUp(paused: boolean): Promise<Setup> {
  const n = ++setups;
  const self = `codex-self-${n}`;
  const peer = `codex-peer-${n}`;
  const co = await makeCheckout(fx.backend.url, REPO);
  const peerCo = await makeCheckout(fx.backend.url, REPO);
  const env = { ...codex.env, COHENT_AGENT_TOKEN: fx.tokens[0] };
  for (const [c, s, out] of [
    [co, self, `cart-tidy-${n}`],
    [peerCo, peer, `cart-peer-${n}`],
  ] as const) {
    await hook(c, codex.prompt(s, c.root, `Work on ${out}`), env);
    const r = await agentRuns(
      c,
      codex,
      s,
      ["intent", intentJson({ objective: `Do ${out}`, outputs: [out] })],
      {
        env,
      },
    );
    expect(r.cmd!.code).toBe(0);
  }
  if (paused)
    await admin.controlSession(fx.backend.deps, {
      sessionId: await sessionId(self),
      kind: "pause",
      actor: "test",
      reason: "hold on",
    });
  return { self, peer, co, peerCo, env };
}

it("the corpus has a row for every name the exemption classifies", () => {
  expect(new Set(ROWS.map((r) => r.name))).toEqual(new Set([...Object.keys(PREFIXES), "COHENT_SERVER"]));
});

for (const paused of [true, false]) {
  describe(`${paused ? "a paused" : "an active"} session runs the adapter's command with a COHENT_* prefix`, () => {
    let setup: Setup;
    beforeAll(async () => {
      setup = await setUp(paused);
    }, 60_000);

    it.each(ROWS.map((r, i) => ({ ...r, i, label: `#${i} ${r.name} ${r.exempt ? "inert" : "refused"}` })))(
      "$label",
      async ({ prefix, exempt, name, i }) => {
        const { co, env, self } = setup;
        const pre = prefix(setup);
        const marker = `case-${paused ? "paused" : "active"}-${i}`;
        const argv = ["checkpoint", "blocked", marker];
        const command = `${shellPrefix(pre)} node .cohent/cohent.mjs ${argv.join(" ")}`;
        const answer = await hook(co, codex.shell(self, co.root, command), env);
        const relays = relaysFor(co, argv);
        if (exempt) {
          // Exempt and relayed: the hook performed it for the calling session, whatever the prefix says.
          expect(answer.denied).toBeNull();
          expect(answer.stdout).toBe("");
          expect(relays.map((r) => r.sessionId)).toEqual([self]);
          const cmd = await run(co, argv, { env: { COHENT_AGENT_TOKEN: fx.tokens[0], ...pre } });
          expect(cmd.code, cmd.stderr).toBe(0);
          const rows = await checkpointsWith(marker);
          expect(rows.map((r) => r.intent.session.key)).toEqual([self]);
          return;
        }
        // Not exempt: never relayed, so the hook performs nothing for it.
        expect(relays).toEqual([]);
        expect(await checkpointsWith(marker)).toEqual([]);
        if (paused) {
          expect(answer.denied).toMatch(/this session is paused from the Cohent Control Room \(hold on\)/);
          expect(answer.denied).toContain(name);
          expect(answer.denied).toMatch(/Cohent's own command is exempt from this, but not as sent/);
        } else {
          // An ordinary shell command of an active session: allowed, as every shell command is there.
          expect(answer.denied).toBeNull();
        }
      },
      30_000,
    );
  });
}

describe("what a refused prefix would have done", () => {
  it("a paused session cannot act as its peer through COHENT_ROOT and COHENT_SESSION", async () => {
    const { co, peerCo, env, self, peer } = await setUp(true);
    const argv = ["checkpoint", "completed", "hijacked-by-the-paused-session"];
    const pre = { COHENT_ROOT: peerCo.root, COHENT_SESSION: peer };
    const answer = await hook(
      co,
      codex.shell(self, co.root, `${shellPrefix(pre)} node .cohent/cohent.mjs ${argv.join(" ")}`),
      env,
    );
    // As the agent's shell would: the command runs unless the hook refused it.
    if (!answer.denied) await run(co, argv, { env: { COHENT_AGENT_TOKEN: fx.tokens[0], ...pre } });
    // Before the allow-list: exempt, and the command completed the peer's intent as the peer.
    expect(await checkpointsWith("hijacked-by-the-paused-session")).toEqual([]);
    expect(answer.denied).toMatch(/paused/);
    expect(answer.denied).toContain("COHENT_ROOT");
  }, 60_000);

  it("a paused session cannot write a file through COHENT_USAGE_LOG", async () => {
    const { co, env, self } = await setUp(true);
    const file = path.join(co.root, "src", "written-while-paused.jsonl");
    const argv = ["context"];
    const pre = { COHENT_USAGE_LOG: file };
    const answer = await hook(
      co,
      codex.shell(self, co.root, `${shellPrefix(pre)} node .cohent/cohent.mjs context`),
      env,
    );
    if (!answer.denied) await run(co, argv, { env: { COHENT_AGENT_TOKEN: fx.tokens[0], ...pre } });
    // Before the allow-list: exempt, and the command wrote the file.
    expect(existsSync(file)).toBe(false);
    expect(answer.denied).toMatch(/paused/);
    expect(answer.denied).toContain("COHENT_USAGE_LOG");
  }, 60_000);
});

describe("the relay", () => {
  it("acts for the calling session in its own checkout: --repo cannot move a paused session's command to another one", async () => {
    await fx.backend.addRepo("acme/other");
    const otherToken = await fx.backend.issueToken("acme/other", "alice", "Codex");
    const co = await makeCheckout(fx.backend.url, REPO);
    const other = await makeCheckout(fx.backend.url, "acme/other");
    for (const c of [co, other]) execFileSync("git", ["init", "-q"], { cwd: c.root }); // the agent CLI binds to a Git top-level
    // This machine is paired for both checkouts (the credential store), and the client's environment names no token.
    const savedAt = new Date().toISOString();
    mkdirSync(path.join(co.home, ".config", "cohent"), { recursive: true });
    writeFileSync(
      path.join(co.home, ".config", "cohent", "credentials.json"),
      JSON.stringify({
        version: 1,
        services: {
          [fx.backend.url]: {
            [REPO]: { token: fx.tokens[0], savedAt },
            "acme/other": { token: otherToken, savedAt },
          },
        },
      }),
    );
    const S = "codex-relay-repo";
    await hook(co, codex.prompt(S, co.root, "Tidy the cart"), codex.env);
    const declared = await agentRuns(co, codex, S, [
      "intent",
      intentJson({ objective: "Tidy", outputs: ["tidy-r"] }),
    ]);
    expect(declared.cmd!.code, declared.cmd!.stderr).toBe(0);
    await admin.controlSession(fx.backend.deps, {
      sessionId: await sessionId(S),
      kind: "pause",
      actor: "test",
      reason: "hold on",
    });
    // A file the agent wrote before the pause.
    const objective = "Worked elsewhere while paused";
    writeFileSync(
      path.join(co.root, "intent.json"),
      JSON.stringify({ intent: { objective, outputs: ["elsewhere"] } }),
    );
    const argv = ["agent", "intent", "--repo", other.root, "--input", "intent.json"];
    const pre = await hook(
      co,
      codex.shell(S, co.root, `node .cohent/cohent.mjs ${argv.join(" ")}`),
      codex.env,
    );
    expect(pre.denied).toBeNull(); // the adapter's own command, exempt
    const cmd = await run(co, argv);
    // Before: the hook performed it in the other checkout, with that checkout's credential, for a session the pause does not hold.
    const elsewhere = await fx.backend.deps.db.prisma.$transaction((tx) =>
      tx.intent.findMany({ where: { record: { contains: objective } } }),
    );
    expect(elsewhere).toEqual([]);
    expect(JSON.parse(cmd.stdout).error.code).toBe("REPOSITORY_MISMATCH");
  }, 60_000);
});
