import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentClient, startBackend, type TestBackend } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";

const CLAIMERS = 16;
const ROUNDS = 12;

/**
 * 16 sessions claim overlapping paths at the same instant. Exactly one may
 * win, every round, on each database. On PostgreSQL the claimers are spread
 * over two backend instances sharing the database, as in production.
 */
describe.each(DATABASE_KINDS)("claim race (%s)", (kind) => {
  const backends: TestBackend[] = [];
  let tokens: string[] = [];
  beforeAll(async () => {
    const first = await startBackend({ kind });
    backends.push(first);
    if (kind === "postgres") backends.push(await startBackend({ databaseUrl: first.deps.db.url }));
    await first.addRepo("acme/race");
    tokens = await Promise.all(Array.from({ length: CLAIMERS }, (_, i) => first.issueToken("acme/race", `agent${i}`)));
  });
  afterAll(async () => {
    for (const b of backends.reverse()) await b.stop();
  });

  it(`exactly one of ${CLAIMERS} overlapping claims wins, ${ROUNDS} rounds`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const clients = tokens.map((t, i) => agentClient(backends[i % backends.length]!.url, t, `race-${round}-${i}`));
      const intents = await Promise.all(
        clients.map(async (c) => (await c.post({ type: "publish", prompt: `round ${round}` })).body.data.intentId as string),
      );
      // Each claimer asks for a different shape of the same area (a directory, a file in it, a glob), all pairwise overlapping.
      const shapes = (i: number) => [[`r${round}/app`], [`r${round}/app/x.ts`], [`r${round}/**/*.ts`], [`r${round}`]][i % 4]!;
      const results = await Promise.all(clients.map((c, i) => c.post({ type: "scope", intentId: intents[i], paths: shapes(i) })));
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 200), `round ${round}: ${statuses.join(",")}`).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(CLAIMERS - 1);
      for (const r of results.filter((x) => x.status === 409)) expect(r.body.error.code).toBe("SCOPE_CONFLICT");
      const held = await backends[0]!.deps.db.prisma.claim.findMany({ where: { intentId: { in: intents } } });
      expect(held).toHaveLength(1);
    }
  });
});
