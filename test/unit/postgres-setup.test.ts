import net from "node:net";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { LOCAL_POSTGRES, decide, probe } from "../helpers/postgres-setup.js";

/** A loopback port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

const localUp = (await probe(LOCAL_POSTGRES.replace(/\/test$/, "/postgres"))) === null;

/** How `npm test` decides whether the PostgreSQL half runs (test/helpers/postgres-setup.ts). */
describe("the PostgreSQL half's server", () => {
  it("is skipped, with the reason for the banner, when nothing answers; quickly", async () => {
    const env: NodeJS.ProcessEnv = {};
    const t = performance.now();
    const d = await decide(env, `postgresql://postgres@127.0.0.1:${await closedPort()}/test`);
    expect(d).toEqual({
      skipped: expect.stringMatching(/COHENT_TEST_DATABASE_URL is unset and 127\.0\.0\.1:\d+ did not answer/),
    });
    expect(env.COHENT_TEST_DATABASE_URL).toBeUndefined();
    // A promised deadline: the probe gives up within its 1.5 s (helpers/postgres-setup PROBE_MS), so
    // a run without PostgreSQL is not held up. A refused port answers in milliseconds; the bound is
    // the probe's timeout and half a second more.
    expect(performance.now() - t).toBeLessThan(2_000);
  });

  it("is skipped when asked to be (COHENT_TEST_DATABASE_URL=off), and the variable is cleared for the workers", async () => {
    const env: NodeJS.ProcessEnv = { COHENT_TEST_DATABASE_URL: "off" };
    expect(await decide(env)).toEqual({ skipped: "COHENT_TEST_DATABASE_URL=off" });
    expect(env.COHENT_TEST_DATABASE_URL).toBeUndefined();
  });

  it("refuses a given URL that does not answer, instead of running half the suites", async () => {
    const url = `postgresql://postgres@127.0.0.1:${await closedPort()}/test`;
    await expect(decide({ COHENT_TEST_DATABASE_URL: url })).rejects.toThrow(/does not answer/);
  });

  it.skipIf(!localUp)(
    "finds the local server, creating its database when missing, and hands it to the workers",
    async () => {
      const name = `cohent_probe_${randomBytes(4).toString("hex")}`;
      const url = LOCAL_POSTGRES.replace(/\/test$/, `/${name}`);
      const env: NodeJS.ProcessEnv = {};
      try {
        expect(await decide(env, url)).toEqual({ url, found: true });
        expect(env.COHENT_TEST_DATABASE_URL).toBe(url);
        expect(await probe(url)).toBeNull();
      } finally {
        const c = new pg.Client({ connectionString: LOCAL_POSTGRES.replace(/\/test$/, "/postgres") });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        await c.end();
      }
    },
  );
});
