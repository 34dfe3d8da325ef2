import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin } from "@cohent/backend";
import { migrationsFor } from "../../backend/src/store/migrate.js";
import { agentClient, freshDatabaseUrl, startBackend, type TestBackend } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";
import { signedInAdmin } from "../console/helpers.js";
import { serve, stopProcess } from "../helpers/serve.js";

async function appliedMigrations(url: string): Promise<string[]> {
  if (url.startsWith("file:")) {
    const db = new Database(url.slice("file:".length), { readonly: true });
    try {
      return (
        db.prepare(`SELECT migration_name FROM "_prisma_migrations" ORDER BY migration_name`).all() as {
          migration_name: string;
        }[]
      ).map((r) => r.migration_name);
    } finally {
      db.close();
    }
  }
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (
      await c.query(`SELECT migration_name FROM "_prisma_migrations" ORDER BY migration_name`)
    ).rows.map((r) => r.migration_name as string);
  } finally {
    await c.end();
  }
}

/** Reads server-sent events until `enough` says stop; returns them with their ids. */
async function readEvents(
  url: string,
  cookie: string,
  lastEventId: string | null,
  enough: (events: { id: string | null; data: any }[]) => boolean,
) {
  const ac = new AbortController();
  const headers: Record<string, string> = { cookie };
  if (lastEventId) headers["last-event-id"] = lastEventId;
  // The repository's own stream (its page's subscription): its change log, resumable.
  const res = await fetch(`${url}/api/console/events?repo=acme/multi`, { headers, signal: ac.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const events: { id: string | null; data: any }[] = [];
  let buffer = "";
  const deadline = Date.now() + 15_000;
  while (!enough(events) && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value);
    let cut: number;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const id = block.match(/^id: (.*)$/m)?.[1] ?? null;
      const data = block.match(/^data: (.*)$/m)?.[1];
      if (data) events.push({ id, data: JSON.parse(data) });
    }
  }
  ac.abort();
  return events;
}

