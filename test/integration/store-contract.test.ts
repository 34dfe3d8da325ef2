import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IntentRecord } from "@cohent/protocol";
import { createStore, migrate, openDb, type Db, type Store, type Tx } from "@cohent/backend";
import { lookupOf } from "../../backend/src/core/resolver-index.js";
import { freshDatabaseUrl } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";

/**
 * The store's contract suite (store/contract): every method of every concern
 * runs here, on SQLite and on PostgreSQL, outside a transaction and inside
 * one, and its answer is checked. A method that no case calls fails the last
 * test: a new method comes with its case.
 */
describe.each(DATABASE_KINDS)("store contract (%s)", (kind) => {
  let db: Db;
  let store: Store;
  let drop: () => Promise<void>;
  const called = new Set<string>();
  /** The store, or a transaction's handle, recording which methods run. */
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
  const at = (sec: number) => new Date(t0.getTime() + sec * 1000);
  const record = (objective: string, outputs: string[], dependsOn: string[] = []) =>
    IntentRecord.parse({ objective, outputs, dependsOn, components: ["cart"] });

  beforeAll(async () => {
    const fresh = await freshDatabaseUrl(kind);
    drop = fresh.drop;
    await migrate(fresh.url);
    db = await openDb(fresh.url);
    store = createStore(db);
    s = recording(store);
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  it("repositories, tokens and sessions", async () => {
    await s.ping();
    const repo = await tx((t) => t.repos.create({ id: "rep_c", name: "acme/contract", createdAt: t0 }));
    expect(repo).toMatchObject({ name: "acme/contract", goal: "", caseInsensitive: false, claimVersion: 0 });
    expect(await s.repos.byName("acme/contract")).toEqual(repo);
    expect(await s.repos.byId("rep_c")).toEqual(repo);
    expect((await tx((t) => t.repos.setGoal("rep_c", "Ship it"))).goal).toBe("Ship it");
    expect((await s.repos.byName("acme/contract"))?.goal).toBe("Ship it");
    expect((await s.repos.list()).map((r) => r.name)).toEqual(["acme/contract"]);
    expect([...(await s.repos.known(["acme/contract", "acme/none"]))]).toEqual(["acme/contract"]);
    expect(await tx((t) => t.repos.named(["acme/none", "acme/contract"]))).toEqual([
      { ...repo, goal: "Ship it" },
    ]);
    expect(await s.repos.named([])).toEqual([]);

    for (const [id, person] of [
      ["tok_a", "ana"],
      ["tok_b", "bo"],
    ] as const)
      await tx((t) =>
        t.tokens.create({ id, repoId: "rep_c", person, client: null, tokenHash: `h_${id}`, at: t0 }),
      );
    const byHash = await s.tokens.byHash("h_tok_a");
    expect(byHash).toMatchObject({
      id: "tok_a",
      person: "ana",
      revokedAt: null,
      repo: { name: "acme/contract" },
    });
    expect(byHash?.createdAt.toISOString()).toBe(t0.toISOString());
    expect(await tx((t) => t.tokens.byHash("h_none"))).toBeNull();
    expect((await s.tokens.get("tok_a"))?.repoName).toBe("acme/contract");

    let n = 0;
    const renew = (tokenId: string, key: string, sec: number) =>
      s.sessions.renew({
        repoId: "rep_c",
        tokenId,
        key,
        client: "claude",
        newId: () => `ses_${key}_${++n}`,
        at: at(sec),
      });
    const first = await renew("tok_a", "ka", 1);
    expect(first).toMatchObject({ id: "ses_ka_1", control: "active", epoch: 0, client: "claude" });
    expect((await renew("tok_a", "ka", 2)).lastSeenAt.toISOString()).toBe(at(2).toISOString());
    expect(n).toBe(1); // created once
    await renew("tok_b", "kb", 2);
    const inTx = await tx((t) =>
      t.sessions.renew({
        repoId: "rep_c",
        tokenId: "tok_a",
        key: "ka",
        client: null,
        newId: () => "x",
        at: at(3),
      }),
    );
    expect(inTx.id).toBe("ses_ka_1");
    expect((await s.sessions.get("ses_ka_1"))?.repoName).toBe("acme/contract");
    await tx((t) => t.sessions.setClient("ses_ka_1", "codex", "gpt"));
    await s.sessions.setHost(
      { id: "ses_ka_1", tokenId: "tok_a", key: "ka" },
      { host: "claude-code", hostVersion: "2.1", wiring: "hooks", guardSeen: true },
      at(3),
    );
    await tx((t) => t.sessions.setCheckout("ses_ka_1", "co1"));
    const seen = await s.sessions.seenSince("rep_c", at(2));
    expect(seen.find((x) => x.id === "ses_ka_1")).toMatchObject({
      host: "claude-code",
      wiring: "hooks",
      checkout: "co1",
    });
    expect((await s.sessions.seenSince("rep_c")).length).toBe(2);
    const paused = await tx((t) => t.sessions.setControl("ses_kb_2", "paused", "lunch"));
    expect(paused).toMatchObject({ control: "paused", controlReason: "lunch" });
    await tx((t) => t.sessions.fence("ses_kb_2", "rep_c"));
    expect((await s.sessions.get("ses_kb_2"))?.epoch).toBe(1);
    await tx((t) =>
      t.sessions.addCommand({
        id: "cmd_1",
        repoId: "rep_c",
        sessionId: "ses_kb_2",
        kind: "pause",
        actor: "admin",
        reason: null,
        at: at(4),
      }),
    );
    const of = await s.sessions.ofRepo("rep_c");
    expect(of.map((x) => [x.id, x.person, x.client])).toEqual([
      ["ses_ka_1", "ana", "codex"],
      ["ses_kb_2", "bo", "claude"],
    ]);
  });

  it("intents, claims, the journal and the queue", async () => {
    const make = (id: string, sessionId: string, person: string, sec: number) =>
      tx((t) =>
        t.intents.create({
          id,
          repoId: "rep_c",
          sessionId,
          person,
          client: null,
          model: null,
          prompt: `prompt ${id}`,
          promptPaths: ["src/a.ts"],
          at: at(sec),
        }),
      );
    let finished = 0;
    await make("wki_a", "ses_ka_1", "ana", 5);
    await make("wki_b", "ses_kb_2", "bo", 6);
    await tx(async (t) => {
      await t.journal.lock("rep_c");
      expect(t.journal.holds("rep_c")).toBe(true);
      await t.intents.update("wki_a", {
        record: record("Cart", ["cart-api"]),
        state: "working",
        updatedAt: at(7),
      });
      await t.intents.update("wki_b", {
        record: record("Checkout", ["checkout"], ["cart-api"]),
        updatedAt: at(8),
      });
      await t.intents.addCheckpoint({
        id: "cp_1",
        intentId: "wki_a",
        status: "working",
        summary: "half",
        paths: ["src/a.ts"],
        source: "provided-unverified",
        commit: "abc123",
        at: at(9),
      });
      await t.journal.addEvent({
        repoId: "rep_c",
        intentId: "wki_a",
        kind: "intent",
        summary: "a",
        peerIds: ["wki_b"],
        at: at(9),
      });
      expect(await t.journal.latestSeq("rep_c")).toBe(1);
      const d = await t.journal.addDecision({
        id: "dec_1",
        repoId: "rep_c",
        intentId: "wki_b",
        action: "wait",
        peerIds: ["wki_a"],
        reason: "depends",
        at: at(9),
      });
      expect(d).toMatchObject({ action: "wait", peerIds: ["wki_a"] });
      await t.journal.addPacket({
        id: "pkt_1",
        repoId: "rep_c",
        intentId: "wki_a",
        sessionId: "ses_ka_1",
        kind: "plan",
        action: "proceed",
        cursor: 1,
        chars: 10,
        tokens: 3,
        peerIds: [],
        at: at(9),
      });
      // Without a cursor the insert takes the latest sequence number itself; `finish` runs after the COMMIT.
      const stored = await t.journal.addPacket({
        id: "pkt_2",
        repoId: "rep_c",
        intentId: "wki_a",
        sessionId: "ses_ka_1",
        kind: "checkpoint",
        action: "proceed",
        cursor: null,
        chars: 10,
        tokens: 3,
        peerIds: [],
        at: at(9),
      });
      t.journal.finish(stored.cursor.then((c) => void (finished = c)));
      await t.claims.set({ intentId: "wki_a", repoId: "rep_c", paths: ["src/**"], at: at(9) });
      await t.claims.set({ intentId: "wki_a", repoId: "rep_c", paths: ["src/a.ts"], at: at(10) });
      await t.claims.set({ intentId: "wki_b", repoId: "rep_c", paths: ["docs/**"], at: at(10) });
    });
    expect(finished).toBe(1);
    expect((await db.prisma.packet.delete({ where: { id: "pkt_2" } })).cursor).toBe(1); // the read models count one packet
    expect(() => s.journal.finish(Promise.resolve())).toThrow(/only inside a transaction/);
    const a = await s.intents.get("wki_a");
    expect(a).toMatchObject({
      state: "working",
      place: 1,
      scope: ["src/a.ts"],
      promptPaths: ["src/a.ts"],
      lastCheckpoint: { status: "working", summary: "half", at: at(9).toISOString() },
    });
    expect(a?.record?.objective).toBe("Cart");
    expect(a?.session).toMatchObject({ key: "ka", control: "active" });
    expect((await tx((t) => t.intents.get("wki_b")))?.place).toBe(2);
    expect(await s.intents.head("wki_a")).toMatchObject({
      id: "wki_a",
      repoId: "rep_c",
      state: "working",
      closedAt: null,
    });
    expect(await s.intents.owner("wki_a")).toEqual({ repoId: "rep_c", sessionId: "ses_ka_1" });
    expect(await s.intents.openIdsOfSession("ses_ka_1")).toEqual(["wki_a"]);
    expect((await s.intents.latestOpenOfSession("ses_kb_2"))?.id).toBe("wki_b");
    expect((await s.intents.active("rep_c", at(0))).map((r) => r.id)).toEqual(["wki_a", "wki_b"]);
    expect((await s.intents.active("rep_c", at(100))).map((r) => r.id)).toEqual([]);
    // The resolver's fields of `active`, outside a transaction and inside one.
    const lean = (
      rows: {
        id: string;
        place: number | null;
        state: string;
        record: unknown;
        lastAction: string;
        scope: string[];
      }[],
    ) =>
      rows.map(({ id, place, state, record, lastAction, scope }) => ({
        id,
        place,
        state,
        record,
        lastAction,
        scope,
      }));
    const whole = lean(await s.intents.active("rep_c", at(0)));
    expect(whole.map((r) => r.scope)).toEqual([["src/a.ts"], ["docs/**"]]);
    expect(await s.intents.activePeers("rep_c", at(0))).toEqual(whole);
    expect(await tx((t) => t.intents.activePeers("rep_c", at(0)))).toEqual(whole);
    expect(await s.intents.activePeers("rep_c", at(100))).toEqual([]);
    expect((await tx((t) => t.intents.recent("rep_c", at(0), 1))).map((r) => r.id)).toEqual(["wki_b"]);
    expect((await s.intents.open("rep_c")).length).toBe(2);
    expect((await s.intents.openOfToken("rep_c", "tok_b")).map((r) => r.id)).toEqual(["wki_b"]);
    const lookup = lookupOf(record("Other", ["x"], ["cart-api"]));
    expect((await s.intents.candidates("rep_c", lookup, at(0))).map((r) => r.id)).toContain("wki_a");
    expect((await tx((t) => t.intents.candidates("rep_c", lookup, at(0)))).map((r) => r.id)).toContain(
      "wki_a",
    );
    expect((await s.intents.byIds(["wki_b", "wki_none"])).map((r) => r.id)).toEqual(["wki_b"]);
    expect(await s.intents.parties(["wki_a"])).toEqual([
      { intentId: "wki_a", person: "ana", client: null, model: null, objective: "Cart" },
    ]);
    const named = await s.intents.namedPeers("wki_b", "rep_c");
    expect(named.named).toEqual(["wki_a"]);
    expect(named.oldestSeen?.toISOString()).toBe(at(3).toISOString());
    expect([...(await s.intents.commits(["wki_a"]))]).toEqual([
      ["wki_a", [{ hash: "abc123", paths: ["src/a.ts"], summary: "half", at: at(9).toISOString() }]],
    ]);

    expect(await s.claims.pathsOf("wki_a")).toEqual(["src/a.ts"]);
    expect(
      (await tx((t) => t.claims.peers("rep_c", "wki_a"))).map((p) => [p.intentId, p.paths, p.objective]),
    ).toEqual([["wki_b", ["docs/**"], "Checkout"]]);
    expect(await tx((t) => t.claims.claimed("rep_c", "wki_a"))).toEqual([
      { intentId: "wki_b", paths: ["docs/**"] },
    ]);
    // In update order, each list exactly as written; the same text gives the same list, frozen (shared by readers).
    const odd = ['src/ä "q"\\x.ts', "docs/**"];
    const rolledBack = new Error("rolled back");
    await expect(
      tx(async (t) => {
        await t.journal.lock("rep_c");
        await t.claims.set({ intentId: "wki_b", repoId: "rep_c", paths: odd, at: at(11) });
        await t.claims.set({ intentId: "wki_a", repoId: "rep_c", paths: ["src/a.ts"], at: at(12) });
        const all = await t.claims.claimed("rep_c", "");
        expect(all).toEqual([
          { intentId: "wki_b", paths: odd },
          { intentId: "wki_a", paths: ["src/a.ts"] },
        ]);
        const again = await t.claims.claimed("rep_c", "wki_b");
        expect(again[0]!.paths).toBe(all[1]!.paths);
        expect(Object.isFrozen(again[0]!.paths)).toBe(true);
        expect(await t.claims.claimed("rep_none", "")).toEqual([]);
        throw rolledBack;
      }),
    ).rejects.toBe(rolledBack);
    expect(await s.claims.expired("rep_c", at(2.5))).toEqual(["wki_b"]); // bo's session was last seen at 2 s

    expect(await s.journal.latestSeq("rep_c")).toBe(1);
    expect((await s.journal.tailAfter("rep_c", 0, 10)).map((e) => [e.seq, e.peerIds])).toEqual([
      [1, ["wki_b"]],
    ]);
    expect((await s.journal.eventsAfter("rep_c", 0, 10))[0]).toMatchObject({
      seq: 1,
      kind: "intent",
      repoId: "rep_c",
    });
    expect((await s.journal.lastDecision("wki_b"))?.reason).toBe("depends");
    expect(await s.journal.ackPacket({ id: "pkt_1", sessionId: "ses_ka_1", chars: 9, at: at(11) })).toBe(
      "acked",
    );
    expect(await s.journal.ackPacket({ id: "pkt_1", sessionId: "ses_ka_1", chars: 9, at: at(11) })).toBe(
      "already",
    );
    expect(await s.journal.ackPacket({ id: "pkt_x", sessionId: "ses_ka_1", chars: 9, at: at(11) })).toBe(
      "missing",
    );
    await s.journal.addGuardCatch({
      id: "gc_1",
      repoId: "rep_c",
      intentId: "wki_a",
      agentId: "sub1",
      kind: "scope-conflict",
      paths: ["src/a.ts"],
      peerIds: ["wki_b"],
      at: at(12),
    });

    await tx(async (t) => {
      expect(await t.queue.any("rep_c")).toBe(false);
      expect(await t.queue.tailAt("rep_c")).toBeNull();
      await t.queue.put({ id: "cw_1", repoId: "rep_c", intentId: "wki_b", paths: ["src/a.ts"], at: at(13) });
    });
    expect(await s.queue.any("rep_c")).toBe(true);
    const list = await s.queue.list("rep_c");
    expect(list.map((w) => [w.intentId, w.paths, w.party.person])).toEqual([["wki_b", ["src/a.ts"], "bo"]]);
    expect((await s.queue.of("wki_b"))?.createdAt.toISOString()).toBe(at(13).toISOString());
    expect((await s.queue.tailAt("rep_c"))?.toISOString()).toBe(at(13).toISOString());
    expect(await s.queue.expired("rep_c", at(2.5))).toEqual(["wki_b"]);
    expect((await s.queue.holders("rep_c")).map((h) => [h.intentId, h.paths])).toEqual([
      ["wki_a", ["src/a.ts"]],
      ["wki_b", ["docs/**"]],
    ]);
    expect([...(await s.queue.parties(["wki_a", "wki_a"])).keys()]).toEqual(["wki_a"]);
    expect((await s.queue.party("wki_b"))?.objective).toBe("Checkout");
    expect(await tx((t) => t.queue.remove("wki_b"))).toEqual(["src/a.ts"]);
    expect(await tx((t) => t.queue.remove("wki_b"))).toBeNull();
    await tx((t) =>
      t.queue.put({ id: "cw_2", repoId: "rep_c", intentId: "wki_b", paths: ["src/b.ts"], at: at(14) }),
    );
    expect(await tx((t) => t.queue.leave("wki_b"))).toBe(true);
    expect(await tx((t) => t.queue.leave("wki_b"))).toBe(false);
    expect(await tx((t) => t.claims.release("wki_b"))).toBe(true);
    expect(await tx((t) => t.claims.release("wki_b"))).toBe(false);
    await tx((t) =>
      t.intents.update("wki_b", { state: "completed", closedAt: at(15), lastAction: "proceed" }),
    );
    expect((await s.intents.completed("rep_c", 5)).map((r) => r.id)).toEqual(["wki_b"]);
  });

  it("notices, release requests and wiring reports", async () => {
    const notice = (id: string, sec: number) =>
      tx((t) =>
        t.notices.add({
          id,
          repoId: "rep_c",
          intentId: "wki_a",
          sessionId: "ses_ka_1",
          kind: "scope-lost",
          paths: ["src/a.ts"],
          peer: null,
          note: null,
          reason: "expired",
          queueLength: null,
          waitedMs: null,
          text: `lost ${id}`,
          at: at(sec),
        }),
      );
    await notice("ntc_1", 20);
    await notice("ntc_2", 21);
    expect(await tx((t) => t.notices.hasUntold("wki_a"))).toBe(true);
    // Held from memory until the stamp moves. On PostgreSQL the backstop (or a hint's echo) can move it
    // between the two calls, and then the peek is null, never a stale count: read again until it holds.
    const peeks: (number | undefined | null)[] = [];
    for (let i = 0; i < 5 && peeks.at(-1) !== 2; i++) {
      expect([...(await s.notices.untold("ses_ka_1", "rep_c"))]).toEqual([["wki_a", 2]]);
      const peek = s.notices.peekUntold("ses_ka_1", "rep_c");
      peeks.push(peek === null ? null : peek.get("wki_a"));
    }
    expect(peeks.filter((p) => p !== null)).toEqual([2]);
    const told = await tx((t) => t.notices.tell("wki_a", 1, { id: "pkt_1", repoId: "rep_c", at: at(22) }));
    expect(told.map((n) => [n.id, n.text, n.at])).toEqual([["ntc_1", "lost ntc_1", at(20).toISOString()]]);
    expect(s.notices.peekUntold("ses_ka_1", "rep_c")).toBeNull(); // the telling moved the stamp
    expect([...(await s.notices.untold("ses_ka_1", "rep_c"))]).toEqual([["wki_a", 1]]);
    expect((await s.notices.recentLost("rep_c", at(0), 10)).map((n) => n.intentId)).toEqual([
      "wki_a",
      "wki_a",
    ]);

    await tx((t) =>
      t.releaseAsks.add({
        id: "ra_1",
        repoId: "rep_c",
        fromIntentId: "wki_b",
        toIntentId: "wki_a",
        paths: ["src/a.ts"],
        note: "please",
        at: at(23),
      }),
    );
    await tx((t) =>
      t.releaseAsks.add({
        id: "ra_2",
        repoId: "rep_c",
        fromIntentId: "wki_b",
        toIntentId: "wki_a",
        paths: ["src/c.ts"],
        note: "also",
        at: at(24),
      }),
    );
    expect((await tx((t) => t.releaseAsks.openTo("wki_a"))).map((r) => r.id)).toEqual(["ra_1", "ra_2"]);
    await tx((t) => t.releaseAsks.close(["ra_1"], at(25), true));
    expect((await s.releaseAsks.openOfRepo("rep_c")).map((r) => r.id)).toEqual(["ra_2"]);
    await tx((t) => t.releaseAsks.closeFrom("wki_b", at(26)));
    expect(await s.releaseAsks.openOfRepo("rep_c")).toEqual([]);

    const report = (changes: { file: string; change: "modified" | "removed" }[], sec: number) =>
      tx((t) =>
        t.wiring.report({
          newId: () => `wr_${sec}`,
          repoId: "rep_c",
          tokenId: "tok_a",
          checkout: "co1",
          sessionId: "ses_ka_1",
          changes,
          at: at(sec),
        }),
      );
    await report([{ file: ".claude/settings.json", change: "modified" }], 27);
    await report([{ file: ".claude/settings.json", change: "removed" }], 28);
    expect(await tx((t) => t.wiring.openOf("tok_a", "co1"))).toEqual({ count: 1, includes: true });
    const modified = await s.wiring.modified("rep_c");
    expect(
      modified.map((m) => [m.checkout, m.sessionKey, m.changes[0]?.change, m.reportedAt.toISOString()]),
    ).toEqual([["co1", "ka", "removed", at(28).toISOString()]]);
    await report([], 29);
    expect(await s.wiring.openOf("tok_a", "co1")).toEqual({ count: 0, includes: false });
  });

  it("pairings, console sign-in and the read models", async () => {
    const pairing = {
      id: "par_1",
      repoName: "acme/contract",
      machine: "m1",
      user: "ana",
      client: null,
      userCode: "AAAA-BBBB",
      deviceCodeHash: "dh1",
      interval: 5,
      createdAt: at(30),
      updatedAt: at(30),
      expiresAt: at(600),
    };
    expect(await s.pairings.create(pairing)).toBe(true);
    expect(await s.pairings.create({ ...pairing, id: "par_2", deviceCodeHash: "dh2" })).toBe(false); // the user code collides
    expect((await s.pairings.byUserCode("AAAA-BBBB"))?.status).toBe("pending");
    expect((await s.pairings.pending(at(31))).map((p) => p.id)).toEqual(["par_1"]);
    expect(await s.pairings.pending(at(31), "acme/other")).toEqual([]);
    const approved = await tx((t) =>
      t.pairings.update("par_1", {
        status: "approved",
        approvedBy: "admin",
        person: "ana",
        decidedAt: at(32),
      }),
    );
    expect(approved).toMatchObject({ status: "approved", approvedBy: "admin" });
    expect(await tx((t) => t.pairings.claimApproved("par_1", at(33)))).toBe(true);
    expect(await tx((t) => t.pairings.claimApproved("par_1", at(33)))).toBe(false);
    expect((await tx((t) => t.pairings.byDeviceHash("dh1")))?.status).toBe("issued");
    await tx((t) => t.pairings.update("par_1", { tokenId: "tok_a" }));

    await s.consoleAuth.addLoginLink({ id: "ll_1", tokenHash: "lh", at: at(40), expiresAt: at(100) });
    expect(await s.consoleAuth.redeemLoginLink("lh", at(41))).toBe(true);
    expect(await s.consoleAuth.redeemLoginLink("lh", at(41))).toBe(false);
    await s.consoleAuth.addSession({
      id: "cs_1",
      tokenHash: "ch",
      csrfToken: "csrf",
      person: "ana",
      provider: "local",
      githubToken: null,
      at: at(42),
      expiresAt: at(1000),
    });
    await s.consoleAuth.touchSession("cs_1", at(43));
    expect((await s.consoleAuth.sessionByHash("ch"))?.lastSeenAt.toISOString()).toBe(at(43).toISOString());
    await s.consoleAuth.endSession("cs_1");
    expect(await s.consoleAuth.sessionByHash("ch")).toBeNull();

    const rows = await s.reads.metricRows("rep_c");
    expect([
      rows.decisions.length,
      rows.catches.length,
      rows.packets.length,
      rows.commands.length,
      rows.asks.length,
    ]).toEqual([1, 1, 1, 1, 2]);
    expect(rows.packets[0]).toMatchObject({ tokens: 3, ackedChars: 9 });
    expect((await s.reads.metricRows("rep_c", at(100))).decisions).toEqual([]);
    const fp = await s.reads.fingerprint();
    await tx((t) => t.sessions.setControl("ses_kb_2", "active", null));
    await s.sessions.setHost(
      { id: "ses_kb_2", tokenId: "tok_b", key: "kb" },
      { host: "codex", hostVersion: null, wiring: "mcp", guardSeen: false },
      at(50),
    );
    expect(await s.reads.fingerprint()).not.toBe(fp);
    expect(await s.reads.repoSummary("rep_c")).toMatchObject({
      openIntents: 1,
      activeTokens: 2,
      people: ["ana", "bo"],
    });
    expect((await s.reads.scopeCatches("rep_c", at(0))).map((c) => [c.intentId, c.paths])).toEqual([
      ["wki_a", ["src/a.ts"]],
    ]);
    expect((await s.reads.subagentCatches("rep_c", at(0))).map((c) => c.agentId)).toEqual(["sub1"]);
    expect(await s.reads.shellWrites("rep_c", at(0), 5)).toEqual([]);
    const shell = { id: "gc_2", intentId: "wki_b", agentId: null, paths: ["src/a.ts"], peerIds: ["wki_a"] };
    const detail = { command: "make", restorable: true, person: "bo", client: null, model: null, peers: [] };
    await s.journal.addGuardCatch({ ...shell, repoId: "rep_c", kind: "shell-write", detail, at: at(12) });
    expect(await s.reads.shellWrites("rep_c", at(0), 5)).toEqual([{ ...shell, detail, at: at(12) }]);
    expect(await s.reads.shellWrites("rep_c", at(13), 5)).toEqual([]);
    await tx((t) => t.journal.setShellWriteDetail("gc_2", { ...detail, restoreRequestedBy: "admin" }));
    // Refusals by kind and rule: a report's rule read back from its detail; a shell write is no refusal.
    const refused = { repoId: "rep_c", intentId: "wki_b", agentId: null, paths: [], peerIds: [] };
    await s.journal.addGuardCatch({
      ...refused,
      id: "gc_3",
      kind: "refused",
      detail: { rule: "stale-write" },
      at: at(13),
    });
    await s.journal.addGuardCatch({
      ...refused,
      id: "gc_4",
      kind: "refused",
      detail: { rule: "stale-write" },
      at: at(14),
    });
    const byKind = (await s.reads.refusalCounts("rep_c", at(0))).sort((a, b) => a.kind.localeCompare(b.kind));
    expect(byKind).toEqual([
      { kind: "refused", rule: "stale-write", count: 2 },
      { kind: "scope-conflict", rule: null, count: 1 },
    ]);
    expect(await s.reads.refusalCounts("rep_c", at(14))).toEqual([
      { kind: "refused", rule: "stale-write", count: 1 },
    ]);
    const got = [await s.reads.shellWrite("gc_2"), await s.reads.shellWrite("gc_no")];
    expect(got.map((w) => w && [w.repoId, w.detail?.restoreRequestedBy])).toEqual([["rep_c", "admin"], null]);
    expect((await s.reads.overlapDecisions("rep_c", 5)).map((d) => d.id)).toEqual(["dec_1"]);
    expect((await s.reads.commands("rep_c", 5)).map((c) => [c.id, c.person])).toEqual([["cmd_1", "bo"]]);
    const tokens = await s.reads.tokens("rep_c");
    expect(tokens.find((t) => t.id === "tok_a")).toMatchObject({ machine: "m1", approvedBy: "admin" });
    expect(tokens.find((t) => t.id === "tok_a")?.lastCallAt?.toISOString()).toBe(at(3).toISOString());
    const recap = await s.reads.recapIntents("rep_c", at(0));
    expect(recap.find((r) => r.id === "wki_a")?.checkpoints[0]?.commit?.hash).toBe("abc123");
    expect(await s.reads.commandCount("rep_c", at(0))).toBe(1);
    const revoked = await tx((t) => t.tokens.revoke("tok_b", at(60)));
    expect(revoked.revokedAt?.toISOString()).toBe(at(60).toISOString());
    expect((await tx((t) => t.tokens.revoke("tok_b", at(70)))).revokedAt?.toISOString()).toBe(
      at(60).toISOString(),
    );
  });

  it("request ids: recorded once, answered once, expired", async () => {
    const begin = (key: string, bodyHash: string, sec: number) =>
      tx((t) => t.requests.begin({ tokenId: "tok_a", key, bodyHash, at: at(sec) }));
    expect(await begin("req-contract-0001", "h1", 0)).toBeNull();
    // Found, not inserted again: the first's hash, no answer yet.
    expect(await begin("req-contract-0001", "h2", 1)).toMatchObject({ bodyHash: "h1", outcome: null });
    // Another token's same id is its own.
    expect(
      await tx((t) =>
        t.requests.begin({ tokenId: "tok_b", key: "req-contract-0001", bodyHash: "h9", at: t0 }),
      ),
    ).toBeNull();
    // A transaction that rolls back keeps no record.
    await expect(
      tx(async (t) => {
        await t.requests.begin({ tokenId: "tok_a", key: "req-contract-0002", bodyHash: "h", at: t0 });
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    expect(await s.requests.get("tok_a", "req-contract-0002")).toBeNull();
    // The first answer stays: a second is refused, outside a transaction and inside one.
    expect(await s.requests.answer("tok_a", "req-contract-0001", '{"ok":true,"data":1}')).toBe(true);
    expect(await tx((t) => t.requests.answer("tok_a", "req-contract-0001", '{"ok":true,"data":2}'))).toBe(
      false,
    );
    expect(await s.requests.answer("tok_a", "req-contract-none", "{}")).toBe(false);
    const rec = await s.requests.get("tok_a", "req-contract-0001");
    expect(rec).toMatchObject({ tokenId: "tok_a", bodyHash: "h1", outcome: '{"ok":true,"data":1}' });
    expect(rec?.createdAt.toISOString()).toBe(t0.toISOString());
    expect(await begin("req-contract-0003", "h3", 100)).toBeNull();
    // Those recorded before the cutoff go; the later one stays.
    expect(await s.requests.expire(at(50))).toBe(2);
    expect(await tx((t) => t.requests.expire(at(50)))).toBe(0);
    expect(await s.requests.get("tok_a", "req-contract-0001")).toBeNull();
    expect(await s.requests.get("tok_a", "req-contract-0003")).not.toBeNull();
  });

  it("many repositories and tokens at once (a set-up file)", async () => {
    // More than one statement's worth of rows (500 a statement).
    const rows = Array.from({ length: 501 }, (_, i) => ({
      id: `rep_many_${i}`,
      name: `acme/many-${i}`,
      goal: i ? "" : "First",
      caseInsensitive: i === 1,
      createdAt: at(i),
    }));
    const created = await tx((t) => t.repos.createMany(rows));
    expect(created).toHaveLength(501);
    expect(created[0]).toEqual({ ...rows[0], claimVersion: 0 });
    for (const i of [0, 1, 500])
      expect(await s.repos.byName(`acme/many-${i}`)).toEqual({ ...rows[i], claimVersion: 0 });
    await tx((t) =>
      t.tokens.createMany(
        [0, 500].map((i) => ({
          id: `tok_many_${i}`,
          repoId: `rep_many_${i}`,
          person: `p${i}`,
          client: i ? "Codex" : null,
          tokenHash: `h_many_${i}`,
          at: at(i),
        })),
      ),
    );
    expect(await s.tokens.byHash("h_many_500")).toMatchObject({
      id: "tok_many_500",
      person: "p500",
      client: "Codex",
      repo: { name: "acme/many-500" },
    });
    expect((await s.tokens.get("tok_many_0"))?.createdAt.toISOString()).toBe(at(0).toISOString());
    // Nothing to insert is no statement.
    expect(await s.repos.createMany([])).toEqual([]);
    await s.tokens.createMany([]);
  });

  it("every method of the contract ran", () => {
    const concerns: (keyof Tx)[] = [
      "repos",
      "intents",
      "claims",
      "journal",
      "tokens",
      "sessions",
      "pairings",
      "consoleAuth",
      "reads",
      "queue",
      "notices",
      "releaseAsks",
      "wiring",
      "requests",
    ];
    // A concern is an object of methods or a class's instance (its methods on the prototype).
    const methodsOf = (c: object) => {
      const proto = Object.getPrototypeOf(c) as object;
      const names = proto === Object.prototype ? Object.keys(c) : Object.getOwnPropertyNames(proto);
      return names.filter((m) => m !== "constructor");
    };
    const methods = concerns.flatMap((k) => methodsOf(store[k]).map((m) => `${k}.${m}`));
    expect(methods.length).toBeGreaterThan(100);
    expect(methods.filter((m) => !called.has(m))).toEqual([]);
  });
});
