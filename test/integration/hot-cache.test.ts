import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import { CheckpointRequest, CohentError, IntentRequest, PublishRequest } from "@cohent/protocol";
import { createStore, DEFAULT_LEASE, type Store } from "@cohent/backend";
import {
  addRepo,
  controlSession,
  issueToken,
  revokeToken,
} from "../../backend/src/operations/people/admin.js";
import { authenticate } from "../../backend/src/operations/agent/session.js";
import { publish } from "../../backend/src/operations/agent/publish.js";
import { intent } from "../../backend/src/operations/agent/intent.js";
import { checkpoint } from "../../backend/src/operations/agent/checkpoint.js";
import { poll } from "../../backend/src/operations/agent/poll.js";
import type { Deps } from "../../backend/src/operations/deps.js";
import { openTwoHandles, type TwoHandles } from "../helpers/two-handles.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";

/**
 * The hot path's memory (store/memory) against a second handle on the same
 * database: another process on SQLite (the admin CLI), another instance on
 * PostgreSQL. What one changes, the other's cached reads show within the
 * bound of store/changes.
 */
/** Publishes a prompt for the caller and declares its intent; returns what publish answered. */
async function declared(
  d: Deps,
  caller: Awaited<ReturnType<typeof authenticate>>,
  prompt: string,
  spec: Record<string, unknown>,
) {
  const published = await publish(d, caller, PublishRequest.parse({ type: "publish", prompt }));
  await intent(
    d,
    caller,
    IntentRequest.parse({ type: "intent", intentId: published.intentId, intent: spec }),
  );
  return published;
}