describe.each(DATABASE_KINDS)("several instances on one database (%s)", (kind) => {
  let a: TestBackend;
  let b: TestBackend;
  beforeAll(async () => {
    a = await startBackend({ kind });
    b = await startBackend({ databaseUrl: a.deps.db.url });
    await a.addRepo("acme/multi");
  });
  afterAll(async () => {
    await b?.close();
    await a?.stop();
  });

  it("answers /healthz and /readyz on every instance", async () => {
    for (const backend of [a, b]) {
      const health = await fetch(`${backend.url}/healthz`);
      expect([health.status, (await health.json()).data.status]).toEqual([200, "ok"]);
      const ready = await fetch(`${backend.url}/readyz`);
      expect([ready.status, (await ready.json()).data.status]).toEqual([200, "ready"]);
    }
  });

  it("a claim, a pause and a revocation made on one instance hold on the other at once", async () => {
    const token = await a.issueToken("acme/multi", "ann");
    const one = agentClient(a.url, token, "m-one");
    const two = agentClient(b.url, token, "m-two");
    const i1 = (await one.post({ type: "publish", prompt: "one" })).body.data.intentId;
    const i2 = (await two.post({ type: "publish", prompt: "two" })).body.data.intentId;
    expect((await one.post({ type: "scope", intentId: i1, paths: ["multi/app"] })).status).toBe(200);
    const clash = await two.post({ type: "scope", intentId: i2, paths: ["multi/app/x.ts"] });
    expect([clash.status, clash.body.error.code]).toEqual([409, "SCOPE_CONFLICT"]);

    const sessionId = (await a.deps.db.prisma.session.findFirstOrThrow({ where: { key: "m-two" } })).id;
    await admin.controlSession(a.deps, { sessionId, kind: "pause", actor: "ops" });
    const paused = await two.post({ type: "scope", intentId: i2, paths: ["multi/other"] });
    expect([paused.status, paused.body.error.code]).toEqual([423, "SESSION_PAUSED"]);

    const tokenId = (await a.deps.db.prisma.agentToken.findFirstOrThrow({ where: { person: "ann" } })).id;
    await admin.revokeToken(a.deps, tokenId);
    const revokedAt = Date.now();
    // A promised deadline: within the stated bound (store/changes: the backstop, 2 s) on the other
    // instance, and a second of room; today it is immediate (the time is printed below).
    let status = 0;
    while (
      Date.now() - revokedAt < 3_000 &&
      (status = (
        await fetch(`${b.url}/api/agent/session`, {
          headers: { authorization: `Bearer ${token}`, "x-cohent-session": "m-two" },
        })
      ).status) !== 401
    )
      await new Promise((r) => setTimeout(r, 50));
    expect(status).toBe(401);
    console.log(
      `multi-instance (${kind}): revocation refused on the other instance after ${Date.now() - revokedAt} ms`,
    );
  });

  it("a pause whose hint has not reached the other instance yet still refuses its claim", async () => {
    const token = await a.issueToken("acme/multi", "late");
    const one = agentClient(b.url, token, "m-late");
    const intentId = (await one.post({ type: "publish", prompt: "late" })).body.data.intentId;
    expect((await one.post({ type: "scope", intentId, paths: ["late/a"] })).status).toBe(200);
    // Written past the store, so no hint is sent at all: instance b's cached session still says active,
    // as it does while a real hint is in flight. The claim's transaction reads the row and refuses.
    const session = await a.deps.db.prisma.session.findFirstOrThrow({ where: { key: "m-late" } });
    await a.deps.db.prisma.session.update({
      where: { id: session.id },
      data: { control: "paused", controlReason: "Paused by ops." },
    });
    const paused = await one.post({ type: "scope", intentId, paths: ["late/b"] });
    expect([paused.status, paused.body.error?.code, paused.body.error?.message]).toEqual([
      423,
      "SESSION_PAUSED",
      "Paused by ops.",
    ]);
    const claims = await a.deps.db.prisma.claim.findMany({ where: { intentId } });
    expect(claims.map((c) => c.paths).join()).toBe('["late/a"]');
  });

  it("a cursor the change log holds but this instance has not been told of yet is taken; one past the log is refused", async () => {
    const token = await a.issueToken("acme/multi", "cursor");
    const one = agentClient(b.url, token, "m-cursor");
    const intentId = (await one.post({ type: "publish", prompt: "cursor" })).body.data.intentId;
    const first = await one.poll(intentId, "0");
    expect(first.status).toBe(200);
    // Another instance's event whose hint is still in flight: written past the store, so no hint goes
    // at all, and instance b's high-water cursor stays below it (on SQLite its probe sees the write).
    const repoId = (await a.deps.db.prisma.repository.findFirstOrThrow({ where: { name: "acme/multi" } })).id;
    const { seq } = await a.deps.db.prisma.event.create({
      data: { repoId, intentId, kind: "checkpoint", summary: "elsewhere", createdAt: new Date() },
    });
    // A client behind a load balancer polls b with the cursor a gave it.
    const taken = await one.poll(intentId, String(seq));
    expect([taken.status, taken.body.error?.code]).toEqual([200, undefined]);
    const ahead = await one.poll(intentId, String(seq + 1000));
    expect([ahead.status, ahead.body.error?.code]).toEqual([400, "INVALID_CURSOR"]);
  });

  it("the console's live stream resumes from Last-Event-ID on the other instance with no gap and no repeat", async () => {
    const token = await a.issueToken("acme/multi", "live");
    const agent = agentClient(a.url, token, "m-live");
    const consoleA = await signedInAdmin(a);
    const startSeq = await a.deps.store.journal.latestSeq(
      (await a.deps.db.prisma.repository.findFirstOrThrow({ where: { name: "acme/multi" } })).id,
    );
    const withSeq = (events: { id: string | null; data: any }[]) =>
      events.filter((e) => e.id && e.data.repo === "acme/multi");

    // First connection, on A: some changes arrive, then the browser drops.
    const firstPart = readEvents(a.url, consoleA.cookieHeader(), null, (ev) => withSeq(ev).length >= 3);
    await new Promise((r) => setTimeout(r, 300));
    for (let i = 0; i < 2; i++) await agent.post({ type: "publish", prompt: `live ${i}` });
    const first = withSeq(await firstPart);
    expect(first.length).toBeGreaterThanOrEqual(3);
    // Changes while disconnected, written on both instances.
    for (let i = 0; i < 3; i++)
      await agentClient([a, b][i % 2]!.url, token, "m-live").post({ type: "publish", prompt: `gap ${i}` });
    const repoId = (await a.deps.db.prisma.repository.findFirstOrThrow({ where: { name: "acme/multi" } })).id;
    const all = (
      await a.deps.db.prisma.event.findMany({
        where: { repoId, seq: { gt: startSeq } },
        orderBy: { seq: "asc" },
        select: { seq: true },
      })
    ).map((e) => e.seq);

    // Reconnect to B with the last id: exactly the rest.
    const resumed = withSeq(
      await readEvents(
        b.url,
        consoleA.cookieHeader(),
        first[first.length - 1]!.id,
        (ev) => withSeq(ev).length >= all.length - first.length,
      ),
    );
    const seen = [...first, ...resumed].map((e) => e.data.seq as number);
    expect(seen).toEqual(all);
    expect(new Set(seen).size).toBe(seen.length);
    console.log(
      `live stream (${kind}): ${first.length} events on A, ${resumed.length} resumed on B, ${all.length} in the change log`,
    );
  });
});

