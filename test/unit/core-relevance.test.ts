import { describe, expect, it } from "vitest";
import { IntentRecord } from "@cohent/protocol";
import { isRelevant, relatedPeers } from "../../backend/src/core/relevance.js";

const work = (id: string, record: Partial<IntentRecord> | null, scope: string[] = []) => ({
  id,
  scope,
  record: record ? IntentRecord.parse({ objective: id, ...record }) : null,
});
const me = {
  ...work("me", { outputs: ["ui"], dependsOn: ["api"], deferred: ["docs"] }, ["src/ui"]),
  record: IntentRecord.parse({ objective: "me", outputs: ["ui"], dependsOn: ["api"], deferred: ["docs"] }),
};

describe("poll relevance: which peers a poll reports on", () => {
  it.each([
    { name: "named by my decision", peer: work("p", null), named: ["p"], related: true },
    { name: "produces what I depend on", peer: work("p", { outputs: ["API"] }), named: [], related: true },
    { name: "depends on my output", peer: work("p", { dependsOn: ["ui"] }), named: [], related: true },
    { name: "produces what I deferred", peer: work("p", { outputs: ["docs"] }), named: [], related: true },
    {
      name: "claims a path inside mine",
      peer: work("p", { outputs: ["x"] }, ["src/ui/button.ts"]),
      named: [],
      related: true,
    },
    {
      name: "unrelated names and paths",
      peer: work("p", { outputs: ["billing"] }, ["src/billing"]),
      named: [],
      related: false,
    },
    { name: "no record, no scope", peer: work("p", null), named: [], related: false },
  ])("$name: $related", ({ peer, named, related }) => {
    expect(relatedPeers(me, [peer], named, {}).has("p")).toBe(related);
  });

  it("case-insensitive repositories match paths case-insensitively", () => {
    const peer = work("p", null, ["SRC/UI/x.ts"]);
    expect(relatedPeers(me, [peer], [], {}).has("p")).toBe(false);
    expect(relatedPeers(me, [peer], [], { caseInsensitive: true }).has("p")).toBe(true);
  });
});

describe("poll relevance: which changes a poll shows", () => {
  const related = new Set(["p"]);
  it.each([
    { name: "my own decision", e: { intentId: "me", kind: "decision", peerIds: [] }, shown: true },
    {
      name: "a control command on my session",
      e: { intentId: "me", kind: "control", peerIds: [] },
      shown: true,
    },
    {
      name: "my own checkpoint (I know it)",
      e: { intentId: "me", kind: "checkpoint", peerIds: [] },
      shown: false,
    },
    {
      name: "a related peer's checkpoint",
      e: { intentId: "p", kind: "checkpoint", peerIds: [] },
      shown: true,
    },
    {
      name: "an unrelated peer's decision naming me",
      e: { intentId: "q", kind: "decision", peerIds: ["me"] },
      shown: true,
    },
    {
      name: "an unrelated peer's change",
      e: { intentId: "q", kind: "scope.claimed", peerIds: ["p"] },
      shown: false,
    },
  ])("$name: $shown", ({ e, shown }) => expect(isRelevant(e, "me", related)).toBe(shown));
});
