import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import { CheckpointRequest, IntentRequest, PublishRequest } from "@cohent/protocol";
import { DEFAULT_LEASE, type Store } from "@cohent/backend";
import { addRepo, issueToken } from "../../backend/src/operations/people/admin.js";
import { authenticate } from "../../backend/src/operations/agent/session.js";
import { publish } from "../../backend/src/operations/agent/publish.js";
import { intent } from "../../backend/src/operations/agent/intent.js";
import { checkpoint } from "../../backend/src/operations/agent/checkpoint.js";
import { poll } from "../../backend/src/operations/agent/poll.js";
import { recentEvents } from "../../backend/src/live/recent-events.js";
import type { Deps } from "../../backend/src/operations/deps.js";
import { openTwoHandles, type TwoHandles } from "../helpers/two-handles.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";

/**
 * A crowd of long-polls woken by one write (live/recent-events): each asks
 * what is new after its own cursor, and the change log is read once for all
 * of them, not once each. With 200 agents, every write woke 200 waiters and
 * each read the log itself (33 000 reads in a 20 s window on SQLite, each
 * one blocking the event loop; on PostgreSQL 200 pooled queries per write).
 */
describe.each(DATABASE_KINDS)("waiters woken together (%s)", (kind) => {
  let handles: TwoHandles;
  let store: Store;
  const deps = {
    get store() {
      return store;
    },
    clock: () => new Date(),
    lease: DEFAULT_LEASE,
    log: pino({ level: "silent" }),
  } as Deps;

  beforeAll(async () => {
    handles = await openTwoHandles(kind);
    store = handles.stores[0];
    await addRepo(deps, { name: "acme/crowd" });
  });
  afterAll(() => handles?.close());

  it("read the change log once for the crowd, and each gets what a lone poll gets", async () => {
    const { token } = await issueToken(deps, { repo: "acme/crowd", person: "dee" });
    const waiters: { caller: Awaited<ReturnType<typeof authenticate>>; intentId: string; cursor: string }[] =
      [];
    // Twenty agents on unrelated work, each polled once as it joins, so their cursors spread over the log.
    for (let i = 0; i < 20; i++) {
      const caller = await authenticate(deps, `Bearer ${token}`, `crowd-${i}`);
      const { intentId } = await publish(
        deps,
        caller,
        PublishRequest.parse({ type: "publish", prompt: `task ${i}` }),
      );
      await intent(
        deps,
        caller,
        IntentRequest.parse({
          type: "intent",
          intentId,
          intent: { objective: `module ${i}`, outputs: [`out-${i}`] },
        }),
      );
      for (let k = 0; k < 4; k++)
        await checkpoint(
          deps,
          caller,
          CheckpointRequest.parse({ type: "checkpoint", intentId, status: "working", summary: `step ${k}` }),
        );
      const { cursor } = await poll(deps, caller, { intentId, cursor: "0" });
      waiters.push({ caller, intentId, cursor });
    }
    // Each has polled since the last of them joined (a long-poll's first answer), so what it learned is current.
    for (const w of waiters) w.cursor = (await poll(deps, w.caller, w)).cursor;
    // One more agent's progress wakes them all.
    const last = waiters[waiters.length - 1]!;
    await checkpoint(
      deps,
      last.caller,
      CheckpointRequest.parse({
        type: "checkpoint",
        intentId: last.intentId,
        status: "working",
        summary: "again",
      }),
    );
    const before = handles.dbs[0].read.count;
    const answers = await Promise.all(waiters.map((w) => poll(deps, w.caller, w)));
    const reads = handles.dbs[0].read.count - before;
    // The cursor's high-water mark and the log after the oldest cursor: a few reads, not one per waiter.
    // (A hint meanwhile, the store's 2 s backstop on PostgreSQL, may add a read or two: still not one each.)
    expect(reads).toBeLessThan(waiters.length / 2);
    const head = await store.journal.latestSeq(last.caller.repo.id);
    for (const a of answers) {
      expect(a.packet).toBeNull();
      expect(Number(a.cursor)).toBe(head);
    }
  });

  it("the held log is the store's: complete after a cursor, up to what the caller saw, another handle's writes included", async () => {
    const { token } = await issueToken(deps, { repo: "acme/crowd", person: "eli" });
    const other = { ...deps, store: handles.stores[1] } as Deps;
    const caller = await authenticate(other, `Bearer ${token}`, "feed-writer");
    const repoId = caller.repo.id;
    const feed = recentEvents(store);
    const start = await store.journal.latestSeq(repoId);
    expect(await feed.after(repoId, start, 100)).toEqual([]);
    // Written on the other handle (another process on SQLite, another instance on PostgreSQL), no hint awaited.
    const { intentId } = await publish(
      other,
      caller,
      PublishRequest.parse({ type: "publish", prompt: "feed" }),
    );
    for (let k = 0; k < 3; k++)
      await checkpoint(
        other,
        caller,
        CheckpointRequest.parse({ type: "checkpoint", intentId, status: "working", summary: `feed ${k}` }),
      );
    const head = await handles.stores[1].journal.latestSeq(repoId);
    // Asked with the head the caller saw, it reads again even before the hint arrives.
    const held = await feed.after(repoId, start, 100, head);
    expect(held).toEqual(await handles.stores[1].journal.tailAfter(repoId, start, 100));
    expect(held!.map((e) => e.kind)).toEqual(["intent.published", "checkpoint", "checkpoint", "checkpoint"]);
    // A page, and a page after a cursor inside what is held.
    expect(await feed.after(repoId, start, 2, head)).toEqual(held!.slice(0, 2));
    expect(await feed.after(repoId, held![1]!.seq, 100, head)).toEqual(held!.slice(2));
    // Older than what it holds: the caller asks the store.
    expect(await feed.after(repoId, start - 1, 100, head)).toBeNull();
  });
});
