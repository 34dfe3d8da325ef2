import { describe, expect, it } from "vitest";
import { IntentRecord } from "@cohent/protocol";
import { resolve, sameObjective, type ResolverIntent } from "../../backend/src/core/resolver.js";

/** A resolver intent from a partial record; its place (in the repository's decisions) orders "earlier". */
function w(
  id: string,
  place: number,
  record: Partial<IntentRecord> | null,
  status: "active" | "completed" = "active",
): ResolverIntent {
  return {
    id,
    place,
    status,
    record: record ? IntentRecord.parse({ objective: `objective of ${id}`, ...record }) : null,
  };
}

const me = (record: Partial<IntentRecord> | null, place = 100) => w("wki_me", place, record);

describe("resolver rules, in the spec's order", () => {
  const cases: {
    name: string;
    me: ResolverIntent;
    peers: ResolverIntent[];
    action: string;
    rule: string;
    peerIds: string[];
  }[] = [
    {
      name: "no structured intent yet: plan",
      me: me(null),
      peers: [w("wki_a", 1, { outputs: ["x"] })],
      action: "plan",
      rule: "no-intent",
      peerIds: [],
    },
    {
      name: "alone: proceed",
      me: me({ outputs: ["x"] }),
      peers: [],
      action: "proceed",
      rule: "none",
      peerIds: [],
    },
    // 1. wait
    {
      name: "dependsOn an active peer's output: wait",
      me: me({ dependsOn: ["api"] }),
      peers: [w("wki_a", 1, { outputs: ["api"] })],
      action: "wait",
      rule: "wait",
      peerIds: ["wki_a"],
    },
    {
      name: "wait matches names case-insensitively",
      me: me({ dependsOn: ["API"] }),
      peers: [w("wki_a", 1, { outputs: ["api"] })],
      action: "wait",
      rule: "wait",
      peerIds: ["wki_a"],
    },
    {
      name: "wait on a later peer too (dependency, not age)",
      me: me({ dependsOn: ["api"] }, 1),
      peers: [w("wki_a", 500, { outputs: ["api"] })],
      action: "wait",
      rule: "wait",
      peerIds: ["wki_a"],
    },
    {
      name: "dependsOn an output nobody produces: ambiguous, proceed",
      me: me({ dependsOn: ["ghost"] }),
      peers: [w("wki_a", 1, { outputs: ["api"] })],
      action: "proceed",
      rule: "none",
      peerIds: [],
    },
    // 2. duplicate
    {
      name: "same objective and output, earlier peer: duplicate",
      me: me({ objective: "Build sign-in", outputs: ["ui"] }),
      peers: [w("wki_a", 1, { objective: "build  sign-in.", outputs: ["ui"] })],
      action: "duplicate",
      rule: "duplicate",
      peerIds: ["wki_a"],
    },
    {
      name: "same objective and output, later peer: the later one is the duplicate, I proceed",
      me: me({ objective: "Build sign-in", outputs: ["ui"] }, 1),
      peers: [w("wki_a", 500, { objective: "Build sign-in", outputs: ["ui"] })],
      action: "proceed",
      rule: "none",
      peerIds: [],
    },
    {
      name: "the first decided owns it, whichever was published first: a smaller id (published earlier) placed later is the duplicate",
      me: w("wki_0early", 2, { objective: "Build sign-in", outputs: ["ui"] }),
      peers: [w("wki_9late", 1, { objective: "Build sign-in", outputs: ["ui"] })],
      action: "duplicate",
      rule: "duplicate",
      peerIds: ["wki_9late"],
    },
    {
      name: "revised (placed last again) while my duplicate stands down: I still own it",
      me: me({ objective: "Build sign-in", outputs: ["ui"], state: "working" }, 3),
      peers: [{ ...w("wki_a", 2, { objective: "Build sign-in", outputs: ["ui"] }), standsDown: true }],
      action: "proceed",
      rule: "none",
      peerIds: [],
    },
    {
      name: "I stand down (a duplicate) and my owner revised (placed after me): still its duplicate",
      me: { ...me({ objective: "Build sign-in", outputs: ["ui"] }, 2), standsDown: true },
      peers: [w("wki_a", 3, { objective: "Build sign-in", outputs: ["ui"] })],
      action: "duplicate",
      rule: "duplicate",
      peerIds: ["wki_a"],
    },
    {
      name: "I stood down, my owner left, a peer placed after me took it: I am that one's duplicate, my place wins nothing back",
      me: { ...me({ objective: "Build X", outputs: ["x"] }, 2), standsDown: true },
      peers: [w("wki_took", 5, { objective: "Build X", outputs: ["x"] })],
      action: "duplicate",
      rule: "duplicate",
      peerIds: ["wki_took"],
    },
    {
      name: "revising into an objective a peer holds: placed last, I am its duplicate",
      me: me({ objective: "Build X", outputs: ["x"] }, 9),
      peers: [w("wki_holder", 4, { objective: "Build X", outputs: ["x"] })],
      action: "duplicate",
      rule: "duplicate",
      peerIds: ["wki_holder"],
    },
    {
      name: "three the same: the third is the duplicate of the one that proceeded, not of the one that stood down",
      me: me({ objective: "Build X", outputs: ["x"] }, 3),
      peers: [
        { ...w("wki_b", 2, { objective: "Build X", outputs: ["x"] }), standsDown: true },
        w("wki_a", 1, { objective: "Build X", outputs: ["x"] }),
      ],
      action: "duplicate",
      rule: "duplicate",
      peerIds: ["wki_a"],
    },
    {
      name: "the owner completed: a later duplicate proceeds (completed work is not duplicated)",
      me: { ...me({ objective: "Build X", outputs: ["x"] }, 2), standsDown: true },
      peers: [w("wki_a", 1, { objective: "Build X", outputs: ["x"] }, "completed")],
      action: "proceed",
      rule: "none",
      peerIds: [],
    },
    {
      name: "the owner lapsed or closed (not among the peers): the duplicate proceeds",
      me: { ...me({ objective: "Build X", outputs: ["x"] }, 2), standsDown: true },
      peers: [w("wki_other", 1, { objective: "Something else", outputs: ["y"] })],
      action: "proceed",
      rule: "none",
      peerIds: [],
    },
    {
      name: "a peer not yet placed (no record, place Infinity) owns nothing",
      me: me({ objective: "Build X", outputs: ["x"] }, 1),
      peers: [w("wki_a", Infinity, null)],
      action: "proceed",
      rule: "none",
      peerIds: [],
    },
    {
      name: "same objective, different outputs: not a duplicate",
      me: me({ objective: "Build sign-in", outputs: ["ui"] }),
      peers: [w("wki_a", 1, { objective: "Build sign-in", outputs: ["api"] })],
      action: "proceed",
      rule: "none",
      peerIds: [],
    },
    {
      name: "same output, different objective: ambiguous, proceed",
      me: me({ objective: "Build sign-in", outputs: ["ui"] }),
      peers: [w("wki_a", 1, { objective: "Restyle sign-in", outputs: ["ui"] })],
      action: "proceed",
      rule: "none",
      peerIds: [],
    },
    {
      name: "duplicate of completed work is not a duplicate",
      me: me({ objective: "Build sign-in", outputs: ["ui"] }),
      peers: [w("wki_a", 1, { objective: "Build sign-in", outputs: ["ui"] }, "completed")],
      action: "proceed",
      rule: "none",
      peerIds: [],
    },
    // 3. handoff
    {
      name: "a required capability I lack, an active peer has it: handoff",
      me: me({ requires: ["db-migrations"], capabilities: ["frontend"] }),
      peers: [w("wki_a", 1, { capabilities: ["db-migrations"] })],
      action: "handoff",
      rule: "handoff",
      peerIds: ["wki_a"],
    },
    {
      name: "a required capability I have: no handoff",
      me: me({ requires: ["frontend"], capabilities: ["frontend"] }),
      peers: [w("wki_a", 1, { capabilities: ["frontend"] })],
      action: "proceed",
      rule: "none",
      peerIds: [],
    },
    {
      name: "a required capability nobody has: ambiguous, proceed",
      me: me({ requires: ["gpu"] }),
      peers: [w("wki_a", 1, { capabilities: ["frontend"] })],
      action: "proceed",
      rule: "none",
      peerIds: [],
    },
    // 4. parallel
    {
      name: "shared component, separate outputs: parallel",
      me: me({ components: ["checkout"], outputs: ["ui"] }),
      peers: [w("wki_a", 1, { components: ["checkout"], outputs: ["api"] })],
      action: "parallel",
      rule: "parallel",
      peerIds: ["wki_a"],
    },
    {
      name: "shared component, shared output, other objective: ambiguous, proceed",
      me: me({ components: ["checkout"], outputs: ["ui"] }),
      peers: [w("wki_a", 1, { components: ["checkout"], outputs: ["ui"] })],
      action: "proceed",
      rule: "none",
      peerIds: [],
    },
    {
      name: "a deferred output an active peer produces: parallel",
      me: me({ deferred: ["api"], outputs: ["ui"] }),
      peers: [w("wki_a", 1, { outputs: ["api"] })],
      action: "parallel",
      rule: "parallel",
      peerIds: ["wki_a"],
    },
    // 5. completed dependency
    {
      name: "dependsOn a completed peer's output: proceed with its state",
      me: me({ dependsOn: ["api"] }),
      peers: [w("wki_a", 1, { outputs: ["api"] }, "completed")],
      action: "proceed",
      rule: "completed-dependency",
      peerIds: ["wki_a"],
    },
    // Issue 13: an intent answered duplicate or handoff stands down from its outputs.
    {
      name: "A completed X, C (a duplicate of A, still open) names X: B proceeds with A's completed state",
      me: me({ dependsOn: ["x"] }),
      peers: [
        w("wki_a", 1, { objective: "Build X", outputs: ["x"] }, "completed"),
        { ...w("wki_c", 2, { objective: "Build X", outputs: ["x"] }), standsDown: true },
      ],
      action: "proceed",
      rule: "completed-dependency",
      peerIds: ["wki_a"],
    },
    {
      name: "a handed-off peer's outputs make no one wait",
      me: me({ dependsOn: ["x"] }),
      peers: [{ ...w("wki_h", 1, { outputs: ["x"] }), standsDown: true }],
      action: "proceed",
      rule: "none",
      peerIds: [],
    },
    {
      name: "a peer that stood down owns no objective to duplicate",
      me: me({ objective: "Build X", outputs: ["x"] }),
      peers: [{ ...w("wki_c", 1, { objective: "Build X", outputs: ["x"] }), standsDown: true }],
      action: "proceed",
      rule: "none",
      peerIds: [],
    },
    {
      name: "the same open peer, not stood down: wait",
      me: me({ dependsOn: ["x"] }),
      peers: [w("wki_a", 1, { outputs: ["x"] }, "completed"), w("wki_c", 2, { outputs: ["x"] })],
      action: "wait",
      rule: "wait",
      peerIds: ["wki_c"],
    },
  ];
  it.each(cases)("$name", ({ me: caller, peers, action, rule, peerIds }) => {
    const r = resolve(caller, peers);
    expect({ action: r.action, rule: r.rule, peerIds: r.peerIds }).toEqual({ action, rule, peerIds });
    expect(r.reason.length).toBeGreaterThan(0);
  });
});

