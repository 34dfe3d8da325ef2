import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBackend, type TestBackend } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";

const WRITERS = 12;
/** Writers that roll back after lingering: 2, 5, 8, 11 (two on each instance). */
const rollsBack = (i: number) => i % 3 === 2;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A cursor must never move past an event that commits later. Writers append
 * events and linger before committing (some then roll back); a reader keeps
 * reading "after my cursor" and advancing it. It must end up having seen
 * every committed event, each as committed, and nothing else. On PostgreSQL
 * the writers are spread over two instances sharing the database, and the
 * rule rests on the repository lock (a later writer may take a sequence
 * number first and commit last). On SQLite the writers take turns on the one
 * write connection, so no later writer commits first; there the rule rests on
 * reads outside a transaction going to the connection that sees only what is
 * committed: a rolled-back event's sequence number is given again to the
 * next writer, so a reader that saw it uncommitted would be past the event
 * that takes it, and would hold a summary that never committed.
 */
describe.each(DATABASE_KINDS)("the change log's cursor (%s)", (kind) => {
  const backends: TestBackend[] = [];
  let repoId = "";
  beforeAll(async () => {
    const first = await startBackend({ kind });
    backends.push(first);
    if (kind === "postgres") backends.push(await startBackend({ databaseUrl: first.deps.db.url }));
    await first.addRepo("acme/cursor");
    repoId = (await first.deps.store.repos.byName("acme/cursor"))!.id;
  });
  afterAll(async () => {
    for (const b of backends.reverse()) await b.stop();
  });

  it("a reader advancing its cursor sees every event, however the writers' commits interleave", async () => {
    const reader = backends[0]!.deps.store.journal;
    const seen = new Map<number, string>();
    let cursor = 0;
    let writing = true;
    const read = (async () => {
      while (writing) {
        const rows = await reader.eventsAfter(repoId, cursor, 1_000);
        for (const r of rows) seen.set(r.seq, r.summary);
        if (rows.length) cursor = rows[rows.length - 1]!.seq;
        await sleep(2);
      }
    })();
    const written = await Promise.all(
      Array.from({ length: WRITERS }, (_, i) =>
        backends[i % backends.length]!.deps.store.tx(async (t) => {
          const summary = `writer ${i}`;
          await t.journal.addEvent({ repoId, intentId: `wki_w${i}`, kind: "test", summary, at: new Date() });
          const seq = await t.journal.latestSeq(repoId);
          await sleep(30 + ((i * 37) % 50)); // linger: a later writer may commit first
          if (rollsBack(i)) throw new Error("rolled back");
          return [seq, summary] as const;
        }).catch((e: Error) => {
          if (e.message !== "rolled back") throw e;
          return null;
        }),
      ),
    );
    await sleep(50);
    writing = false;
    await read;
    const rest = await reader.eventsAfter(repoId, cursor, 1_000);
    expect(rest, "every event was behind the cursor by the end").toEqual([]);
    const committed = written.filter((w) => w !== null);
    expect(committed).toHaveLength(
      WRITERS - Array.from({ length: WRITERS }, (_, i) => i).filter(rollsBack).length,
    );
    const bySeq = (a: readonly [number, string], b: readonly [number, string]) => a[0] - b[0];
    expect(
      [...seen].sort(bySeq),
      "the reader saw each committed event as committed, and nothing else",
    ).toEqual(committed.map(([seq, summary]) => [seq, summary] as const).sort(bySeq));
  });
});
