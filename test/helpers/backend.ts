import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import pg from "pg";
import pino from "pino";
import { afterAll, beforeAll } from "vitest";
import { admin, startServer, type LeaseConfig, type RunningServer } from "@cohent/backend";
import { DEFAULT_ADMISSION } from "../../backend/src/http/admission.js";

/**
 * A real backend on a loopback port with a real database: a fresh SQLite
 * file, or a fresh PostgreSQL database when COHENT_TEST_DATABASE_URL is set.
 */

export interface TestBackend extends RunningServer {
  /** Moves the server's clock forward. */
  advance(ms: number): void;
  addRepo(name: string, goal?: string, caseInsensitive?: boolean): Promise<void>;
  issueToken(repo: string, person: string, client?: string): Promise<string>;
  stop(): Promise<void>;
}

export const PG_BASE_URL = process.env.COHENT_TEST_DATABASE_URL;

export async function freshDatabaseUrl(
  kind: "sqlite" | "postgres" = PG_BASE_URL ? "postgres" : "sqlite",
): Promise<{ url: string; drop: () => Promise<void> }> {
  if (kind === "sqlite") {
    const dir = mkdtempSync(path.join(os.tmpdir(), "cohent-test-"));
    return {
      url: `file:${path.join(dir, "cohent.sqlite")}`,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  if (!PG_BASE_URL) throw new Error("COHENT_TEST_DATABASE_URL is not set");
  const name = `cohent_test_${randomBytes(6).toString("hex")}`;
  const adminClient = new pg.Client({ connectionString: PG_BASE_URL });
  await adminClient.connect();
  await adminClient.query(`CREATE DATABASE "${name}"`);
  await adminClient.end();
  const url = new URL(PG_BASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_BASE_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}

export async function startBackend(
  opts: {
    kind?: "sqlite" | "postgres";
    lease?: LeaseConfig;
    databaseUrl?: string;
    /** The server's log; default silent (COHENT_TEST_LOG sets a level on stdout). */
    log?: pino.Logger;
    admission?: Parameters<typeof startServer>[0]["admission"];
  } = {},
): Promise<TestBackend> {
  const db = opts.databaseUrl
    ? { url: opts.databaseUrl, drop: async () => {} }
    : await freshDatabaseUrl(opts.kind);
  let offset = 0;
  const clock = () => new Date(Date.now() + offset);
  const server = await startServer({
    databaseUrl: db.url,
    log: opts.log ?? pino({ level: process.env.COHENT_TEST_LOG ?? "silent" }),
    clock,
    ...(opts.lease ? { lease: opts.lease } : {}),
    // In-process, the server shares its event loop with the test's own work (a spawnSync, a build):
    // the loop's delay says nothing of the server's load, so only the in-flight limit applies.
    admission:
      opts.admission !== undefined
        ? opts.admission
        : { ...DEFAULT_ADMISSION, maxLagMs: Number.POSITIVE_INFINITY },
  });
  return {
    ...server,
    advance: (ms) => {
      offset += ms;
    },
    addRepo: async (name, goal = "", caseInsensitive = false) => {
      await admin.addRepo(server.deps, { name, goal, caseInsensitive });
    },
    issueToken: async (repo, person, client) =>
      (await admin.issueToken(server.deps, { repo, person, ...(client ? { client } : {}) })).token,
    stop: async () => {
      await server.close();
      await db.drop();
    },
  };
}

/** A backend with one repository and a token per person (`[person, client?]`, in order): how most suites begin. */
export async function backendWithRepo<P extends [person: string, client?: string][]>(
  repo: string,
  goal: string,
  ...people: P
): Promise<{ backend: TestBackend; tokens: { [K in keyof P]: string } }> {
  const backend = await startBackend();
  await backend.addRepo(repo, goal);
  const tokens: string[] = [];
  for (const [person, client] of people) tokens.push(await backend.issueToken(repo, person, client));
  return { backend, tokens: tokens as { [K in keyof P]: string } };
}

/**
 * One backend with one repository (and its people's tokens) for a whole test
 * file: started before the file's tests, stopped after them. Read its fields
 * inside tests, not at module load.
 */
export function backendForFile<P extends [person: string, client?: string][]>(
  repo: string,
  goal: string,
  ...people: P
): Awaited<ReturnType<typeof backendWithRepo<P>>> {
  const fixture = {} as Awaited<ReturnType<typeof backendWithRepo<P>>>;
  beforeAll(async () => {
    Object.assign(fixture, await backendWithRepo(repo, goal, ...people));
  });
  afterAll(() => fixture.backend?.stop());
  return fixture;
}

/** A small agent-API client over real HTTP. */
export function agentClient(base: string, token: string, session: string) {
  const headers = {
    authorization: `Bearer ${token}`,
    "x-cohent-session": session,
    "content-type": "application/json",
  };
  const client = {
    async post(body: unknown) {
      const res = await fetch(`${base}/api/agent`, { method: "POST", headers, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as any };
    },
    /** Publishes a prompt and declares its intent; returns the intent id. */
    async declare(prompt: string, intent: Record<string, unknown>): Promise<string> {
      const intentId: string = (await client.post({ type: "publish", prompt })).body.data.intentId;
      await client.post({ type: "intent", intentId, intent });
      return intentId;
    },
    async poll(intentId: string, cursor?: string) {
      const h: Record<string, string> = { ...headers, "x-cohent-intent": intentId };
      if (cursor !== undefined) h["x-cohent-cursor"] = cursor;
      const res = await fetch(`${base}/api/agent`, { headers: h });
      return { status: res.status, body: (await res.json()) as any };
    },
  };
  return client;
}
