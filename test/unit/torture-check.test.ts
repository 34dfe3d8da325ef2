import { describe, expect, it } from "vitest";
import { checkHistory, type AnomalyKind } from "../../cli/src/torture/check.js";
import {
  historyText,
  parseHistory,
  type FaultRecord,
  type FinalRead,
  type History,
  type OpRecord,
} from "../../cli/src/torture/history.js";

/**
 * The torture's checker (cli/src/torture/check.ts), on hand-written histories: each plant the issue names
 * (a claim granted without its epoch check, a pause read from a stale cache, a retry stored twice) and the
 * other anomalies must be reported; the legal histories next to them (a lapse told, a resume between, a
 * retry stored once, a claim freed and taken in turn) must not.
 */

const A = "http://127.0.0.1:1";
const B = "http://127.0.0.1:2";
let n = 0;

/** An op; times in ms since the run's start. */
function op(
  process: string,
  session: string,
  name: OpRecord["op"],
  invokeAt: number,
  completeAt: number | null,
  more: Partial<OpRecord> = {},
): OpRecord {
  return {
    kind: "op",
    id: `op${++n}`,
    process,
    session,
    instance: A,
    op: name,
    args: {},
    invokeAt,
    completeAt,
    outcome: completeAt === null ? "unknown" : "ok",
    epoch: 0,
    ...more,
  };
}
const agent = (s: string) => `agent:${s}`;
const claim = (s: string, paths: string[], at: number, more: Partial<OpRecord> = {}) =>
  op(agent(s), s, "scope", at, at + 10, { args: { intentId: `wki_${s}`, paths }, ...more });
const release = (s: string, at: number) =>
  op(agent(s), s, "scope", at, at + 10, { args: { intentId: `wki_${s}`, paths: [] } });
const call = (s: string, at: number, more: Partial<OpRecord> = {}) =>
  op(agent(s), s, "kill-switch", at, at + 5, more);
const refused = (s: string, paths: string[], at: number, code = "SCOPE_CONFLICT") =>
  claim(s, paths, at, { outcome: "fail", status: 409, code, retryable: true });
const control = (s: string, kind: string, at: number, completeAt: number | null = at + 20) =>
  op("person", s, "control", at, completeAt, { args: { control: kind } });
const checkpoint = (s: string, write: string, summary: string, at: number, more: Partial<OpRecord> = {}) =>
  op(agent(s), s, "checkpoint", at, at + 10, {
    write,
    args: { intentId: `wki_${s}`, status: "working", summary },
    ...more,
  });

function history(
  ops: OpRecord[],
  more: { faults?: FaultRecord[]; final?: Partial<FinalRead>; leaseMs?: number } = {},
): History {
  return {
    header: {
      kind: "header",
      startedAt: 0,
      leaseMs: more.leaseMs ?? 10_000,
      renewMs: 500,
      skewMs: 1_000,
      staleMs: 3_000,
      instances: [A, B],
      database: "postgres",
    },
    ops,
    faults: more.faults ?? [],
    final: more.final ? { kind: "final", at: 0, checkpoints: {}, intents: {}, ...more.final } : null,
  };
}

const kinds = (h: History): AnomalyKind[] => checkHistory(h).anomalies.map((a) => a.kind);

/** Calls every `every` ms from `from` to `to`: a live session renewing its lease. */
const keepAlive = (s: string, from: number, to: number, every = 1_000) =>
  Array.from({ length: Math.floor((to - from) / every) }, (_, i) => call(s, from + (i + 1) * every));

