import { describe, expect, it } from "vitest";
import {
  METRIC_NAMES,
  queueWait,
  SERIES,
  tally,
  totals,
  type MetricRows,
} from "../../backend/src/core/metrics.js";

const at = (m: number) => new Date(Date.UTC(2026, 0, 1, 0, m));
const rows: MetricRows = {
  decisions: ["wait", "duplicate", "handoff", "parallel", "proceed", "plan", "wait"].map((action, i) => ({
    action,
    createdAt: at(i),
  })),
  catches: ["scope-conflict", "outside-scope", "edit-before-intent", "session-paused", "shell-write"].map(
    (kind, i) => ({
      kind,
      createdAt: at(10 + i),
    }),
  ),
  packets: [
    { tokens: 10, ackedChars: 40 },
    { tokens: 5, ackedChars: null },
    { tokens: 1, ackedChars: 4 },
  ].map((p, i) => ({ ...p, createdAt: at(20 + i) })),
  commands: [{ createdAt: at(30) }, { createdAt: at(31) }],
  events: [
    { kind: "scope.queued", createdAt: at(32) },
    { kind: "scope.queued", createdAt: at(33) },
  ],
  notices: [
    { kind: "scope-granted", waitedMs: 1_000 },
    { kind: "scope-granted", waitedMs: 3_000 },
    { kind: "scope-granted", waitedMs: 2_000 },
    { kind: "scope-lost", waitedMs: null },
  ].map((n, i) => ({ ...n, createdAt: at(34 + i) })),
  asks: [
    { createdAt: at(38), honouredAt: at(39) },
    { createdAt: at(39), honouredAt: null },
    { createdAt: at(39), honouredAt: null },
  ],
};

describe("metric definitions", () => {
  it.each([
    // decisions naming a peer (4 wait/duplicate/handoff/parallel + the second wait) + path catches (3)
    ["potentialOverlaps", 8],
    ["redirections", 4],
    ["pathGuardCatches", 3],
    ["guardRefusals", 5],
    ["packets", 3],
    ["packetTokens", 16],
    ["injectedChars", 44],
    ["dependencyWaits", 2],
    ["humanCommands", 2],
    ["waitsQueued", 2],
    ["grantedFromQueue", 3],
    ["releaseRequests", 3],
    ["releasesHonoured", 1],
    ["lostClaimNotices", 1],
    ["shellWritesCaught", 1],
  ] as const)("%s = %i", (name, value) => {
    expect(totals(rows)[name]).toBe(value);
  });

  it("every series sums to its total: one definition for both", () => {
    const slot = (d: Date) => Math.min(3, Math.floor(d.getUTCMinutes() / 10));
    const series = tally(rows, 4, slot);
    const total = totals(rows);
    for (const name of METRIC_NAMES)
      expect(
        series[name].reduce((a, b) => a + b, 0),
        name,
      ).toBe(total[name]);
    expect(series.packets).toEqual([0, 0, 3, 0]);
    for (const metric of Object.values(SERIES)) expect(METRIC_NAMES).toContain(metric);
  });

  it("time in the queue: nearest-rank p50 and p95 of the grants' waits; null without any", () => {
    expect(queueWait(rows)).toEqual({ queueWaitP50Ms: 2_000, queueWaitP95Ms: 3_000 });
    expect(queueWait({ notices: [] })).toEqual({ queueWaitP50Ms: null, queueWaitP95Ms: null });
  });

  it("no rows, all zero", () => {
    const none = { decisions: [], catches: [], packets: [], commands: [], events: [], notices: [], asks: [] };
    expect(Object.values(totals(none)).every((v) => v === 0)).toBe(true);
  });
});
