import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import { DEFAULT_LEASE, type Store } from "@cohent/backend";
import { addRepo, controlSession } from "../../backend/src/operations/people/admin.js";
import { issueToken } from "../../backend/src/operations/people/admin.js";
import { authenticate } from "../../backend/src/operations/agent/session.js";
import { publish } from "../../backend/src/operations/agent/publish.js";
import { PublishRequest } from "@cohent/protocol";
import type { Deps } from "../../backend/src/operations/deps.js";
import { openTwoHandles, type TwoHandles } from "../helpers/two-handles.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";

/**
 * Change notification across two handles on one database: for SQLite two
 * connections (the admin CLI's process is another connection), for
 * PostgreSQL two instances (LISTEN/NOTIFY). The cursor query stays the truth.
 */
describe.each(DATABASE_KINDS)("change notification (%s)", (kind) => {
  let handles: TwoHandles;
  let storeOne: Store;
  let storeTwo: Store;
  let repoId = "";
  let token = "";
  const deps = (store: Store) =>
    ({ store, clock: () => new Date(), lease: DEFAULT_LEASE, log: pino({ level: "silent" }) }) satisfies Deps;

  beforeAll(async () => {
    handles = await openTwoHandles(kind);
    [storeOne, storeTwo] = handles.stores;
    repoId = (await addRepo(deps(storeOne), { name: "acme/changes" })).id;
    token = (await issueToken(deps(storeOne), { repo: "acme/changes", person: "ana" })).token;
  });
  afterAll(() => handles?.close());

  const publishOn = async (store: Store, key: string) => {
    const caller = await authenticate(deps(store), `Bearer ${token}`, key);
    return publish(deps(store), caller, PublishRequest.parse({ type: "publish", prompt: "a task" }));
  };

  /**
   * A waiter on storeOne is woken by a publish through `writer`, and storeOne's cursor follows. The
   * promised bound (store/changes): this process's commit at once; another's within PROBE_MS (50 ms)
   * on SQLite, the NOTIFY's delivery on PostgreSQL. Measured here: each whole test in 20 to 102 ms.
   * WAKE_MS only tells a hint from none (the wait's own end, 5 s; the blind backstop, 10 s): 25 times
   * the measurement, half the wait.
   */
  const WAKE_MS = 2_500;
  const wakesWithin = async (writer: Store, key: string) => {
    const before = await storeOne.changes.cursor(repoId);
    // The held cursor is the database's latest sequence number (that it is held in memory while no
    // hint comes: test/unit/changes.test.ts, "the cursor").
    expect(before).toBe(await storeOne.changes.latest(repoId));
    const started = Date.now();
    const waiting = storeOne.changes.wait(repoId, before, 5_000);
    await publishOn(writer, key);
    const after = await waiting;
    expect(after).toBeGreaterThan(before);
    expect(Date.now() - started).toBeLessThan(WAKE_MS);
    expect(await storeOne.changes.cursor(repoId)).toBe(after);
  };

  it("a write by this process wakes a waiter at once and moves the cursor", async () => {
    await wakesWithin(storeOne, "s1");
  });

  it("a write by another connection or instance wakes a waiter within the bound, and the cached cursor follows", async () => {
    await wakesWithin(storeTwo, "s2");
  });

  it("a control change elsewhere changes this process's control stamp", async () => {
    const caller = await authenticate(deps(storeOne), `Bearer ${token}`, "s3");
    const stamp = storeOne.changes.stamp(repoId, "control");
    await controlSession(deps(storeTwo), {
      sessionId: caller.session.id,
      kind: "pause",
      actor: "lead",
      reason: "stop",
    });
    const deadline = Date.now() + WAKE_MS; // the same promise as a waiter's wake (WAKE_MS)
    while (storeOne.changes.stamp(repoId, "control") === stamp && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    expect(storeOne.changes.stamp(repoId, "control")).not.toBe(stamp);
  });

  it("a wait with nothing new answers the unchanged cursor when its time is up", async () => {
    const before = await storeOne.changes.cursor(repoId);
    const started = Date.now();
    expect(await storeOne.changes.wait(repoId, before, 150)).toBe(before);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });
});
