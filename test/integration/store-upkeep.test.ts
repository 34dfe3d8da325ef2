import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStore, migrate, openDb, type Db, type Store, type Tx } from "@cohent/backend";
import { freshDatabaseUrl } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";

/**
 * The store contract of the repository list's pages and of the retention rule (store/repo-pages,
 * store/retention), on SQLite and on PostgreSQL, outside a transaction and inside one. Each answer is
 * checked against another path: the rows written, or the older per-repository reads (reads.repoSummary).
 * A method of these two concerns that no case calls fails the last test.
 */
describe.each(DATABASE_KINDS)("store contract: repository pages and retention (%s)", (kind) => {
  let db: Db;
  let store: Store;
  let drop: () => Promise<void>;
  const called = new Set<string>();
  const recording = <T extends object>(t: T): T =>
    new Proxy(t, {
      get: (target, concern: string) => {
        const c = (target as Record<string, unknown>)[concern];
        if (typeof c !== "object" || c === null) return c;
        return new Proxy(c, {
          get: (o, m: string) => {
            const f = (o as Record<string, unknown>)[m];
            if (typeof f === "function") called.add(`${concern}.${m}`);
            return f;
          },
        });
      },
    });
  let s: Store;
  const tx = <T>(fn: (t: Tx) => Promise<T>) => s.tx((t) => fn(recording(t)));
  const t0 = new Date("2026-01-01T10:00:00.000Z");
  const day = (d: number) => new Date(t0.getTime() + d * 86_400_000);

  // Names sorted by the database's byte order: upper case before lower case, `-` and `.` before digits.
  const NAMES = ["Acme/Zeta", "acme/a_b", "acme/ab", "acme/cart", "beta/Cart-2", "beta/x.y", "gamma/axb"];

  beforeAll(async () => {
    const fresh = await freshDatabaseUrl(kind);
    drop = fresh.drop;
    await migrate(fresh.url);
    db = await openDb(fresh.url);
    store = createStore(db);
    s = recording(store);
    let n = 0;
    for (const name of [...NAMES].reverse())
      await tx((t) => t.repos.create({ id: `rep_${n++}`, name, createdAt: t0 }));
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  it("searches case-insensitively with LIKE's wildcards taken literally, counts, and pages by name", async () => {
    const sorted = [...NAMES].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(await s.repoPages.matching("", 0, null)).toEqual({ total: NAMES.length, names: sorted });
    expect(await s.repoPages.matching("", 2, 3)).toEqual({ total: NAMES.length, names: sorted.slice(2, 5) });
    expect(await s.repoPages.matching("", 6, 3)).toEqual({ total: NAMES.length, names: sorted.slice(6) });
    expect(await s.repoPages.matching("", 50, 3)).toEqual({ total: NAMES.length, names: [] });
    // Case-insensitive, on both databases (PostgreSQL's LIKE alone is not).
    expect(await tx((t) => t.repoPages.matching("CART", 0, 10))).toEqual({
      total: 2,
      names: ["acme/cart", "beta/Cart-2"],
    });
    expect((await s.repoPages.matching("acme/", 0, 10)).names).toEqual([
      "Acme/Zeta",
      "acme/a_b",
      "acme/ab",
      "acme/cart",
    ]);
    // `_` and `%` are the characters themselves, not LIKE's wildcards; `\` too.
    expect(await s.repoPages.matching("a_b", 0, 10)).toEqual({ total: 1, names: ["acme/a_b"] });
    expect(await s.repoPages.matching("%", 0, 10)).toEqual({ total: 0, names: [] });
    expect(await s.repoPages.matching("\\", 0, 10)).toEqual({ total: 0, names: [] });
    expect(await s.repoPages.matching(".", 0, 10)).toEqual({ total: 1, names: ["beta/x.y"] });
    expect(await s.repoPages.matching("a", 1, 2)).toEqual({ total: 7, names: ["acme/a_b", "acme/ab"] });
  });

  it("reads a page's rows in one go, as the per-repository reads count them", async () => {
    const cart = (await s.repos.byName("acme/cart"))!;
    const ab = (await s.repos.byName("acme/ab"))!;
    for (const [id, person, at] of [
      ["tok_1", "zoe", 1],
      ["tok_2", "ana", 2],
      ["tok_3", "zoe", 3],
      ["tok_4", "bo", 4],
    ] as const)
      await tx((t) =>
        t.tokens.create({ id, repoId: cart.id, person, client: null, tokenHash: `h_${id}`, at: day(at) }),
      );
    await tx((t) => t.tokens.revoke("tok_4", day(5)));
    await tx((t) =>
      t.tokens.create({
        id: "tok_5",
        repoId: ab.id,
        person: "cy",
        client: null,
        tokenHash: "h_5",
        at: day(1),
      }),
    );
    const session = await s.sessions.renew({
      repoId: cart.id,
      tokenId: "tok_1",
      key: "k1",
      client: null,
      newId: () => "ses_1",
      at: day(6),
    });
    for (const [id, closed] of [
      ["wki_1", false],
      ["wki_2", false],
      ["wki_3", true],
    ] as const)
      await tx(async (t) => {
        await t.intents.create({
          id,
          repoId: cart.id,
          sessionId: session.id,
          person: "zoe",
          client: null,
          model: null,
          prompt: id,
          promptPaths: [],
          at: day(6),
        });
        if (closed) await t.intents.update(id, { closedAt: day(7) });
        await t.journal.lock(cart.id);
        await t.journal.addEvent({ repoId: cart.id, intentId: id, kind: "intent", summary: id, at: day(7) });
      });

    const rows = await s.repoPages.summaries(["acme/cart", "acme/ab", "no/such", "Acme/Zeta"]);
    expect(rows.map((r) => r.name)).toEqual(["Acme/Zeta", "acme/ab", "acme/cart"]);
    for (const r of rows) {
      const old = await s.reads.repoSummary(r.id);
      expect({ ...r, id: undefined, name: undefined, goal: undefined }).toEqual({
        id: undefined,
        name: undefined,
        goal: undefined,
        ...old,
      });
    }
    // And against the rows written: two open of three, three live tokens of two people in first-token order.
    const c = rows.find((r) => r.name === "acme/cart")!;
    expect(c).toMatchObject({ openIntents: 2, activeTokens: 3, people: ["zoe", "ana"] });
    expect(c.lastActivityAt?.toISOString()).toBe(day(7).toISOString());
    expect(rows.find((r) => r.name === "Acme/Zeta")).toMatchObject({
      openIntents: 0,
      people: [],
      lastActivityAt: null,
    });
    expect(await tx((t) => t.repoPages.summaries([]))).toEqual([]);
  });

  it("a repository's fingerprint moves with its own changes only", async () => {
    const cart = (await s.repos.byName("acme/cart"))!;
    const ab = (await s.repos.byName("acme/ab"))!;
    const prints = async () => [await s.repoPages.fingerprint(cart.id), await s.repoPages.fingerprint(ab.id)];
    let [c, a] = await prints();
    const moved = async () => {
      const [c2, a2] = await prints();
      const out = [c2 !== c, a2 !== a];
      [c, a] = [c2, a2];
      return out;
    };
    await tx(async (t) => {
      await t.journal.lock(ab.id);
      await t.journal.addEvent({
        repoId: ab.id,
        intentId: "wki_x",
        kind: "intent",
        summary: "x",
        at: day(8),
      });
    });
    expect(await moved()).toEqual([false, true]);
    await tx((t) => t.repos.setGoal(cart.id, "Ship the cart"));
    expect(await moved()).toEqual([true, false]);
    await s.sessions.renew({
      repoId: cart.id,
      tokenId: "tok_1",
      key: "k1",
      client: null,
      newId: () => "x",
      at: day(9),
    });
    expect(await moved()).toEqual([true, false]);
    await tx((t) => t.tokens.revoke("tok_5", day(9)));
    expect(await moved()).toEqual([false, true]);
    await tx((t) =>
      t.journal.addGuardCatch({
        id: "gc_f",
        repoId: cart.id,
        intentId: "wki_1",
        agentId: null,
        kind: "scope-conflict",
        paths: ["a"],
        peerIds: [],
        at: day(9),
      }),
    );
    expect(await moved()).toEqual([true, false]);
    expect(await tx((t) => t.repoPages.fingerprint(cart.id))).toBe(c);
  });

  it("prunes old decisions, notices, packets and catches in batches, keeping an open intent's state", async () => {
    const cart = (await s.repos.byName("acme/cart"))!;
    const count = async (table: string) =>
      Number((await db.read.get(`SELECT COUNT(*) AS "n" FROM "${table}"`))?.n ?? 0);
    const base = {
      Decision: await count("Decision"),
      Notice: await count("Notice"),
      Packet: await count("Packet"),
    };
    // wki_1 is open, wki_3 closed: five of each, on days 10 to 14.
    for (let d = 10; d < 15; d++)
      await tx(async (t) => {
        await t.journal.lock(cart.id);
        for (const intentId of ["wki_1", "wki_3"]) {
          await t.journal.addDecision({
            id: `dec_${intentId}_${d}`,
            repoId: cart.id,
            intentId,
            action: "proceed",
            peerIds: [],
            reason: "r",
            at: day(d),
          });
          await t.notices.add({
            id: `ntc_${intentId}_${d}`,
            repoId: cart.id,
            intentId,
            sessionId: "ses_1",
            kind: "scope-lost",
            paths: ["a"],
            peer: null,
            note: null,
            reason: "expired",
            queueLength: null,
            waitedMs: null,
            text: "lost",
            at: day(d),
          });
          await t.journal.addPacket({
            id: `pkt_${intentId}_${d}`,
            repoId: cart.id,
            intentId,
            sessionId: "ses_1",
            kind: "plan",
            action: "proceed",
            cursor: 0,
            chars: 1,
            tokens: 1,
            peerIds: [],
            at: day(d),
          });
          await t.journal.addGuardCatch({
            id: `gc_${intentId}_${d}`,
            repoId: cart.id,
            intentId,
            agentId: null,
            kind: "outside-scope",
            paths: ["a"],
            peerIds: [],
            at: day(d),
          });
        }
      });
    // wki_1's notices of days 10 and 11 were told in a packet.
    await tx((t) => t.notices.tell("wki_1", 2, { id: "pkt_wki_1_10", repoId: cart.id, at: day(12) }));

    const before = day(13); // days 10, 11, 12 are older
    const oldLeft = async (table: string) =>
      (
        await db.read.all(
          `SELECT "id" FROM "${table}" WHERE "createdAt" < ? ORDER BY "id"`,
          kind === "sqlite" ? before.toISOString().replace("Z", "+00:00") : before,
        )
      ).map((r) => r.id as string);
    // Packets: six old, in batches of four, the oldest first.
    expect(await s.retention.prune("packets", before, 4)).toBe(4);
    expect(await oldLeft("Packet")).toEqual(["pkt_wki_1_12", "pkt_wki_3_12"]);
    expect(await tx((t) => t.retention.prune("packets", before, 4))).toBe(2);
    expect(await s.retention.prune("packets", before, 4)).toBe(0);
    expect(await count("Packet")).toBe(base.Packet + 4);
    // Catches: every old one, whoever's (gc_f of day 9 too).
    expect(await s.retention.prune("catches", before, 100)).toBe(7);
    expect(await oldLeft("GuardCatch")).toEqual([]);
    expect(await count("GuardCatch")).toBe(4);
    // Decisions: the closed intent's old ones; the open intent's are its state.
    expect(await s.retention.prune("decisions", before, 100)).toBe(3);
    expect(await oldLeft("Decision")).toEqual(["dec_wki_1_10", "dec_wki_1_11", "dec_wki_1_12"]);
    // Notices: the told ones and the closed intent's; the open intent's untold one stays.
    expect(await s.retention.prune("notices", before, 100)).toBe(5);
    expect(await oldLeft("Notice")).toEqual(["ntc_wki_1_12"]);
    expect(await s.retention.prune("notices", before, 100)).toBe(0);
    // Nothing newer than the cutoff went.
    expect(await count("Decision")).toBe(base.Decision + 4 + 3);
    expect(await count("Notice")).toBe(base.Notice + 4 + 1);
  });

  it("every method of these concerns ran", () => {
    const concerns: (keyof Tx)[] = ["repoPages", "retention"];
    const methods = concerns.flatMap((k) => Object.keys(store[k]).map((m) => `${k}.${m}`));
    expect(methods.length).toBe(4);
    expect(methods.filter((m) => !called.has(m))).toEqual([]);
  });
});
