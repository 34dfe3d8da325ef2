import { describe, expect, it } from "vitest";
import { GUIDANCE, INTENT_COMMAND } from "@cohent/protocol/actions";
import { assess, autoClaim, stopCheckpoint, type Snapshot, type ToolKind } from "../../adapter/src/guard.js";

/**
 * The pure guard against the specification's PreToolUse table
 * (coordination-protocol, "The PreToolUse hook covers edit tools and shell
 * tools"), row by row: for each condition, a snapshot in which it alone
 * holds, and the decision for an edit and for a shell tool.
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

/** A snapshot where nothing holds: an active, reachable, configured session proceeding inside its scope. */
const clear = (): Snapshot => ({
  control: "active",
  controlReason: null,
  contactError: null,
  configError: null,
  intentId: "wki_1",
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
  details: { conflicts: [{ intentId: "wki_9", person: "bob", client: "Codex", model: "gpt-5.5", objective: "Refactor", paths: ["src/a/x.ts"], theirPaths: ["src/a"] }] },
};

/** How each of the spec's conditions comes to hold in a snapshot. */
const HOLDING: Record<string, (s: Snapshot) => Partial<Snapshot>> = {
  "Paused or cancelled from the control center": () => ({ control: "paused", controlReason: "hold on" }),
  "Paired but the control plane is unreachable": () => ({ contactError: { code: "CONTROL_PLANE_UNREACHABLE", message: "The Cohent service at http://x cannot be reached." } }),
  "Configuration unusable": () => ({ configError: "No .cohent/project.json" }),
  "No prompt or semantic intent announced": () => ({ intentId: null, action: null }),
  "Scope overlaps an active peer scope": () => ({ claimError: conflict }),
  "The write targets a path outside the declared scope": () => ({ targets: ["docs/notes.md"] }),
};

const rows = SPEC_TABLE.trim()
  .split("\n")
  .slice(1)
  .map((line) => line.split("\t") as [string, string, string]);

describe("the guard, against the spec's table", () => {
  it("covers every row of the spec", () => {
    expect(rows.map((r) => r[0]).sort()).toEqual(Object.keys(HOLDING).sort());
  });
  it("allows both kinds when no condition holds", () => {
    expect(assess({ kind: "edit" }, clear()).permission).toBe("allow");
    expect(assess({ kind: "shell" }, clear()).permission).toBe("allow");
  });
  for (const [condition, edit, shell] of rows) {
    for (const [kind, expected] of [["edit", edit], ["shell", shell]] as [ToolKind, string][]) {
      it(`${condition}: ${kind} tools ${expected.toLowerCase()}`, () => {
        const s = { ...clear(), ...HOLDING[condition]!(clear()) };
        const v = assess({ kind }, s);
        expect(v.permission).toBe(expected === "Blocked" ? "deny" : "allow");
        if (v.permission === "deny") expect(v.reason.trim().length).toBeGreaterThan(10);
      });
    }
  }
  it("the first holding row decides, in the spec's order", () => {
    const s = { ...clear(), configError: "broken", targets: ["docs/x.md"], contactError: { code: "CONTROL_PLANE_UNREACHABLE", message: "down" } };
    expect(assess({ kind: "edit" }, s)).toMatchObject({ permission: "deny", condition: "unreachable", reason: "down" });
    expect(assess({ kind: "edit" }, { ...s, control: "cancelled" })).toMatchObject({ condition: "stopped" });
  });
});

describe("refusal texts", () => {
  it("name the stop, the peer, the scope and the next command", () => {
    expect(assess({ kind: "shell" }, { ...clear(), control: "paused", controlReason: "hold on" }).reason).toMatch(/paused from the Cohent Control Room \(hold on\)/);
    expect(assess({ kind: "edit" }, { ...clear(), claimError: conflict }).reason).toMatch(/src\/a\/x\.ts overlaps the scope of bob \(Codex gpt-5\.5\): src\/a, working on "Refactor" \(wki_9\)/);
    expect(assess({ kind: "edit" }, { ...clear(), targets: ["docs/n.md"] }).reason).toMatch(/docs\/n\.md lies outside your declared scope \(src\/a\).*scope src\/a docs\/n\.md$/);
    expect(assess({ kind: "edit" }, { ...clear(), intentId: null }).reason).toContain(INTENT_COMMAND);
    for (const action of ["plan", "wait", "duplicate", "handoff", "completed", "abandoned"] as const) {
      expect(assess({ kind: "edit" }, { ...clear(), action }).reason).toContain(GUIDANCE[action]);
    }
    expect(assess({ kind: "edit" }, { ...clear(), action: "parallel" }).permission).toBe("allow");
  });
  it("an edit whose targets cannot be read needs a declared scope", () => {
    expect(assess({ kind: "edit" }, { ...clear(), targets: null, explicitScope: false }).reason).toMatch(/cannot read this edit's targets/);
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
    expect(stopCheckpoint({ intentId: "wki_1", action, touched: ["src/a.ts"] })).toEqual({ status: "blocked", summary: `Stopped on ${action}.` });
  });
  it("after proceed or parallel completes with the touched paths", () => {
    expect(stopCheckpoint({ intentId: "wki_1", action: "proceed", touched: ["src/a.ts"] })).toMatchObject({ status: "completed", paths: ["src/a.ts"] });
    expect(stopCheckpoint({ intentId: "wki_1", action: "parallel", touched: [] })).toMatchObject({ status: "completed", summary: "Finished without edits." });
  });
  it("does nothing without an open intent", () => {
    expect(stopCheckpoint({ intentId: null, action: null, touched: [] })).toBeNull();
    expect(stopCheckpoint({ intentId: "wki_1", action: "completed", touched: [] })).toBeNull();
  });
});