describe.each(DATABASE_KINDS)("the hot path's caches (%s)", (kind) => {
  let handles: TwoHandles;
  let serverStore: Store;
  let adminStore: Store;
  let offset = 0;
  const deps = (store: Store) =>
    ({
      store,
      clock: () => new Date(Date.now() + offset),
      lease: DEFAULT_LEASE,
      log: pino({ level: "silent" }),
    }) satisfies Deps;
  const code = async (p: Promise<unknown>) =>
    p.then(
      () => "ok",
      (e: unknown) => (e instanceof CohentError ? e.code : String(e)),
    );
  /**
   * Retries until the other handle's hint arrived (at once on SQLite; the NOTIFY's delivery on PostgreSQL).
   * A promised deadline: 2.5 s as in changes.test.ts (WAKE_MS), where a hint takes under 0.1 s.
   */
  const eventually = async <T>(read: () => Promise<T>, ok: (v: T) => boolean) => {
    const deadline = Date.now() + 2_500;
    let v = await read();
    while (!ok(v) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
      v = await read();
    }
    return v;
  };

  const nextTurn = () => new Promise((r) => setImmediate(r));

  beforeAll(async () => {
    handles = await openTwoHandles(kind);
    [serverStore, adminStore] = handles.stores;
    await addRepo(deps(adminStore), { name: "acme/hot" });
  });
  afterAll(() => handles?.close());

  it("a token revoked elsewhere is refused by the cached read", async () => {
    const { token, id: tokenId } = await issueToken(deps(adminStore), { repo: "acme/hot", person: "ana" });
    const call = () => code(authenticate(deps(serverStore), `Bearer ${token}`, "rev-1"));
    expect(await call()).toBe("ok");
    expect(await call()).toBe("ok"); // from memory now
    await revokeToken(deps(adminStore), tokenId);
    // SQLite: data_version is probed at the first read of each event-loop turn.
    await nextTurn();
    if (kind === "sqlite") expect(await call()).toBe("UNAUTHENTICATED");
    expect(await eventually(call, (c) => c === "UNAUTHENTICATED")).toBe("UNAUTHENTICATED");
  });

  it("a pause given elsewhere reaches the cached session read", async () => {
    const { token } = await issueToken(deps(adminStore), { repo: "acme/hot", person: "bo" });
    const read = () => authenticate(deps(serverStore), `Bearer ${token}`, "pause-1");
    const first = await read();
    expect((await read()).session.control).toBe("active");
    await controlSession(deps(adminStore), {
      sessionId: first.session.id,
      kind: "pause",
      actor: "lead",
      reason: "hold on",
    });
    await nextTurn();
    if (kind === "sqlite") expect((await read()).session.control).toBe("paused");
    expect((await eventually(read, (c) => c.session.control === "paused")).session).toMatchObject({
      control: "paused",
      controlReason: "hold on",
    });
  });

  it("renewals are written at most every interval, and the answer carries the renewed lease", async () => {
    const { token } = await issueToken(deps(adminStore), { repo: "acme/hot", person: "cy" });
    const read = () => authenticate(deps(serverStore), `Bearer ${token}`, "renew-1");
    const first = await read();
    const stored = async () => (await adminStore.sessions.get(first.session.id))!.lastSeenAt.getTime();
    const written = await stored();
    offset += 1_000;
    const second = await read();
    expect(second.session.lastSeenAt.getTime()).toBeGreaterThan(written);
    expect(await stored()).toBe(written); // coalesced
    offset += 15_000;
    const third = await read();
    expect(await stored()).toBe(third.session.lastSeenAt.getTime());
  });

  it("a peer's new intent that names nothing the caller looks up takes the quick path; one that does, the full path", async () => {
    const issued = await Promise.all(
      ["gil", "hal", "ivy"].map((person) => issueToken(deps(adminStore), { repo: "acme/hot", person })),
    );
    const d = deps(serverStore);
    const a = await authenticate(d, `Bearer ${issued[0]!.token}`, "names-a");
    const { intentId } = await declared(d, a, "search", { objective: "search api", outputs: ["search-api"] });
    const first = await poll(d, a, { intentId, cursor: "0" });
    // Count the caller's transactions: the full path resolves in one, the quick path runs none.
    const tx = serverStore.tx;
    let full = 0;
    serverStore.tx = ((fn: Parameters<typeof tx>[0]) => (full++, tx.call(serverStore, fn))) as typeof tx;
    try {
      const h = await authenticate(deps(adminStore), `Bearer ${issued[1]!.token}`, "names-h");
      await declared(deps(adminStore), h, "billing", { objective: "billing", outputs: ["billing"] });
      const quick = await eventually(
        () => poll(d, a, { intentId, cursor: first.cursor }),
        (r) => Number(r.cursor) > Number(first.cursor),
      );
      expect([quick.packet, full]).toEqual([null, 0]);

      const i = await authenticate(deps(adminStore), `Bearer ${issued[2]!.token}`, "names-i");
      const peer = await declared(deps(adminStore), i, "search ui", {
        objective: "search ui",
        dependsOn: ["Search-API"],
      });
      const seen = await eventually(
        () => poll(d, a, { intentId, cursor: quick.cursor }),
        (r) => r.packet !== null,
      );
      expect(seen.packet?.changes.some((c) => c.intentId === peer.intentId)).toBe(true);
      expect(full).toBeGreaterThan(0);
    } finally {
      serverStore.tx = tx;
    }
  });

  it("a poll after the caller's own checkpoint takes the quick path: no packet, the cursor past it; a peer's change still reaches it", async () => {
    const { token: ta } = await issueToken(deps(adminStore), { repo: "acme/hot", person: "dee" });
    const { token: tb } = await issueToken(deps(adminStore), { repo: "acme/hot", person: "eli" });
    const d = deps(serverStore);
    const a = await authenticate(d, `Bearer ${ta}`, "own-a");
    const { intentId } = await declared(d, a, "a task", {
      objective: "build the cart",
      outputs: ["cart-api"],
    });
    const start = await poll(d, a, { intentId, cursor: "0" });
    const before = Number(start.cursor);
    await checkpoint(
      d,
      a,
      CheckpointRequest.parse({ type: "checkpoint", intentId, status: "working", summary: "step" }),
    );
    const own = await poll(d, a, { intentId, cursor: String(before) });
    expect(own.packet).toBeNull();
    expect(Number(own.cursor)).toBeGreaterThan(before);
    expect(await poll(d, a, { intentId, cursor: String(before) })).toEqual(own);

    // A related peer, on the other handle, declares it depends on the caller's output: the poll reports it.
    const b = await authenticate(deps(adminStore), `Bearer ${tb}`, "own-b");
    const peer = await declared(deps(adminStore), b, "b task", {
      objective: "cart ui",
      dependsOn: ["cart-api"],
    });
    const seen = await eventually(
      () => poll(d, a, { intentId, cursor: own.cursor }),
      (r) => r.packet !== null,
    );
    expect(seen.packet?.changes.some((c) => c.intentId === peer.intentId)).toBe(true);

    // An unrelated peer's progress: the quick answer is what a store with no memory (the full path) answers.
    const { token: tc } = await issueToken(deps(adminStore), { repo: "acme/hot", person: "fay" });
    const c = await authenticate(deps(adminStore), `Bearer ${tc}`, "own-c");
    const other = await declared(deps(adminStore), c, "c task", { objective: "docs", outputs: ["docs"] });
    const mid = await poll(d, a, { intentId, cursor: seen.cursor });
    await checkpoint(
      deps(adminStore),
      c,
      CheckpointRequest.parse({
        type: "checkpoint",
        intentId: other.intentId,
        status: "working",
        summary: "docs step",
      }),
    );
    await checkpoint(
      deps(adminStore),
      b,
      CheckpointRequest.parse({
        type: "checkpoint",
        intentId: peer.intentId,
        status: "working",
        summary: "ui step",
      }),
    );
    const fresh = createStore(handles.dbs[1]); // no memory of earlier polls: every answer takes the full path
    const full = await poll(deps(fresh), a, { intentId, cursor: mid.cursor });
    const quick = await eventually(
      () => poll(d, a, { intentId, cursor: mid.cursor }),
      (r) => r.cursor === full.cursor,
    );
    expect(quick.cursor).toBe(full.cursor);
    // The related peer's checkpoint is reported by both; the unrelated one by neither.
    expect(full.packet?.changes.map((x) => x.intentId)).toEqual([peer.intentId]);
    expect(quick.packet?.changes.map((x) => x.intentId)).toEqual([peer.intentId]);
  });
});