describe("resolver ties", () => {
  it("an earlier rule wins over a later one on the same peer (wait over parallel)", () => {
    const r = resolve(me({ dependsOn: ["api"], components: ["c"], outputs: ["ui"] }), [
      w("wki_a", 1, { outputs: ["api"], components: ["c"] }),
    ]);
    expect(r.action).toBe("wait");
  });
  it("an earlier rule wins across peers (duplicate on one, parallel on another)", () => {
    const r = resolve(me({ objective: "X", outputs: ["o"], components: ["c"] }), [
      w("wki_p", 1, { components: ["c"], outputs: ["z"] }),
      w("wki_d", 2, { objective: "x", outputs: ["o"] }),
    ]);
    expect([r.action, r.peerIds]).toEqual(["duplicate", ["wki_d"]]);
  });
  it("handoff wins over parallel", () => {
    const r = resolve(me({ requires: ["ops"], components: ["c"], outputs: ["ui"] }), [
      w("wki_p", 1, { components: ["c"], outputs: ["z"] }),
      w("wki_h", 2, { capabilities: ["ops"] }),
    ]);
    expect([r.action, r.peerIds]).toEqual(["handoff", ["wki_h"]]);
  });
  it("wait on an active producer wins over proceed on a completed one", () => {
    const r = resolve(me({ dependsOn: ["api"] }), [
      w("wki_done", 1, { outputs: ["api"] }, "completed"),
      w("wki_live", 2, { outputs: ["api"] }),
    ]);
    expect([r.action, r.peerIds]).toEqual(["wait", ["wki_live"]]);
  });
  it("several peers under one rule are all named, earliest placed first, ids breaking equal places", () => {
    const r = resolve(me({ dependsOn: ["api", "db"] }), [
      w("wki_c", 5, { outputs: ["db"] }),
      w("wki_b", 3, { outputs: ["api"] }),
      w("wki_a", 3, { outputs: ["db"] }),
    ]);
    expect(r.peerIds).toEqual(["wki_a", "wki_b", "wki_c"]);
    expect(r.names.sort()).toEqual(["api", "db"]);
  });
  it("equal places (never handed out twice): the smaller id is the earlier work for duplicate", () => {
    const same = { objective: "X", outputs: ["o"] };
    expect(resolve(w("wki_b", 7, same), [w("wki_a", 7, same)]).action).toBe("duplicate");
    expect(resolve(w("wki_a", 7, same), [w("wki_b", 7, same)]).action).toBe("proceed");
  });
  it("of two identical intents, at most one stood down, exactly one is the other's duplicate, whatever their places and ids", () => {
    const same = { objective: "Build X", outputs: ["x"] };
    for (const [pa, pb] of [
      [1, 2],
      [2, 1],
      [5, 5],
    ] as const)
      for (const [ia, ib] of [
        ["wki_a", "wki_b"],
        ["wki_b", "wki_a"],
      ] as const)
        for (const down of ["none", "a", "b"] as const) {
          const a = { ...w(ia, pa, same), ...(down === "a" ? { standsDown: true } : {}) };
          const b = { ...w(ib, pb, same), ...(down === "b" ? { standsDown: true } : {}) };
          const [ra, rb] = [resolve(a, [b]), resolve(b, [a])];
          const label = `${ia}@${pa} ${ib}@${pb}, stood down: ${down}`;
          expect([ra.action, rb.action].sort(), label).toEqual(["duplicate", "proceed"]);
          if (down !== "none") expect((down === "a" ? ra : rb).action, label).toBe("duplicate");
          const dup = ra.action === "duplicate" ? ra : rb;
          expect(dup.peerIds, label).toEqual([ra === dup ? b.id : a.id]);
        }
  });
  it("ignores itself and peers without a record", () => {
    const mine = me({ outputs: ["o"], dependsOn: ["o"] });
    expect(resolve(mine, [mine, w("wki_a", 1, null)]).action).toBe("proceed");
  });
  it("is deterministic whatever the order of the peer list", () => {
    const peers = [
      w("wki_a", 1, { outputs: ["api"] }),
      w("wki_b", 2, { outputs: ["api"] }),
      w("wki_c", 2, { components: ["c"] }),
    ];
    const caller = me({ dependsOn: ["api"], components: ["c"] });
    const a = resolve(caller, peers);
    const b = resolve(caller, [...peers].reverse());
    expect(b).toEqual(a);
  });
});

describe("sameObjective", () => {
  it.each([
    ["Build sign-in states", "build sign-in states", true],
    ["Build  sign-in\tstates.", "Build sign-in states", true],
    ["Build sign-in states", "Build sign-up states", false],
  ])("%s ~ %s -> %s", (a, b, same) => expect(sameObjective(a, b)).toBe(same));
});
