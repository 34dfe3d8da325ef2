import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin } from "@cohent/backend";
import { agentClient, startBackend, type TestBackend } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";

/** Rounds of the claim race: 1,000 in CI; COHENT_RACE_ROUNDS=50 for a quick local run. */
const ROUNDS = Number(process.env.COHENT_RACE_ROUNDS) > 0 ? Number(process.env.COHENT_RACE_ROUNDS) : 1_000;
const CLAIMERS = 16;
/** Rounds run this many at a time, each on its own paths, so 1,000 rounds fit in a few minutes on 2 cores. */
const LANES = Number(process.env.COHENT_RACE_LANES) > 0 ? Number(process.env.COHENT_RACE_LANES) : 8;
const SMALL_ROUNDS = Math.max(10, Math.min(50, Math.floor(ROUNDS / 20)));

// The race measures arbitration, not the per-token rate limit.
process.env.COHENT_RATE_LIMIT = "off";

/**
 * Races. 16 sessions claim overlapping scopes at the same instant, ROUNDS
 * rounds: exactly one wins each round, on SQLite and, on PostgreSQL, with
 * the claimers spread over two backend instances sharing the database.
 * Two identical intents at once: one proceeds, the other is a duplicate.
 * A pause racing a claim: the claim fails, or the pause wins on the next call.
 */
