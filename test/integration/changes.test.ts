import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import { createStore, DEFAULT_LEASE, migrate, openDb, type Db, type Store } from "@cohent/backend";
import { addRepo, controlSession } from "../../backend/src/operations/people/admin.js";
import { issueToken } from "../../backend/src/operations/people/admin.js";
import { authenticate } from "../../backend/src/operations/agent/session.js";
import { publish } from "../../backend/src/operations/agent/publish.js";
import { PublishRequest } from "@cohent/protocol";
import type { Deps } from "../../backend/src/operations/deps.js";
import { freshDatabaseUrl } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";

/**
 * Change notification across two handles on one database: for SQLite two
 * connections (the admin CLI's process is another connection), for
 * PostgreSQL two instances (LISTEN/NOTIFY). The cursor query stays the truth.
 */
describe.each(DATABASE_KINDS)("change notification (%s)", (kind) => {
  let one: Db;
  let two: Db;
  let storeOne: Store;
  let storeTwo: Store;
  let drop: () => Promise<void>;
  let repoId = "";
  let token = "";
  const deps = (store: Store) => ({ store, clock: () => new Date(), lease: DEFAULT_LEASE, log: pino({ level: "silent" }) }) satisfies Deps;

  beforeAll(async () => {
    const fresh = await freshDatabaseUrl(kind);
    drop = fresh.drop;
    await migrate(fresh.url);
    one = await openDb(fresh.url);
    two = await openDb(fresh.url);
    storeOne = createStore(one);
    storeTwo = createStore(two);
    repoId = (await addRepo(deps(storeOne), { name: "acme/changes" })).id;
    token = (await issueToken(deps(storeOne), { repo: "acme/changes", person: "ana" })).token;
  });
  afterAll(async () => {
    await one.close();
    await two.close();
    await drop();
  });

  const publishOn = async (store: Store, key: string) => {
    const caller = await authenticate(deps(store), `Bearer ${token}`, key);
    return publish(deps(store), caller, PublishRequest.parse({ type: "publish", prompt: "a task" }));
  };

  it("a write by this process wakes a waiter at once and moves the cursor", async () => {
    const before = await storeOne.changes.cursor(repoId);
    const started = Date.now();
    const waiting = storeOne.changes.wait(repoId, before, 5_000);
    await publishOn(storeOne, "s1");
    const after = await waiting;
    expect(after).toBeGreaterThan(before);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await storeOne.changes.cursor(repoId)).toBe(after);
  });

  it("a write by another connection or instance wakes a waiter within the bound, and the cached cursor follows", async () => {
    const before = await storeOne.changes.cursor(repoId);
    expect(await storeOne.changes.cursor(repoId)).toBe(before); // from memory
    const waiting = storeOne.changes.wait(repoId, before, 5_000);
    const started = Date.now();
    await publishOn(storeTwo, "s2");
    const after = await waiting;
    expect(after).toBeGreaterThan(before);
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(await storeOne.changes.cursor(repoId)).toBe(after);
  });

  it("a control change elsewhere changes this process's control stamp", async () => {
    const caller = await authenticate(deps(storeOne), `Bearer ${token}`, "s3");
    const stamp = storeOne.changes.stamp(repoId, "control");
    await controlSession(deps(storeTwo), { sessionId: caller.session.id, kind: "pause", actor: "lead", reason: "stop" });
    const deadline = Date.now() + 1_500;
    while (storeOne.changes.stamp(repoId, "control") === stamp && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(storeOne.changes.stamp(repoId, "control")).not.toBe(stamp);
  });

  it("a wait with nothing new answers the unchanged cursor when its time is up", async () => {
    const before = await storeOne.changes.cursor(repoId);
    const started = Date.now();
    expect(await storeOne.changes.wait(repoId, before, 150)).toBe(before);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });
});
