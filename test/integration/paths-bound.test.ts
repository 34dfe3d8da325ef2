import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BOUNDS, pathCost } from "@cohent/protocol";
import { agentClient, startBackend } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";
import { judge, poll, type Verdict } from "../helpers/liveness.js";
import { serve, stopProcess } from "../helpers/serve.js";

/**
 * Bounded path work (issue 23). The issue's request (64 patterns
 * "src/bN/" + "{a,b}" x 95) got no answer and took the server down, /healthz
 * included. Now every path field is held to the path bounds before anything
 * is matched, and what a request within them makes the server compare is
 * bounded too: /healthz, asked from this process while the requests run in
 * a `cohent serve` child, answers within HEALTHZ_MS throughout, the machine's
 * run-queue waits taken out (a wall-time probe once read 142 ms on a busy
 * machine).
 */

/**
 * Promised deadlines, as in the hostile corpus (hostile.test.ts): /healthz within 250 ms of the
 * server's own time, measured worst 25 ms here (10 times); each request answered within 2 s,
 * measured worst 228 ms (8.8 times). Issue 23's request never answered.
 */
const HEALTHZ_MS = 250;
const REQUEST_MS = 2_000;
const bomb = Array.from({ length: 64 }, (_, i) => `src/b${i}/` + "{a,b}".repeat(95));

/** A glob of at most `states` matcher states: star-heavy segments around a tag (costly to compare, nothing to prune on). */
function starry(tag: string, states: number): string {
  for (let k = Math.floor(states / 6); k > 0; k--) {
    const p = `${"*a".repeat(k)}/${tag}/${"*a".repeat(k)}`;
    if (pathCost(p).cost <= states) return p;
  }
  throw new Error("no such glob");
}

/** A claim at the bounds: globs costing pathsCost together (each at most pathCost), then plain paths up to 64. */
function atTheBound(glob: (tag: string, states: number) => string, tag: string, long = 60): string[] {
  const out: string[] = [];
  for (let g = 0, cost = 0; cost + BOUNDS.pathCost <= BOUNDS.pathsCost; g++) {
    out.push(glob(`${tag}g${g}`, BOUNDS.pathCost));
    cost += pathCost(out[out.length - 1]!).cost;
  }
  for (let k = 0; out.length < BOUNDS.paths; k++) out.push(`${tag}/${"a".repeat(long)}/f${k}a`);
  return out;
}

/** /healthz from this process every 5 ms while `during` runs, judged without the machine's run-queue waits (helpers/liveness). */
async function healthDuring(url: string, pid: number, during: () => Promise<void>) {
  const health = poll(`${url}/healthz`, pid, () => "", 5);
  try {
    await during();
  } catch (err) {
    await health.stop();
    throw err;
  }
  return judge(await health.stop(), HEALTHZ_MS);
}

const summary = (v: Verdict) =>
  `${v.polled} probes, ${v.failed} failed, p50 ${v.p50.toFixed(1)} ms, max ${v.max.toFixed(1)} ms, ` +
  `max without the machine's run-queue waits ${v.maxOwn.toFixed(1)} ms`;

