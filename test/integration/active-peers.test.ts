import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import { CheckpointRequest, IntentRequest, PublishRequest, ScopeRequest } from "@cohent/protocol";
import { DEFAULT_LEASE, type Store } from "@cohent/backend";
import { addRepo, issueToken } from "../../backend/src/operations/people/admin.js";
import { authenticate } from "../../backend/src/operations/agent/session.js";
import { publish } from "../../backend/src/operations/agent/publish.js";
import { intent } from "../../backend/src/operations/agent/intent.js";
import { checkpoint } from "../../backend/src/operations/agent/checkpoint.js";
import { scope } from "../../backend/src/operations/agent/scope.js";
import { leaseCutoff } from "../../backend/src/core/lease.js";
import type { Deps } from "../../backend/src/operations/deps.js";
import { openTwoHandles, type TwoHandles } from "../helpers/two-handles.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";

/**
 * store `activePeers` (the poll's read of every active intent, records from memory by place)
 * against `active` (the whole rows, read through), while a second handle on the same database
 * writes: another connection on SQLite, another instance on PostgreSQL. The first store keeps
 * its records between the reads; each read must still show what the database holds.
 */
describe.each(DATABASE_KINDS)("active peers from memory (%s)", (kind) => {
  let handles: TwoHandles;
  let reader: Store;
  let writer: Store;
  let offset = 0;
  const deps = (store: Store) =>
    ({
      store,
      clock: () => new Date(Date.now() + offset),
      lease: DEFAULT_LEASE,
      log: pino({ level: "silent" }),
    }) satisfies Deps;
  const lean = (rows: Awaited<ReturnType<Store["intents"]["active"]>>) =>
    rows.map(({ id, place, state, record, lastAction, scope }) => ({
      id,
      place,
      state,
      record,
      lastAction,
      scope,
    }));
  let repoId = "";
  /** Both reads on the reader, with the cutoff of its clock now. */
  const both = async () => {
    const cutoff = leaseCutoff(deps(reader).clock(), DEFAULT_LEASE);
    return {
      peers: await reader.intents.activePeers(repoId, cutoff),
      whole: lean(await reader.intents.active(repoId, cutoff)),
    };
  };

  beforeAll(async () => {
    handles = await openTwoHandles(kind);
    [reader, writer] = handles.stores;
    repoId = (await addRepo(deps(writer), { name: "acme/peers" })).id;
  });
  afterAll(() => handles?.close());

  it("shows every write made through the other handle, and drops a lapsed lease", async () => {
    const d = deps(writer);
    const tokens = await Promise.all(
      ["ana", "bo"].map(async (person) => (await issueToken(d, { repo: "acme/peers", person })).token),
    );
    const call = (i: number) => authenticate(d, `Bearer ${tokens[i]!}`, `peers-${i}`);
    const [ana, bo] = [await call(0), await call(1)];
    const a = (await publish(d, ana, PublishRequest.parse({ type: "publish", prompt: "cart" }))).intentId;
    const b = (await publish(d, bo, PublishRequest.parse({ type: "publish", prompt: "billing" }))).intentId;
    const declare = (caller: typeof ana, intentId: string, spec: Record<string, unknown>) =>
      intent(d, caller, IntentRequest.parse({ type: "intent", intentId, intent: spec }));

    // No record yet: no place, nothing to remember.
    let seen = await both();
    expect(seen.peers.map((p) => [p.id, p.record])).toEqual([
      [a, null],
      [b, null],
    ]);
    expect(seen.peers).toEqual(seen.whole);

    await declare(ana, a, { objective: "cart api", outputs: ["cart-api"] });
    await declare(bo, b, { objective: "billing", outputs: ["billing"] });
    seen = await both(); // the reader now holds both records
    expect(seen.peers.map((p) => p.record?.objective)).toEqual(["cart api", "billing"]);
    expect(seen.peers).toEqual(seen.whole);

    // A new record for an intent it has seen: read by its new place, not the one remembered.
    await declare(bo, b, { objective: "billing on the cart", outputs: ["billing"], dependsOn: ["cart-api"] });
    seen = await both();
    expect(seen.peers[1]!.record).toMatchObject({
      objective: "billing on the cart",
      dependsOn: ["cart-api"],
    });
    expect(seen.peers).toEqual(seen.whole);

    // State, decision and claim columns are read each time.
    await checkpoint(d, ana, CheckpointRequest.parse({ type: "checkpoint", intentId: a, status: "blocked" }));
    await scope(d, bo, ScopeRequest.parse({ type: "scope", intentId: b, paths: ["billing/**"] }));
    seen = await both();
    expect(seen.peers.map((p) => [p.state, p.scope])).toEqual([
      ["blocked", []],
      ["planned", ["billing/**"]],
    ]);
    expect(seen.peers).toEqual(seen.whole);

    // A lease lapses with no write of its own to tell: bo calls in later (a renewal), ana does not.
    offset = DEFAULT_LEASE.leaseMs - 60_000;
    await call(1);
    offset = DEFAULT_LEASE.leaseMs + 1_000;
    seen = await both();
    expect(seen.peers.map((p) => p.id)).toEqual([b]);
    expect(seen.peers).toEqual(seen.whole);

    // Closed by the other handle (superseded by bo's next prompt): gone, and the new one, without a record, shown.
    const next = (await publish(d, bo, PublishRequest.parse({ type: "publish", prompt: "next" }))).intentId;
    seen = await both();
    expect(seen.peers.map((p) => [p.id, p.record])).toEqual([[next, null]]);
    expect(seen.peers).toEqual(seen.whole);
  });
});