describe("torture checker: histories that must fail", () => {
  it("a claim granted without its epoch check: two live sessions hold overlapping paths", () => {
    // a holds src/app and keeps calling; b is granted src/app/x.ts while a still holds it.
    const h = history([
      claim("a", ["src/app"], 0),
      ...keepAlive("a", 0, 8_000),
      claim("b", ["src/app/x.ts"], 4_000),
    ]);
    expect(kinds(h)).toEqual(["overlap"]);
    expect(checkHistory(h).anomalies[0]!.message).toContain("src/app");
  });

  it("an overlap through another instance, the grant answered late", () => {
    const h = history([
      claim("a", ["docs"], 0),
      ...keepAlive("a", 0, 6_000),
      op(agent("b"), "b", "scope", 1_000, 5_000, { instance: B, args: { paths: ["docs/**"] } }),
    ]);
    expect(kinds(h)).toEqual(["overlap"]);
  });

  it("a lost claim's holder not told: its epoch stays after a peer took the paths", () => {
    // a goes silent past its lease (frozen), b takes the paths, a comes back: its answers must show a new epoch.
    const h = history([
      claim("a", ["lib"], 0),
      claim("b", ["lib"], 12_000),
      ...keepAlive("b", 12_000, 20_000),
      call("a", 18_000, { epoch: 0 }),
    ]);
    expect(kinds(h)).toEqual(["holder-not-told"]);
  });

  it("a pause read from a stale cache: a claim invoked after the pause's answer is granted", () => {
    const h = history([
      claim("a", ["x"], 0),
      control("a", "pause", 1_000, 1_050),
      claim("a", ["y"], 1_200),
      control("a", "resume", 3_000),
    ]);
    expect(kinds(h)).toEqual(["late-pause"]);
  });

  it("a checkpoint with paths claims too: granted after a pause's answer, and overlapping a live holder", () => {
    const h = history([
      claim("a", ["x"], 0),
      control("a", "pause", 1_000, 1_050),
      checkpoint("a", "w9", "s9", 1_200, {
        args: { intentId: "wki_a", status: "working", summary: "s9", paths: ["x"] },
      }),
      control("a", "resume", 3_000),
      ...keepAlive("a", 0, 8_000),
      checkpoint("b", "w10", "s10", 4_000, {
        args: { intentId: "wki_b", status: "working", summary: "s10", paths: ["x/y"] },
      }),
    ]);
    expect(kinds(h).sort()).toEqual(["late-pause", "overlap"]);
  });

  it("a retry stored twice: one logical checkpoint, two rows", () => {
    const h = history(
      [
        checkpoint("a", "w1", "step 1 of a", 0, { outcome: "unknown", completeAt: null }),
        checkpoint("a", "w1", "step 1 of a", 2_000),
      ],
      { final: { checkpoints: { "step 1 of a": 2 } } },
    );
    expect(kinds(h)).toEqual(["doubled-write"]);
  });

  it("a write never acknowledged but stored twice is doubled too", () => {
    const h = history([checkpoint("a", "w2", "s2", 0, { outcome: "unknown", completeAt: null })], {
      final: { checkpoints: { s2: 2 } },
    });
    expect(kinds(h)).toEqual(["doubled-write"]);
  });

  it("an acknowledged write missing from the final read is lost", () => {
    const h = history(
      [
        checkpoint("a", "w3", "s3", 0),
        op(agent("a"), "a", "publish", 100, 150, { write: "w4", args: { prompt: "task 4" } }),
      ],
      { final: { checkpoints: {}, intents: { "task 4": 1 } } },
    );
    expect(kinds(h)).toEqual(["lost-write"]);
  });

  it("a non-retryable error during an outage", () => {
    const h = history(
      [
        call("a", 0),
        op(agent("a"), "a", "checkpoint", 5_000, 5_100, {
          outcome: "fail",
          status: 500,
          code: "GIT_FAILED",
          retryable: false,
        }),
        call("a", 9_000),
      ],
      {
        faults: [
          { kind: "fault", fault: "database-stall", target: "postgres", startAt: 4_000, endAt: 6_000 },
        ],
      },
    );
    expect(kinds(h)).toEqual(["non-retryable-in-outage"]);
  });

  it("identical intents at once: two told to proceed", () => {
    const intent = (s: string, action: string) =>
      op("burst", s, "intent", 0, 50, { args: { objective: "burst 1" }, result: { action } });
    const h = history([intent("b1", "proceed"), intent("b2", "proceed"), intent("b3", "duplicate")]);
    expect(kinds(h)).toEqual(["duplicate-burst"]);
  });

  it("a fault after which nothing answers again", () => {
    const h = history(
      [
        call("a", 0),
        call("a", 25_000, { outcome: "unknown", completeAt: null }),
        call("a", 30_000, { outcome: "fail", code: "DATABASE_UNAVAILABLE", retryable: true }),
      ],
      { faults: [{ kind: "fault", fault: "kill-instance", target: A, startAt: 1_000, endAt: 2_000 }] },
    );
    expect(kinds(h)).toEqual(["no-recovery"]);
  });
});