describe.each(DATABASE_KINDS)("bounded path work (%s)", (kind) => {
  let proc: { url: string; child: ChildProcess };
  let token: string;
  let drop: () => Promise<void>;
  let oldIntent: string;
  beforeAll(async () => {
    // The room is set up in-process, then served by its own process, where a blocked event loop shows.
    const setup = await startBackend({ kind });
    await setup.addRepo("acme/bound");
    token = await setup.issueToken("acme/bound", "mallory");
    const peers = await setup.issueToken("acme/bound", "peers");
    // 200 peers, each holding a claim at the bounds (in its own directory, as the arbitration lets a room fill),
    // each with its own token (the per-token rate limit stays as configured).
    for (let i = 0; i < 200; i++) {
      const c = agentClient(setup.url, await setup.issueToken("acme/bound", `peer${i}`), `peer-${i}`);
      const intentId = (await c.post({ type: "publish", prompt: `peer ${i}` })).body.data.intentId;
      const claim = atTheBound((tag, states) => `${tag}/${starry("x", states - tag.length - 1)}`, `p${i}`);
      const r = await c.post({ type: "scope", intentId, paths: claim });
      expect([r.status, r.body.error?.code]).toEqual([200, undefined]);
    }
    // A claim an older version stored, over today's bounds: written as it was, around the checks.
    const old = agentClient(setup.url, peers, "old-timer");
    oldIntent = (await old.post({ type: "publish", prompt: "from before the bounds" })).body.data.intentId;
    const repo = (await setup.deps.store.repos.byName("acme/bound"))!;
    await setup.deps.store.tx(async (t) => {
      await t.claims.set({
        intentId: oldIntent,
        repoId: repo.id,
        paths: bomb.map((p) => p.replace("src/", "old/")),
        at: new Date(),
      });
    });
    const url = setup.deps.db.url;
    drop = async () => {
      const again = await startBackend({ databaseUrl: url });
      await again.stop();
    };
    await setup.close();
    proc = await serve(url, { COHENT_RATE_LIMIT: "off" });
  }, 300_000);
  afterAll(async () => {
    if (proc) await stopProcess(proc.child, "SIGKILL");
    if (kind === "postgres") await drop?.();
  });

  it(
    "the issue's request, in every path field, is refused 400 PATHS_TOO_COMPLEX at once while /healthz answers within 250 ms",
    { timeout: 120_000 },
    async () => {
      const c = agentClient(proc.url, token, "bomber");
      const intentId = (await c.post({ type: "publish", prompt: "p" })).body.data.intentId;
      const fields: [string, Record<string, unknown>][] = [
        ["publish.paths", { type: "publish", prompt: "p", paths: bomb }],
        ["scope.paths", { type: "scope", intentId, paths: bomb }],
        ["scope.paths (queue)", { type: "scope", intentId, paths: bomb, queue: true }],
        ["release-request.paths", { type: "release-request", intentId, paths: bomb }],
        ["checkpoint.paths", { type: "checkpoint", intentId, status: "working", paths: bomb }],
        ["guard.paths", { type: "guard", intentId, kind: "outside-scope", tool: "Edit", paths: bomb }],
      ];
      const answers: string[] = [];
      const v = await healthDuring(proc.url, proc.child.pid!, async () => {
        for (const [field, body] of fields) {
          const t = performance.now();
          const r = await c.post(body);
          const ms = performance.now() - t;
          answers.push(`${field}: ${r.status} ${r.body.error?.code} in ${ms.toFixed(1)} ms`);
          expect([field, r.status, r.body.error?.code]).toEqual([field, 400, "PATHS_TOO_COMPLEX"]);
          expect(r.body.error.message).toContain(`at most ${BOUNDS.pathCost} (pathCost)`);
          expect(ms).toBeLessThan(REQUEST_MS);
        }
      });
      console.log(`the issue's request (${kind}):\n  ${answers.join("\n  ")}\n  /healthz: ${summary(v)}`);
      expect(v.failed).toBe(0);
      expect(v.maxOwn).toBeLessThan(HEALTHZ_MS);
    },
  );

  it(
    "the worst accepted requests against 200 peers at the bounds: /healthz within 250 ms throughout",
    { timeout: 180_000 },
    async () => {
      const c = agentClient(proc.url, token, "worst");
      const intentId = (await c.post({ type: "publish", prompt: "p" })).body.data.intentId;
      // Within the bounds, each a different way of making the comparison costly against every peer.
      const requests: [string, string[]][] = [
        ["star-heavy globs with no base, long plain paths", atTheBound(starry, "mine")],
        [
          "64 plain paths 256 segments deep",
          Array.from({ length: BOUNDS.paths }, (_, i) =>
            `${"p1/".repeat(170)}${i}`.slice(0, BOUNDS.pathChars),
          ),
        ],
        [
          "globs anchored in every peer's directory",
          Array.from({ length: 4 }, (_, i) => `p${i}/${starry(`p${i}g0`, BOUNDS.pathCost - 4)}`),
        ],
      ];
      for (const [, paths] of requests) expect(paths.length).toBeLessThanOrEqual(BOUNDS.paths);
      // A fresh process runs each code path cold once (the claim write, the refusal, the driver's first statements,
      // the matcher before V8 optimizes it): ordinary claims first, as a server that has been answering claims has
      // run them, so that what is timed below is the path work.
      for (const paths of [["warm/a.ts"], ["p0/x.ts"], ["**/*.md", "warm/**/*.ts"], []])
        await c.post({ type: "scope", intentId, paths });
      const answers: string[] = [];
      const v = await healthDuring(proc.url, proc.child.pid!, async () => {
        for (const [name, paths] of requests)
          for (let round = 0; round < 3; round++) {
            const t = performance.now();
            const r = await c.post({ type: "scope", intentId, paths });
            const ms = performance.now() - t;
            answers.push(`${name}: ${r.status} ${r.body.error?.code ?? "ok"} in ${ms.toFixed(1)} ms`);
            expect(r.status).toBeLessThan(500);
            if (r.status === 400) expect(r.body.error.code).toBe("PATHS_TOO_COMPLEX");
            expect(ms).toBeLessThan(REQUEST_MS);
          }
      });
      console.log(
        `the worst accepted requests (${kind}):\n  ${answers.join("\n  ")}\n  /healthz: ${summary(v)}`,
      );
      expect(v.failed).toBe(0);
      expect(v.maxOwn).toBeLessThan(HEALTHZ_MS);
    },
  );

  it("a claim stored over the bounds by an older version slows nothing and counts as its directory", async () => {
    const c = agentClient(proc.url, token, "newcomer");
    const intentId = (await c.post({ type: "publish", prompt: "p" })).body.data.intentId;
    const t = performance.now();
    const inside = await c.post({ type: "scope", intentId, paths: ["old/b3/x.ts"] });
    const outside = await c.post({ type: "scope", intentId, paths: ["old/c/x.ts", "lib/new.ts"] });
    const ms = performance.now() - t;
    expect([inside.status, inside.body.error?.code]).toEqual([409, "SCOPE_CONFLICT"]);
    expect(inside.body.error.details.conflicts.map((x: any) => x.intentId)).toEqual([oldIntent]);
    expect([outside.status, outside.body.data?.paths]).toEqual([200, ["old/c/x.ts", "lib/new.ts"]]);
    expect(ms).toBeLessThan(REQUEST_MS);
  });
});
