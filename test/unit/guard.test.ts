import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { GUIDANCE, INTENT_COMMAND } from "@cohent/protocol/actions";
import {
  adapterFailed,
  assess,
  autoClaim,
  deadlineReason,
  FAIL_CLOSED_REASON,
  GUARD_TABLE,
  MISSED_PUBLISH,
  missedPublish,
  publishBound,
  publishMark,
  stopCheckpoint,
  withNotices,
  type Snapshot,
  type ToolKind,
} from "../../adapter/src/guard/guard.js";
import { scrubPaths } from "../../client/src/redact.js";

/**
 * The pure guard against the specification's PreToolUse table
 * (coordination-protocol, "The PreToolUse hook covers edit tools and shell
 * tools"), row by row: GUARD_TABLE is that table as data, and for each
 * condition, a snapshot in which it alone holds gives the spec's decision
 * for an edit and for a shell tool. The table is copied here so that
 * `npm test` runs on a clone alone (and in CI's copy of the tree, made in a
 * temporary folder); where the spec is beside the clone (../shared, as on
 * the developers' machines and in CI's first run), the copy is checked
 * against it, so that neither can drift.
 */
const SPEC_TABLE = `
Condition	Edit tools	Shell tools
Paused or cancelled from the control center	Blocked	Blocked
Paired but the control plane is unreachable	Blocked	Blocked
Configuration unusable	Blocked	Blocked
No prompt or semantic intent announced	Blocked	Allowed
Scope overlaps an active peer scope	Blocked	Allowed
The write targets a path outside the declared scope	Blocked	Allowed
`;
const SPEC_FILE = fileURLToPath(new URL("../../../shared/spec/coordination-protocol.txt", import.meta.url));
const SPEC_HEADER = "Condition\tEdit tools\tShell tools";

/** The table's lines from the header on, up to the first blank line. */
function tableLines(text: string): string[] {
  const lines = text.split(/\r?\n/);
  const at = lines.indexOf(SPEC_HEADER);
  if (at < 0) throw new Error(`No line "${SPEC_HEADER.replace(/\t/g, "<TAB>")}"`);
  const end = lines.findIndex((l, i) => i > at && l.trim() === "");
  return lines.slice(at, end < 0 ? undefined : end);
}

function specTable(): [condition: string, edit: string, shell: string][] {
  return tableLines(SPEC_TABLE)
    .slice(1)
    .map((line) => line.split("\t") as [string, string, string]);
}

/** A snapshot where nothing holds: an active, reachable, configured session proceeding inside its scope. */
const clear = (): Snapshot => ({
  control: "active",
  controlReason: null,
  contactError: null,
  configError: null,
  intentId: "wki_1",
  missedPublish: false,
  action: "proceed",
  scope: ["src/a"],
  explicitScope: true,
  targets: ["src/a/x.ts"],
  targetError: null,
  claimError: null,
});

const conflict = {
  code: "SCOPE_CONFLICT",
  message: "The scope overlaps an active peer's scope.",
  details: {
    conflicts: [
      {
        intentId: "wki_9",
        person: "bob",
        client: "Codex",
        model: "gpt-5.5",
        objective: "Refactor",
        paths: ["src/a/x.ts"],
        theirPaths: ["src/a"],
      },
    ],
  },
};

/** How each of the spec's conditions comes to hold in a snapshot. */
const HOLDING: Record<string, (s: Snapshot) => Partial<Snapshot>> = {
  "Paused or cancelled from the control center": () => ({ control: "paused", controlReason: "hold on" }),
  "Paired but the control plane is unreachable": () => ({
    contactError: {
      code: "CONTROL_PLANE_UNREACHABLE",
      message: "The Cohent service at http://x cannot be reached.",
    },
  }),
  "Configuration unusable": () => ({ configError: "No .cohent/project.json" }),
  "No prompt or semantic intent announced": () => ({ intentId: null, action: null }),
  "Scope overlaps an active peer scope": () => ({ claimError: conflict }),
  "The write targets a path outside the declared scope": () => ({ targets: ["docs/notes.md"] }),
};