describe.each(DATABASE_KINDS)("migrations with two instances starting at once (%s)", (kind) => {
  it("both start, and each migration is applied exactly once", async () => {
    const db = await freshDatabaseUrl(kind);
    const procs: ChildProcess[] = [];
    try {
      const started = await Promise.all([serve(db.url), serve(db.url)]);
      procs.push(...started.map((s) => s.child));
      for (const s of started) expect((await fetch(`${s.url}/readyz`)).status).toBe(200);
      const names = await appliedMigrations(db.url);
      expect(names.length).toBeGreaterThan(0);
      expect(new Set(names).size).toBe(names.length);
      console.log(
        `migrations (${kind}): 2 instances started together, ${names.length} migrations applied once each`,
      );
    } finally {
      await Promise.all(procs.map((p) => stopProcess(p)));
      await db.drop();
    }
  });
});

/**
 * Two processes opening one fresh SQLite file at the same instant, as two `cohent serve` or a serve
 * and an admin command do: the switch to WAL deadlocks there and SQLite fails one of them at once,
 * whatever its busy timeout (CI: "cohent serve exited 1: INTERNAL: database is locked"). Each child
 * runs the rounds on a shared clock, one fresh file a round, and says what it applied.
 */
const START_CHILD = `
import { createInterface } from "node:readline";
import { migrate } from "./backend/src/store/migrate.ts";
import { openDb } from "./backend/src/store/db.ts";
const [dir, rounds] = [process.argv[1], Number(process.argv[2])];
const lines = createInterface({ input: process.stdin });
process.stdout.write("ready\\n");
const base = Number(await new Promise((r) => lines.once("line", r)));
lines.close();
for (let i = 0; i < rounds; i++) {
  while (Date.now() < base + i * 200 - 5) await new Promise((r) => setTimeout(r, 1));
  while (Date.now() < base + i * 200); // spun, not slept: both start within microseconds
  const url = "file:" + dir + "/round" + i + ".sqlite";
  try {
    const applied = (await migrate(url)).length;
    await (await openDb(url)).close();
    process.stdout.write(JSON.stringify({ i, applied }) + "\\n");
  } catch (e) {
    process.stdout.write(JSON.stringify({ i, error: String(e) }) + "\\n");
  }
}
`;

describe("two processes opening one fresh SQLite file at once", () => {
  it("both open it, every time, and the migrations are applied once", async () => {
    const ROUNDS = 16;
    const dir = mkdtempSync(path.join(os.tmpdir(), "cohent-start-"));
    const children = [0, 1].map(() =>
      spawn(
        process.execPath,
        ["--import", "tsx", "--input-type=module", "-e", START_CHILD, dir, String(ROUNDS)],
        {
          cwd: path.resolve(import.meta.dirname, "../.."),
          stdio: ["pipe", "pipe", "inherit"],
        },
      ),
    );
    const outputs = children.map((c) => {
      let out = "";
      c.stdout!.on("data", (d: Buffer) => (out += d.toString()));
      return {
        ready: new Promise<void>((resolve, reject) => {
          c.stdout!.on("data", () => out.includes("ready\n") && resolve());
          c.once("exit", (code) => reject(new Error(`a child exited ${code} before it was ready`)));
        }),
        done: new Promise<string>((r) => c.once("exit", () => r(out))),
      };
    });
    try {
      await Promise.all(outputs.map((o) => o.ready));
      for (const c of children) c.stdin!.end(`${Date.now() + 100}\n`);
      const reports = (await Promise.all(outputs.map((o) => o.done))).map((out) =>
        out
          .split("\n")
          .filter((l) => l.startsWith("{"))
          .map((l) => JSON.parse(l) as { i: number; applied?: number; error?: string }),
      );
      const migrations = migrationsFor("sqlite").length;
      for (const report of reports) {
        expect(report.filter((r) => r.error)).toEqual([]);
        expect(report).toHaveLength(ROUNDS);
      }
      for (let i = 0; i < ROUNDS; i++) {
        expect(reports.map((report) => report[i]!.applied).sort()).toEqual([0, migrations]);
      }
    } finally {
      for (const c of children) c.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
