import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBackend, type TestBackend } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";

const WRITERS = 12;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A cursor must never move past an event that commits later. Writers append
 * events and linger before committing; a reader keeps reading "after my
 * cursor" and advancing it. It must end up having seen every event. On
 * PostgreSQL the writers are spread over two instances sharing the database.
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
    const seen = new Set<number>();
    let cursor = 0;
    let writing = true;
    const read = (async () => {
      while (writing) {
        const rows = await reader.eventsAfter(repoId, cursor, 1_000);
        for (const r of rows) seen.add(r.seq);
        if (rows.length) cursor = rows[rows.length - 1]!.seq;
        await sleep(2);
      }
    })();
    const written = await Promise.all(
      Array.from({ length: WRITERS }, (_, i) =>
        backends[i % backends.length]!.deps.store.tx(async (t) => {
          await t.journal.addEvent({
            repoId,
            intentId: `wki_w${i}`,
            kind: "test",
            summary: `writer ${i}`,
            at: new Date(),
          });
          const seq = await t.journal.latestSeq(repoId);
          await sleep(30 + ((i * 37) % 50)); // linger: a later writer may commit first
          return seq;
        }),
      ),
    );
    await sleep(50);
    writing = false;
    await read;
    const rest = await reader.eventsAfter(repoId, cursor, 1_000);
    expect(rest, "every event was behind the cursor by the end").toEqual([]);
    expect([...seen].sort((a, b) => a - b)).toEqual([...written].sort((a, b) => a - b));
  });
});
