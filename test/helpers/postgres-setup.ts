// vitest globalSetup (root config): decides whether the PostgreSQL half of the integration suites
// runs. COHENT_TEST_DATABASE_URL set: used as given (it must answer). Unset: the machine's own
// server (127.0.0.1:5432, trust auth, user postgres, database `test`, created when missing) is
// probed with a short timeout and used when it answers. Otherwise, or with
// COHENT_TEST_DATABASE_URL=off, a banner at the start and at the end of the run says that half did
// not run, so a green SQLite-only run is never mistaken for a full one.
import pg from "pg";

export const LOCAL_POSTGRES = "postgresql://postgres@127.0.0.1:5432/test";
const PROBE_MS = 1_500;

let skipped: string | null = null;

function banner(why: string): string {
  const line = "!".repeat(78);
  return [
    "",
    line,
    "!!  THE POSTGRESQL HALF OF THE INTEGRATION SUITES DID NOT RUN: SQLite only.",
    `!!  Why: ${why}.`,
    "!!  To run it: start PostgreSQL on 127.0.0.1:5432 (trust auth, user postgres; .ci/run does),",
    "!!  or set COHENT_TEST_DATABASE_URL=postgresql://USER@HOST:PORT/DB (each suite makes its own",
    "!!  fresh database there).",
    line,
    "",
  ].join("\n");
}

/** Connects once with a short timeout; resolves with the error's text, or null when the server answered. */
export async function probe(
  url: string,
  timeoutMs = PROBE_MS,
): Promise<{ code?: string; message: string } | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  // A server that goes away mid-probe emits an error event as well as rejecting; the rejection is enough.
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("SELECT 1");
    return null;
  } catch (e) {
    const err = e as { code?: string; message?: string };
    return { ...(err.code ? { code: err.code } : {}), message: err.message ?? String(e) };
  } finally {
    await client.end().catch(() => {});
  }
}

/** The local server answers but has no `test` database: make it (what .ci/run does too). */
async function createDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = target.pathname.slice(1);
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: PROBE_MS });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  } catch (e) {
    // Another run created it meanwhile.
    if ((e as { code?: string }).code !== "42P04") throw e;
  } finally {
    await client.end();
  }
}

/** What the run does about PostgreSQL; exported for the unit test. Sets COHENT_TEST_DATABASE_URL for the workers. */
export async function decide(
  env: NodeJS.ProcessEnv,
  local = LOCAL_POSTGRES,
): Promise<{ url: string; found: boolean } | { skipped: string }> {
  const given = env.COHENT_TEST_DATABASE_URL;
  if (given === "off") {
    delete env.COHENT_TEST_DATABASE_URL;
    return { skipped: "COHENT_TEST_DATABASE_URL=off" };
  }
  if (given) {
    const failed = await probe(given);
    if (failed)
      throw new Error(
        `COHENT_TEST_DATABASE_URL=${given} does not answer (${failed.message}); unset it to probe the local server, or set it to off`,
      );
    return { url: given, found: false };
  }
  let failed = await probe(local);
  if (failed?.code === "3D000") {
    await createDatabase(local);
    failed = await probe(local);
  }
  if (failed)
    return {
      skipped: `COHENT_TEST_DATABASE_URL is unset and ${new URL(local).host} did not answer (${failed.message})`,
    };
  // The workers start after the global setup and inherit the environment: backend.ts reads it.
  env.COHENT_TEST_DATABASE_URL = local;
  return { url: local, found: true };
}

export async function setup(): Promise<void> {
  const d = await decide(process.env);
  if ("skipped" in d) {
    skipped = d.skipped;
    process.stdout.write(banner(skipped) + "\n");
  } else if (d.found)
    process.stdout.write(
      `PostgreSQL half: the local server answered; using ${d.url} (COHENT_TEST_DATABASE_URL=off skips it).\n`,
    );
}

export function teardown(): void {
  if (skipped) process.stdout.write(banner(skipped) + "\n");
}