/** The spec's conditions, by the guard's names for them. */
const CONDITION: Record<string, (typeof GUARD_TABLE)[number]["condition"]> = {
  "Paused or cancelled from the control center": "stopped",
  "Paired but the control plane is unreachable": "unreachable",
  "Configuration unusable": "unconfigured",
  "No prompt or semantic intent announced": "intentNotReady",
  "Scope overlaps an active peer scope": "scopeConflict",
  "The write targets a path outside the declared scope": "outsideScope",
};

const rows = specTable();
const DECISION: Record<string, string> = { Blocked: "block", Allowed: "allow" };

describe("the guard, against the spec's table", () => {
  it.skipIf(!existsSync(SPEC_FILE))("the table here is the spec's, as ../shared/spec has it", () => {
    expect(tableLines(readFileSync(SPEC_FILE, "utf8"))).toEqual(tableLines(SPEC_TABLE));
  });
  it("covers every row of the spec", () => {
    expect(rows.map((r) => r[0]).sort()).toEqual(Object.keys(HOLDING).sort());
    expect(Object.keys(CONDITION).sort()).toEqual(Object.keys(HOLDING).sort());
  });
  it("GUARD_TABLE is the spec's table, row for row, in the spec's order", () => {
    for (const [, edit, shell] of rows) expect([edit, shell].every((d) => d in DECISION)).toBe(true);
    expect(GUARD_TABLE).toEqual(
      rows.map(([condition, edit, shell]) => ({
        condition: CONDITION[condition],
        edit: DECISION[edit],
        shell: DECISION[shell],
      })),
    );
  });
  it("allows both kinds when no condition holds", () => {
    expect(assess({ kind: "edit" }, clear()).permission).toBe("allow");
    expect(assess({ kind: "shell" }, clear()).permission).toBe("allow");
  });
  for (const [condition, edit, shell] of rows) {
    for (const [kind, expected] of [
      ["edit", edit],
      ["shell", shell],
    ] as [ToolKind, string][]) {
      it(`${condition}: ${kind} tools ${expected.toLowerCase()}`, () => {
        const s = { ...clear(), ...HOLDING[condition]!(clear()) };
        const v = assess({ kind }, s);
        expect(v.permission).toBe(expected === "Blocked" ? "deny" : "allow");
        if (v.permission === "deny") expect(v.reason.trim().length).toBeGreaterThan(10);
      });
    }
  }
  it("the first holding row decides, in the spec's order", () => {
    const s = {
      ...clear(),
      configError: "broken",
      targets: ["docs/x.md"],
      contactError: { code: "CONTROL_PLANE_UNREACHABLE", message: "down" },
    };
    expect(assess({ kind: "edit" }, s)).toMatchObject({
      permission: "deny",
      condition: "unreachable",
      reason: "down",
    });
    expect(assess({ kind: "edit" }, { ...s, control: "cancelled" })).toMatchObject({ condition: "stopped" });
  });
});

describe("a service that answers but cannot vouch for the call", () => {
  const cases: [code: string, outcome: "deny" | "allow"][] = [
    ["DATABASE_UNAVAILABLE", "deny"],
    ["INTERNAL", "deny"],
    ["RATE_LIMITED", "deny"],
    ["INTENT_NOT_FOUND", "allow"],
  ];
  for (const [code, outcome] of cases)
    it(`${code} on the contact: edits and shells ${outcome === "deny" ? "refused with the code" : "judged on the rest"}`, () => {
      for (const kind of ["edit", "shell"] as ToolKind[]) {
        const v = assess({ kind }, { ...clear(), contactError: { code, message: "nope" } });
        expect(v.permission).toBe(outcome);
        if (v.permission === "deny") {
          expect(v.condition).toBe("unreachable");
          expect(v.reason).toContain(code);
        }
      }
    });
});

