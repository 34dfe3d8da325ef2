import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentClient, startBackend, type TestBackend } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";

/** Rounds: 1,000 in CI; COHENT_RACE_ROUNDS=50 for a quick local run. */
const ROUNDS = Number(process.env.COHENT_RACE_ROUNDS) > 0 ? Number(process.env.COHENT_RACE_ROUNDS) : 1_000;
/** Rounds run this many at a time, each lane in a repository of its own, so that 1,000 rounds take seconds. */
const LANES = Number(process.env.COHENT_RACE_LANES) > 0 ? Number(process.env.COHENT_RACE_LANES) : 8;

// The race measures the resolver's order, not the per-token rate limit.
process.env.COHENT_RATE_LIMIT = "off";

/**
 * Two identical intents at once, through two instances on one database (two
 * servers on one SQLite file; on PostgreSQL, the scale-out set-up): each
 * round, two sessions publish the same prompt (in turns, either one first),
 * then declare the same objective and output at the same moment, each
 * through its own instance. Exactly one proceeds and the other is answered
 * duplicate, naming it, whichever declared first; a poll of each afterwards
 * says the same (no answer is taken back).
 */
describe.each(DATABASE_KINDS)("two identical intents at once, two instances (%s)", (kind) => {
  const backends: TestBackend[] = [];
  const lanes: { repo: string; tokens: [string, string] }[] = [];
  beforeAll(async () => {
    const first = await startBackend({ kind });
    backends.push(first, await startBackend({ databaseUrl: first.deps.db.url }));
    for (let lane = 0; lane < LANES; lane++) {
      const repo = `acme/dup-${lane}`;
      await first.addRepo(repo);
      lanes.push({
        repo,
        tokens: [await first.issueToken(repo, "ada"), await first.issueToken(repo, "bob")],
      });
    }
  });
  afterAll(async () => {
    await backends[1]?.close();
    await backends[0]?.stop();
  });

  it(
    `exactly one proceeds and the other is its duplicate, ${ROUNDS} rounds`,
    { timeout: 600_000 },
    async () => {
      const failures: string[] = [];
      const outcome = { firstPublishedProceeded: 0, secondPublishedProceeded: 0 };
      const started = Date.now();
      let next = 0;
      await Promise.all(
        lanes.map(async ({ tokens }, lane) => {
          // One session per instance, reused: each round's publish supersedes the session's last intent.
          const clients = [0, 1].map((i) => agentClient(backends[i]!.url, tokens[i]!, `dup-${lane}-${i}`));
          for (let round = next++; round < ROUNDS; round = next++) {
            const order = round % 2 ? [1, 0] : [0, 1];
            const ids: string[] = [];
            for (const i of order)
              ids[i] = (
                await clients[i]!.post({ type: "publish", prompt: `dup ${round}` })
              ).body.data.intentId;
            const intent = { objective: `Build feature ${round}`, outputs: [`feature-${round}`] };
            const answers = await Promise.all(
              clients.map((c, i) => c.post({ type: "intent", intentId: ids[i], intent })),
            );
            const got = answers.map((r) => ({
              status: r.status,
              action: r.body.data?.action as string | undefined,
              peerIds: r.body.data?.peerIds as string[] | undefined,
            }));
            const p = got.findIndex((g) => g.action === "proceed");
            const d = got.findIndex((g) => g.action === "duplicate");
            // The latest answer an agent holds: a poll's, when its decision changed, else the intent's.
            const polled = await Promise.all(
              clients.map(async (c, i) => {
                const packet = (await c.poll(ids[i]!, "0")).body.data?.packet;
                return (packet?.action as string | undefined) ?? got[i]!.action;
              }),
            );
            const ok =
              got.every((g) => g.status === 200) &&
              p >= 0 &&
              d >= 0 &&
              JSON.stringify(got[d]!.peerIds) === JSON.stringify([ids[p]]) &&
              polled[p] === "proceed" &&
              polled[d] === "duplicate";
            if (!ok)
              failures.push(
                `round ${round} (published ${order.join(" then ")}): ${got.map((g, i) => `${i}: ${g.status} ${g.action} [${g.peerIds?.join(",") ?? ""}] then ${polled[i]}`).join("; ")}`,
              );
            else if (p === order[0]) outcome.firstPublishedProceeded++;
            else outcome.secondPublishedProceeded++;
          }
        }),
      );
      const seconds = (Date.now() - started) / 1000;
      console.log(
        `duplicate race (${kind}, 2 instances): ${ROUNDS} rounds in ${seconds.toFixed(1)} s, ${failures.length} failed; the first published proceeded in ${outcome.firstPublishedProceeded}, the second in ${outcome.secondPublishedProceeded}`,
      );
      expect(failures.slice(0, 5)).toEqual([]);
    },
  );
});
