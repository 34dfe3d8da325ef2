import { describe, expect, it } from "vitest";
import { IntentRecord, type Recap } from "@cohent/protocol";
import { classify, renderRecap, type RecapRow } from "../../backend/src/core/recap.js";

const t0 = new Date("2026-01-01T00:00:00.000Z");
const row = (id: string, over: Partial<RecapRow> & { rec?: Partial<IntentRecord> }): RecapRow => {
  const { rec, ...rest } = over;
  return {
    id,
    person: "ana",
    client: "codex",
    model: null,
    prompt: `prompt of ${id}`,
    record: rec ? IntentRecord.parse({ objective: `objective ${id}`, ...rec }) : null,
    state: "working",
    lastAction: "proceed",
    closedAt: null,
    updatedAt: t0,
    scope: [],
    checkpoints: [],
    ...rest,
  };
};

describe("recap classification", () => {
  it.each([
    { name: "completed", r: row("a", { state: "completed", closedAt: t0 }), section: "completed" },
    { name: "abandoned", r: row("a", { state: "abandoned", closedAt: t0 }), section: "abandoned" },
    {
      name: "superseded (closed otherwise): left out",
      r: row("a", { state: "superseded", closedAt: t0 }),
      section: null,
    },
    { name: "blocked", r: row("a", { state: "blocked", rec: { blockers: ["no db"] } }), section: "blocked" },
    {
      name: "waiting (its last decision)",
      r: row("a", { lastAction: "wait", rec: { dependsOn: ["api"] } }),
      section: "waiting",
    },
    {
      name: "blocked wins over waiting",
      r: row("a", { state: "blocked", lastAction: "wait" }),
      section: "blocked",
    },
    {
      name: "anything else open: in progress",
      r: row("a", { state: "planned", lastAction: "parallel" }),
      section: "inProgress",
    },
  ] as const)("$name", ({ r, section }) => {
    const out = classify([r]);
    const sections = ["completed", "abandoned", "blocked", "waiting", "inProgress"] as const;
    for (const s of sections) expect(out[s].length, s).toBe(s === section ? 1 : 0);
  });

  it("a waiting item names who holds what it waits for; paths join claim and checkpoints; the last summary wins", () => {
    const producer = row("p", {
      person: "bo",
      rec: { objective: "Cart API", outputs: ["API"] },
      scope: ["src/api"],
    });
    const waiter = row("w", {
      lastAction: "wait",
      rec: { dependsOn: ["api"] },
      scope: ["b.ts"],
      checkpoints: [
        { summary: "one", paths: ["a.ts"] },
        { summary: "two", paths: [] },
      ],
    });
    const out = classify([producer, waiter]);
    expect(out.waiting[0]).toMatchObject({
      dependsOn: ["api"],
      waitingOn: [{ person: "bo", objective: "Cart API" }],
      paths: ["a.ts", "b.ts"],
      summary: "two",
    });
    expect(out.people).toEqual(["ana", "bo"]);
    const recap: Recap = { repo: "acme/shop", since: "s", until: "u", ...out, humanCommands: 2 };
    expect(renderRecap(recap)).toContain("held by bo: Cart API");
    expect(renderRecap(recap)).toContain("People: ana, bo. Human commands: 2.");
  });

  it("lists an intent's commits, oldest first, one line each in the text", () => {
    const commit = (hash: string, paths: string[]) => ({
      hash,
      paths,
      summary: `Committed ${hash.slice(0, 12)}: work`,
      at: t0.toISOString(),
    });
    const r = row("c", {
      state: "completed",
      closedAt: t0,
      rec: { objective: "Feature C" },
      checkpoints: [
        {
          summary: "Committed aaaaaaaaaaaa: work",
          paths: ["src/c/x.ts"],
          commit: commit("a".repeat(40), ["src/c/x.ts"]),
        },
        { summary: "edited", paths: ["src/c/y.ts"] },
        {
          summary: "Committed bbbbbbbbbbbb: work",
          paths: ["src/c/y.ts"],
          commit: commit("b".repeat(40), ["src/c/y.ts"]),
        },
      ],
    });
    const out = classify([r, row("d", {})]);
    expect(out.completed[0]!.commits.map((c) => c.hash)).toEqual(["a".repeat(40), "b".repeat(40)]);
    expect(out.inProgress[0]!.commits).toEqual([]);
    const text = renderRecap({ repo: "acme/shop", since: "s", until: "u", ...out, humanCommands: 0 });
    expect(text).toContain(`commit ${"a".repeat(12)}: src/c/x.ts`);
    expect(text).toContain(`commit ${"b".repeat(12)}`);
    expect(text.indexOf("a".repeat(12))).toBeLessThan(text.indexOf("b".repeat(12)));
  });
});