describe("refusal texts", () => {
  it("name the stop, the peer, the scope and the next command", () => {
    expect(
      assess({ kind: "shell" }, { ...clear(), control: "paused", controlReason: "hold on" }).reason,
    ).toMatch(/paused from the Cohent Control Room \(hold on\)/);
    expect(assess({ kind: "edit" }, { ...clear(), claimError: conflict }).reason).toMatch(
      /src\/a\/x\.ts overlaps the scope of bob \(Codex gpt-5\.5\): src\/a, working on "Refactor" \(wki_9\)/,
    );
    expect(assess({ kind: "edit" }, { ...clear(), targets: ["docs/n.md"] }).reason).toMatch(
      /docs\/n\.md lies outside your declared scope \(src\/a\).*scope src\/a docs\/n\.md$/,
    );
    expect(assess({ kind: "edit" }, { ...clear(), intentId: null }).reason).toContain(INTENT_COMMAND);
    for (const action of ["plan", "wait", "duplicate", "handoff", "completed", "abandoned"] as const) {
      expect(assess({ kind: "edit" }, { ...clear(), action }).reason).toContain(GUIDANCE[action]);
    }
    expect(assess({ kind: "edit" }, { ...clear(), action: "parallel" }).permission).toBe("allow");
  });
  it("a peer's scope: how to queue or wait for the whole claim, what to do meanwhile, and how to ask the holder", () => {
    const implicit = { ...clear(), explicitScope: false, scope: ["src/b.ts"], claimError: conflict };
    const reason = assess({ kind: "edit" }, implicit).reason!;
    expect(reason).toContain("Meanwhile, work on files outside src/a/x.ts.");
    expect(reason).toContain("node .cohent/cohent.mjs scope --queue src/b.ts src/a/x.ts");
    expect(reason).toContain(
      "node .cohent/cohent.mjs scope --wait <seconds, at most 120> src/b.ts src/a/x.ts",
    );
    expect(reason).toContain("node .cohent/cohent.mjs request-release src/a/x.ts --note '<why>'");
    expect(reason).toMatch(/a later packet says "granted"/);
    // A path the exemption's parser would not read bare is quoted in the command to copy.
    const spaced = { ...implicit, scope: [], targets: ["docs/my notes.md"] };
    expect(assess({ kind: "edit" }, spaced).reason).toContain("scope --queue 'docs/my notes.md'");
  });
  it("notices received on the call open a refusal, and leave an allow alone", () => {
    const denied = assess({ kind: "edit" }, { ...clear(), claimError: conflict });
    const told = withNotices(denied, "[cohent] scope src/z lost: your lease expired.");
    expect(told.reason!.startsWith("[cohent] scope src/z lost: your lease expired.\n\nedit refused:")).toBe(
      true,
    );
    expect(withNotices(denied, undefined)).toBe(denied);
    const allowed = assess({ kind: "edit" }, clear());
    expect(withNotices(allowed, "[cohent] x")).toBe(allowed);
  });
  it("an edit whose targets cannot be read needs a declared scope", () => {
    expect(assess({ kind: "edit" }, { ...clear(), targets: null, explicitScope: false }).reason).toMatch(
      /cannot read this edit's targets/,
    );
    expect(assess({ kind: "edit" }, { ...clear(), targets: null }).permission).toBe("allow");
  });
});

describe("the scope the guard claims by itself", () => {
  const implicit = { ...clear(), explicitScope: false, scope: ["src/a/x.ts"], targets: ["src/b.ts"] };
  it("adds an edit's targets to an implicit scope, only when the earlier rows pass", () => {
    expect(autoClaim({ kind: "edit" }, implicit)).toEqual(["src/a/x.ts", "src/b.ts"]);
    expect(autoClaim({ kind: "edit" }, { ...implicit, control: "paused" })).toBeNull();
    expect(autoClaim({ kind: "edit" }, { ...implicit, action: "wait" })).toBeNull();
    expect(autoClaim({ kind: "edit" }, { ...implicit, targets: ["src/a/x.ts"] })).toBeNull();
    expect(autoClaim({ kind: "edit" }, { ...implicit, explicitScope: true })).toBeNull();
    expect(autoClaim({ kind: "shell" }, implicit)).toBeNull();
  });
});