describe("torture checker: histories that must pass", () => {
  it("claims freed and taken in turn, a refusal while held", () => {
    const h = history([
      claim("a", ["src"], 0),
      refused("b", ["src/a.ts"], 500),
      release("a", 1_000),
      claim("b", ["src/a.ts"], 1_005), // invoked before a's release answered: its effect may come first
      claim("c", ["other"], 1_100),
    ]);
    expect(kinds(h)).toEqual([]);
  });

  it("a lapsed lease: a silent holder's paths taken, and the holder told by a new epoch", () => {
    const h = history([
      claim("a", ["lib"], 0),
      claim("b", ["lib"], 9_000), // 10 s lease, 1 s skew, 0.5 s renewal: a may have lapsed after ~8.2 s
      ...keepAlive("b", 9_000, 20_000),
      call("a", 10_000, { epoch: 0 }), // within the cache's staleness: may still show the old epoch
      call("a", 13_000, { epoch: 1 }),
    ]);
    expect(kinds(h)).toEqual([]);
  });

  it("a pause answered after the claim was invoked, or a resume invoked first", () => {
    const h = history([
      control("a", "pause", 1_000, 1_300),
      claim("a", ["x"], 1_200), // invoked before the pause's answer: either order is legal
      control("a", "resume", 2_000, 2_500),
      claim("a", ["y"], 2_100), // invoked after the resume was: may see it
      control("b", "pause", 3_000),
      refused("b", ["z"], 3_500, "SESSION_PAUSED"),
    ]);
    expect(kinds(h)).toEqual([]);
  });

  it("a retried write stored once, an unanswered one stored once or never", () => {
    const h = history(
      [
        checkpoint("a", "w1", "s1", 0, { outcome: "unknown", completeAt: null }),
        checkpoint("a", "w1", "s1", 1_000),
        checkpoint("a", "w2", "s2", 2_000, { outcome: "unknown", completeAt: null }),
        checkpoint("a", "w3", "s3", 3_000, {
          outcome: "fail",
          code: "DATABASE_UNAVAILABLE",
          retryable: true,
        }),
      ],
      { final: { checkpoints: { s1: 1, s2: 1 } } },
    );
    expect(kinds(h)).toEqual([]);
  });

  it("retryable errors and cut connections during an outage, and its recovery time", () => {
    const h = history(
      [
        call("a", 4_100, { outcome: "fail", status: 503, code: "DATABASE_UNAVAILABLE", retryable: true }),
        call("a", 4_500, { outcome: "fail", status: 503, code: "OVERLOADED", retryable: true }),
        call("a", 5_000, { outcome: "unknown", completeAt: null }),
        call("a", 6_200),
      ],
      {
        faults: [
          { kind: "fault", fault: "database-stall", target: "postgres", startAt: 4_000, endAt: 6_000 },
        ],
      },
    );
    const r = checkHistory(h);
    expect(r.anomalies).toEqual([]);
    expect(r.recoveries).toEqual([
      { fault: "database-stall", target: "postgres", startAt: 4_000, recoveryMs: 205 },
    ]);
  });

  it("identical intents: one proceeds, the rest are duplicates", () => {
    const intent = (s: string, action: string) =>
      op("burst", s, "intent", 0, 50, { args: { objective: "burst 2" }, result: { action } });
    expect(
      kinds(history([intent("b1", "duplicate"), intent("b2", "proceed"), intent("b3", "duplicate")])),
    ).toEqual([]);
  });

  it("a claim retried after a pause: its first attempt, invoked before the pause's answer, may be what took effect", () => {
    const h = history([
      claim("a", ["x"], 1_000, { write: "k1", outcome: "unknown", completeAt: null }),
      control("a", "pause", 1_100, 1_150),
      claim("a", ["x"], 1_200, { write: "k1" }), // the same key: the first attempt's grant, replayed
      control("a", "resume", 3_000),
    ]);
    expect(kinds(h)).toEqual([]);
    // The same retry without the shared key is a new call, invoked after the pause: a late pause.
    const fresh = history([
      claim("a", ["x"], 1_000, { write: "k1", outcome: "unknown", completeAt: null }),
      control("a", "pause", 1_100, 1_150),
      claim("a", ["x"], 1_200, { write: "k2" }),
      control("a", "resume", 3_000),
    ]);
    expect(kinds(fresh)).toEqual(["late-pause"]);
  });

  it("an unanswered publish may still supersede the intent: the claim after it is not certain, until settled", () => {
    const ops = (publish: Partial<OpRecord>[]) => [
      ...publish.map((p, i) =>
        op(agent("a"), "a", "publish", 0 + i * 100, null, { write: "p1", args: { prompt: "t1" }, ...p }),
      ),
      claim("a", ["src"], 1_000),
      ...keepAlive("a", 1_000, 8_000),
      claim("b", ["src"], 3_000),
    ];
    expect(kinds(history(ops([{}])))).toEqual([]);
    // Its retry answered: the publish is settled, and the overlap is certain again.
    expect(kinds(history(ops([{}, { outcome: "ok", completeAt: 150 }])))).toEqual(["overlap"]);
    expect(
      kinds(history(ops([{}, { outcome: "fail", completeAt: 150, code: "REQUEST_IN_FLIGHT" }]))),
    ).toEqual([]);
  });

  it("round-trips through the JSONL file", () => {
    const h = history([
      claim("a", ["src/app"], 0),
      ...keepAlive("a", 0, 8_000),
      claim("b", ["src/app/x.ts"], 4_000),
    ]);
    expect(kinds(parseHistory(historyText(h)))).toEqual(["overlap"]);
  });
});
