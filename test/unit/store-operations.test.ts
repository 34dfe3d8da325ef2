import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import {
  AckRequest,
  CheckpointRequest,
  CohentError,
  IntentRequest,
  PublishRequest,
  ScopeRequest,
} from "@cohent/protocol";
import { createStore, DEFAULT_LEASE, migrate, openDb, type Db, type Store } from "@cohent/backend";
import { authenticate } from "../../backend/src/operations/agent/session.js";
import { publish } from "../../backend/src/operations/agent/publish.js";
import { intent } from "../../backend/src/operations/agent/intent.js";
import { scope } from "../../backend/src/operations/agent/scope.js";
import { checkpoint } from "../../backend/src/operations/agent/checkpoint.js";
import { poll } from "../../backend/src/operations/agent/poll.js";
import { ack } from "../../backend/src/operations/agent/ack.js";
import type { Deps } from "../../backend/src/operations/deps.js";
import { addRepo, controlSession, issueToken, metrics } from "../../backend/src/operations/people/admin.js";
import { recap } from "../../backend/src/operations/people/recap.js";
import { freshDatabaseUrl } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";

/** Operations called directly over a real store (a SQLite file, or PostgreSQL): no HTTP in between. */
describe.each(DATABASE_KINDS)("operations over a real store (%s)", (kind) => {
  let db: Db;
  let store: Store;
  let drop: () => Promise<void>;
  let offset = 0;
  const deps = () =>
    ({
      store,
      clock: () => new Date(Date.now() + offset),
      lease: DEFAULT_LEASE,
      log: pino({ level: "silent" }),
    }) satisfies Deps;
  const tokens: Record<string, string> = {};
  const caller = (person: string, key: string) => authenticate(deps(), `Bearer ${tokens[person]}`, key);
  const code = async (p: Promise<unknown>) =>
    p.then(
      () => "ok",
      (e: unknown) => (e instanceof CohentError ? e.code : String(e)),
    );
  const started = async (person: string, key: string, record: Partial<IntentRequest["intent"]>) => {
    const c = await caller(person, key);
    const { intentId } = await publish(
      deps(),
      c,
      PublishRequest.parse({ type: "publish", prompt: `${person}'s task` }),
    );
    const answer = await intent(
      deps(),
      c,
      IntentRequest.parse({
        type: "intent",
        intentId,
        intent: { objective: `${person}'s objective`, ...record },
      }),
    );
    return { c, intentId, answer };
  };

  beforeAll(async () => {
    const fresh = await freshDatabaseUrl(kind);
    drop = fresh.drop;
    await migrate(fresh.url);
    db = await openDb(fresh.url);
    store = createStore(db);
    await addRepo(deps(), { name: "acme/ops", goal: "Ship the cart" });
    for (const person of ["ana", "bo"])
      tokens[person] = (await issueToken(deps(), { repo: "acme/ops", person })).token;
  });
  afterAll(async () => {
    await db.close();
    await drop();
  });

  it("publish, intent, scope, a refused overlap, poll and ack, and the metrics they leave", async () => {
    const before = await metrics(deps(), "acme/ops");
    const a = await started("ana", "a1", { outputs: ["cart-api"] });
    expect(a.answer.action).toBe("proceed");
    const b = await started("bo", "b1", { dependsOn: ["cart-api"], outputs: ["cart-ui"] });
    expect(b.answer).toMatchObject({ action: "wait", peerIds: [a.intentId] });

    await scope(deps(), a.c, ScopeRequest.parse({ type: "scope", intentId: a.intentId, paths: ["src/api"] }));
    expect(
      await code(
        scope(
          deps(),
          b.c,
          ScopeRequest.parse({ type: "scope", intentId: b.intentId, paths: ["src/api/cart.ts"] }),
        ),
      ),
    ).toBe("SCOPE_CONFLICT");
    expect(await store.claims.pathsOf(b.intentId)).toBeNull();

    // The unchanged decision is not recorded twice: poll compares the peer arrays, not their JSON text.
    const first = await poll(deps(), b.c, { intentId: b.intentId, cursor: "0" });
    expect(first.packet?.changes.some((c) => c.intentId === a.intentId)).toBe(true);
    const again = await poll(deps(), b.c, { intentId: b.intentId, cursor: first.cursor });
    expect(again.packet).toBeNull();
    expect(
      (await store.reads.metricRows((await store.repos.byName("acme/ops"))!.id)).decisions.filter(
        (d) => d.action === "wait",
      ),
    ).toHaveLength(1);

    await ack(deps(), b.c, AckRequest.parse({ type: "ack", packetId: first.packet!.id, chars: 123 }));
    expect(
      await code(ack(deps(), b.c, AckRequest.parse({ type: "ack", packetId: first.packet!.id, chars: 1 }))),
    ).toBe("PACKET_ALREADY_ACKED");
    expect(
      await code(ack(deps(), a.c, AckRequest.parse({ type: "ack", packetId: first.packet!.id, chars: 1 }))),
    ).toBe("PACKET_NOT_FOUND");

    const after = await metrics(deps(), "acme/ops");
    expect(after.dependencyWaits - before.dependencyWaits).toBe(1);
    expect(after.redirections - before.redirections).toBe(1);
    expect(after.pathGuardCatches - before.pathGuardCatches).toBe(1);
    expect(after.potentialOverlaps - before.potentialOverlaps).toBe(2); // the wait and the refused claim
    expect(after.injectedChars - before.injectedChars).toBe(123);

    await checkpoint(
      deps(),
      a.c,
      CheckpointRequest.parse({
        type: "checkpoint",
        intentId: a.intentId,
        status: "completed",
        summary: "API done",
      }),
    );
    expect(await store.claims.pathsOf(a.intentId)).toBeNull();
    const r = await recap(deps(), "acme/ops", new Date(Date.now() - 60_000));
    expect(r.completed.map((i) => i.intentId)).toContain(a.intentId);
  });

  it("a paused session is refused a claim; an expired lease frees a claim for peers", async () => {
    const a = await started("ana", "a2", { outputs: ["search"] });
    await scope(
      deps(),
      a.c,
      ScopeRequest.parse({ type: "scope", intentId: a.intentId, paths: ["src/search"] }),
    );
    const b = await started("bo", "b2", { outputs: ["search-ui"] });
    const boScopeCode = async (path: string) =>
      code(
        scope(
          deps(),
          await caller("bo", "b2"),
          ScopeRequest.parse({ type: "scope", intentId: b.intentId, paths: [path] }),
        ),
      );
    await controlSession(deps(), { sessionId: b.c.session.id, kind: "pause", actor: "dana" });
    expect(await boScopeCode("src/other")).toBe("SESSION_PAUSED");
    await controlSession(deps(), { sessionId: b.c.session.id, kind: "resume", actor: "dana" });
    expect(await boScopeCode("src/search")).toBe("SCOPE_CONFLICT");
    offset += DEFAULT_LEASE.leaseMs + 1_000; // ana falls silent past her lease; bo calls again
    const res = await scope(
      deps(),
      await caller("bo", "b2"),
      ScopeRequest.parse({ type: "scope", intentId: b.intentId, paths: ["src/search"] }),
    );
    expect(res.paths).toEqual(["src/search"]);
    expect(await store.claims.pathsOf(a.intentId)).toBeNull();
  });
});