describe("a Stop", () => {
  it.each(["wait", "duplicate", "handoff"])("after %s checkpoints blocked, never completed", (action) => {
    expect(stopCheckpoint({ intentId: "wki_1", action, touched: ["src/a.ts"] })).toEqual({
      status: "blocked",
      summary: `Stopped on ${action}.`,
    });
  });
  it("after proceed or parallel completes with the touched paths", () => {
    expect(stopCheckpoint({ intentId: "wki_1", action: "proceed", touched: ["src/a.ts"] })).toMatchObject({
      status: "completed",
      paths: ["src/a.ts"],
    });
    expect(stopCheckpoint({ intentId: "wki_1", action: "parallel", touched: [] })).toMatchObject({
      status: "completed",
      summary: "Finished without edits.",
    });
  });
  it("does nothing without an open intent", () => {
    expect(stopCheckpoint({ intentId: null, action: null, touched: [] })).toBeNull();
    expect(stopCheckpoint({ intentId: "wki_1", action: "completed", touched: [] })).toBeNull();
  });
});

describe("a missed publish", () => {
  const mark = publishMark("wki_1", new Date("2026-01-01T00:00:00Z"));
  it("the mark goes only once the publish bound a new intent", () => {
    expect(mark).toEqual({ at: "2026-01-01T00:00:00.000Z", intentBefore: "wki_1" });
    expect(publishBound(mark, "wki_2")).toBe(true);
    expect(publishBound(mark, "wki_1")).toBe(false); // the publish failed: the earlier intent is still on record
    expect(publishBound(mark, undefined)).toBe(false);
    expect(publishBound(publishMark(undefined), "wki_1")).toBe(true);
  });
  it.each([
    ["no mark: nothing", { intentId: "wki_1" }, null],
    ["a mark and an earlier intent: dropped, stale", { publishing: mark, intentId: "wki_1" }, true],
    ["a mark and no intent: nothing stale to name", { publishing: mark }, false],
  ] as const)("%s", (_name, state, stale) => {
    const r = missedPublish(state);
    if (stale === null) return expect(r).toBeNull();
    expect(r).toEqual({
      stale,
      change: {
        publishing: undefined,
        intentId: undefined,
        action: undefined,
        scope: [],
        explicitScope: false,
      },
    });
  });
  it("refuses the next edit with the reason and the protocol's intent command; shell tools and earlier rows as before", () => {
    const after = {
      ...clear(),
      intentId: null,
      action: null,
      scope: [],
      explicitScope: false,
      missedPublish: true,
    };
    expect(assess({ kind: "edit" }, after)).toEqual({
      permission: "deny",
      condition: "intentNotReady",
      reason: MISSED_PUBLISH,
    });
    expect(MISSED_PUBLISH).toContain(INTENT_COMMAND);
    expect(assess({ kind: "shell" }, after).permission).toBe("allow");
    expect(assess({ kind: "edit" }, { ...after, control: "paused" }).condition).toBe("stopped");
    expect(assess({ kind: "edit" }, { ...after, missedPublish: false }).reason).toMatch(
      /^no prompt or intent has been announced/,
    );
  });
});

describe("what the model reads when the adapter itself fails", () => {
  it("the wrapper's line survives sh -c '…' and echo \"…\" unchanged", () => {
    expect(FAIL_CLOSED_REASON).not.toMatch(/['"`$\\]/);
    expect(FAIL_CLOSED_REASON).toMatch(/^Cohent: .*refused/);
  });
  it("one line, no stack, no path of the machine", () => {
    const err = new Error(
      "runtime.json stays locked (/home/u/repo/.cohent/runtime.json.lock)\n    at lock (/home/u/repo/.cohent/cohent.mjs:1:2)",
    );
    const reason = scrubPaths(adapterFailed(err.message), "/home/u/repo", "/home/u");
    expect(reason).toBe(
      "the adapter failed (runtime.json stays locked (./.cohent/runtime.json.lock)), so this tool call is refused. Run node .cohent/cohent.mjs doctor.",
    );
    expect(scrubPaths("in /home/u/other and /home/u/repo/x", "/home/u/repo", "/home/u")).toBe(
      "in ~/other and ./x",
    );
    expect(deadlineReason(25_000)).toMatch(/^the guard did not reach a verdict within 25 s/);
  });
});
