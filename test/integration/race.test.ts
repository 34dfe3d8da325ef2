import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin } from "@cohent/backend";
import { agentClient, startBackend, type TestBackend } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";
import { releaseScope } from "../../backend/src/operations/people/scopes.js";

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
 * (Two identical intents at once, through two instances: duplicate-race.test.ts.)
 * A pause racing a claim: the claim fails, or the pause wins on the next call.
 * The claim queue: a holder's release, a person's release of the same claim
 * and two queued waiters re-asking meet, ROUNDS rounds: exactly one grant.
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

  it(
    `a release, a person's release and two queued waiters meet: exactly one grant, ${ROUNDS} rounds`,
    { timeout: 900_000 },
    async () => {
      const db = backends[0]!.deps.db.prisma;
      /**
       * Each lane: three intents on pairwise overlapping paths (sessions spread over the instances), in
       * turns: one holds, one waits first in the queue, the third queues behind both. Then, at once, the
       * holder releases, a person releases the same claim (on another instance on PostgreSQL) and both
       * waiters ask again: the first waiter is granted, exactly once, and the second stays queued. The
       * roles turn for the next round: the granted waiter holds, the second waits first, the old holder queues.
       */
      const lanes = await Promise.all(
        Array.from({ length: LANES }, async (_, lane) => {
          const clients = [0, 1, 2].map((i) => agentClient(url(i + lane), tokens[i]!, `queue-${lane}-${i}`));
          const intents = await Promise.all(
            clients.map(
              async (c) =>
                (await c.post({ type: "publish", prompt: `queue lane ${lane}` })).body.data
                  .intentId as string,
            ),
          );
          const paths = [[`q${lane}/app/a.ts`, `q${lane}/lib`], [`q${lane}/**/*.ts`], [`q${lane}/app`]];
          return { clients, intents, paths };
        }),
      );
      const failures: string[] = [];
      const outcome = { releasedByPerson: 0, releasedByHolder: 0, waiterClaimedItself: 0 };
      const started = Date.now();
      let next = 0;
      await Promise.all(
        lanes.map(async ({ clients, intents, paths }, lane) => {
          const scope = (i: number, p: string[], queue = true) =>
            clients[i]!.post({ type: "scope", intentId: intents[i], paths: p, ...(queue ? { queue } : {}) });
          const grants = () =>
            db.event.count({ where: { kind: "scope.granted", intentId: { in: intents } } });
          // Round 0's holder and first waiter.
          expect((await scope(0, paths[0]!, false)).status).toBe(200);
          expect((await scope(1, paths[1]!)).status).toBe(409);
          let [holder, first, second] = [0, 1, 2];
          for (let round = next++; round < ROUNDS; round = next++) {
            const queued = await scope(second, paths[second]!);
            const before = await grants();
            const [byHolder, byPerson, again] = await Promise.all([
              scope(holder, [], false),
              new Promise((r) => setTimeout(r, round % 3)).then(() =>
                releaseScope(backends[(round + lane) % backends.length]!.deps, {
                  repo: "acme/race",
                  intentId: intents[holder]!,
                  actor: "ops",
                }).then(
                  () => "released",
                  (e: { code?: string }) => e.code ?? String(e),
                ),
              ),
              scope(first, paths[first]!),
              scope(second, paths[second]!),
            ]);
            const held = (await db.claim.findMany({ where: { intentId: { in: intents } } })).map(
              (c) => c.intentId,
            );
            const granted = (await grants()) - before;
            const stillQueued = await db.claimWait.count({ where: { intentId: intents[second] } });
            const ok =
              queued.status === 409 &&
              queued.body.error.details.queued.place === 2 &&
              byHolder.status === 200 &&
              (byPerson === "released" || byPerson === "NOT_HELD") &&
              held.length === 1 &&
              held[0] === intents[first] &&
              granted === 1 &&
              stillQueued === 1;
            record(ok);
            if (!ok)
              failures.push(
                `round ${round}: queued ${queued.status}, holder ${byHolder.status}, person ${byPerson}, first again ${again.status}, held ${held.join(",")}, grants ${granted}, second queued ${stillQueued}`,
              );
            if (byPerson === "released") outcome.releasedByPerson++;
            else outcome.releasedByHolder++;
            if (again.status === 200) outcome.waiterClaimedItself++;
            [holder, first, second] = [first, second, holder];
          }
          await scope(first, [], false);
          await scope(holder, [], false);
        }),
      );
      const seconds = (Date.now() - started) / 1000;
      console.log(
        `queue race (${kind}, ${backends.length} instance(s)): ${ROUNDS} rounds in ${seconds.toFixed(1)} s, ${failures.length} rounds failed; the person's release came first ${outcome.releasedByPerson}, the holder's ${outcome.releasedByHolder}; the first waiter's own ask landed after its grant ${outcome.waiterClaimedItself}`,
      );
      expect(failures.slice(0, 5)).toEqual([]);
    },
  );

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