describe.each(DATABASE_KINDS)("races (%s)", (kind) => {
  const backends: TestBackend[] = [];
  let tokens: string[] = [];
  const counts = { passed: 0, failed: 0 };
  const record = (ok: boolean) => (ok ? counts.passed++ : counts.failed++);
  beforeAll(async () => {
    const first = await startBackend({ kind });
    backends.push(first);
    if (kind === "postgres") backends.push(await startBackend({ databaseUrl: first.deps.db.url }));
    await first.addRepo("acme/race");
    tokens = await Promise.all(
      Array.from({ length: CLAIMERS }, (_, i) => first.issueToken("acme/race", `agent${i}`)),
    );
  });
  afterAll(async () => {
    console.log(`races (${kind}): ${counts.passed} passed, ${counts.failed} failed`);
    for (const b of backends.reverse()) await b.stop();
  });
  const url = (i: number) => backends[i % backends.length]!.url;

  it(
    `exactly one of ${CLAIMERS} overlapping claims wins, ${ROUNDS} rounds`,
    { timeout: 900_000 },
    async () => {
      // Each lane: 16 sessions with one open intent each, reused round after round (the winner releases after its round).
      const lanes = await Promise.all(
        Array.from({ length: LANES }, async (_, lane) => {
          const clients = tokens.map((t, i) => agentClient(url(i + lane), t, `race-${lane}-${i}`));
          const intents = await Promise.all(
            clients.map(
              async (c) =>
                (await c.post({ type: "publish", prompt: `lane ${lane}` })).body.data.intentId as string,
            ),
          );
          return { clients, intents };
        }),
      );
      const failures: string[] = [];
      const started = Date.now();
      let next = 0;
      await Promise.all(
        lanes.map(async ({ clients, intents }) => {
          for (let round = next++; round < ROUNDS; round = next++) {
            // Each claimer asks for a different shape of the same area (a directory, a file in it, a glob, the parent), all pairwise overlapping.
            const shapes = (i: number) =>
              [[`r${round}/app`], [`r${round}/app/x.ts`], [`r${round}/**/*.ts`], [`r${round}`]][i % 4]!;
            const results = await Promise.all(
              clients.map((c, i) => c.post({ type: "scope", intentId: intents[i], paths: shapes(i) })),
            );
            const winners = results.flatMap((r, i) => (r.status === 200 ? [i] : []));
            const losers = results.filter(
              (r) => r.status === 409 && r.body.error.code === "SCOPE_CONFLICT",
            ).length;
            const held = await backends[0]!.deps.db.prisma.claim.count({
              where: { intentId: { in: intents } },
            });
            const ok = winners.length === 1 && losers === CLAIMERS - 1 && held === 1;
            record(ok);
            if (!ok)
              failures.push(
                `round ${round}: statuses ${results.map((r) => r.status).join(",")}, claims held ${held}`,
              );
            if (winners.length)
              await Promise.all(
                winners.map((w) => clients[w]!.post({ type: "scope", intentId: intents[w], paths: [] })),
              );
          }
        }),
      );
      const seconds = (Date.now() - started) / 1000;
      console.log(
        `claim race (${kind}, ${backends.length} instance(s)): ${ROUNDS} rounds x ${CLAIMERS} claimers in ${seconds.toFixed(1)} s, ${failures.length} rounds failed`,
      );
      expect(failures.slice(0, 5)).toEqual([]);
    },
  );

  it(`two identical intents at once: one proceeds, the other is the duplicate, ${SMALL_ROUNDS} rounds`, async () => {
    let bothProceededAtFirst = 0;
    for (let round = 0; round < SMALL_ROUNDS; round++) {
      const a = agentClient(url(0), tokens[0]!, `dup-a-${round}`);
      const b = agentClient(url(1), tokens[1]!, `dup-b-${round}`);
      const ia = (await a.post({ type: "publish", prompt: `dup ${round}` })).body.data.intentId as string;
      const ib = (await b.post({ type: "publish", prompt: `dup ${round}` })).body.data.intentId as string;
      const intent = { objective: `Build feature ${round}`, outputs: [`feature-${round}`] };
      const first = await Promise.all([
        a.post({ type: "intent", intentId: ia, intent }),
        b.post({ type: "intent", intentId: ib, intent }),
      ]);
      const immediate = first.map((r) => r.body.data.action as string);
      if (immediate.every((x) => x === "proceed")) bothProceededAtFirst++;
      // The answer that counts for an agent is its latest one: the intent's, or a poll's when the decision changed.
      const settled = await Promise.all([
        a.poll(ia, "0").then((r) => (r.body.data.packet?.action as string | undefined) ?? immediate[0]!),
        b.poll(ib, "0").then((r) => (r.body.data.packet?.action as string | undefined) ?? immediate[1]!),
      ]);
      const ok = [...settled].sort().join(",") === "duplicate,proceed" && settled[0] === "proceed";
      record(ok);
      expect(settled, `round ${round}: immediate ${immediate.join(",")}`).toEqual(["proceed", "duplicate"]);
      // Never two duplicates: someone always owns the work.
      expect(immediate).not.toEqual(["duplicate", "duplicate"]);
    }
    console.log(
      `duplicate race (${kind}): ${SMALL_ROUNDS} rounds; the later-published intent declared first (both answered proceed at once, its next poll says duplicate) in ${bothProceededAtFirst}`,
    );
  });

  it(`a pause racing a claim: the claim fails or the pause shows on the next call, never both lost, ${SMALL_ROUNDS} rounds`, async () => {
    const outcomes = { claimFailed: 0, pausedAfter: 0 };
    for (let round = 0; round < SMALL_ROUNDS; round++) {
      const key = `pause-${round}`;
      const c = agentClient(url(round), tokens[2]!, key);
      const intentId = (await c.post({ type: "publish", prompt: `pause ${round}` })).body.data
        .intentId as string;
      const sessionId = (await backends[0]!.deps.db.prisma.session.findFirstOrThrow({ where: { key } })).id;
      const [claim] = await Promise.all([
        c.post({ type: "scope", intentId, paths: [`pause/${round}`] }),
        admin.controlSession(backends[round % backends.length]!.deps, {
          sessionId,
          kind: "pause",
          actor: "ops",
        }),
      ]);
      const nextCall = await c.post({ type: "scope", intentId, paths: [`pause/${round}/more`] });
      const claimFailed = claim.status === 423 && claim.body.error.code === "SESSION_PAUSED";
      const claimWon = claim.status === 200;
      const pauseShows =
        nextCall.status === 423 &&
        nextCall.body.error.code === "SESSION_PAUSED" &&
        nextCall.body.meta.session.control === "paused";
      const ok = (claimFailed || claimWon) && pauseShows;
      record(ok);
      expect(ok, `round ${round}: claim ${claim.status}, next ${nextCall.status}`).toBe(true);
      if (claimFailed) outcomes.claimFailed++;
      else outcomes.pausedAfter++;
    }
    console.log(
      `pause race (${kind}): claim refused ${outcomes.claimFailed}, claim won and the pause held on the next call ${outcomes.pausedAfter}`,
    );
  });
});
