import { describe, expect, it } from "vitest";
import { BOUNDS, GuardRequest } from "@cohent/protocol";
import { guardFilesBody } from "../../client/src/service/client.js";

/**
 * The body of a guard-files report (issue 49 item 1): whatever path or
 * phrase the adapter found, the body is one the service takes, because a
 * refused report would leave the session that changed the guard's files
 * running. Each row: what the adapter passes, and what the file becomes.
 */

const body = (files: { path: string; change?: string | null }[], extra: { command?: string | null } = {}) =>
  guardFilesBody({ tool: "Bash", command: extra.command ?? null, files, undone: true }, "wki_abc");

describe("guardFilesBody", () => {
  const rows: [
    what: string,
    file: { path: string; change?: string | null },
    sent: Record<string, unknown>,
  ][] = [
    [
      "a checkout file and its change",
      { path: ".claude/settings.local.json", change: "disableAllHooks set" },
      { path: ".claude/settings.local.json", change: "disableAllHooks set" },
    ],
    [
      "a user file, no change known",
      { path: "/home/ann/.claude/settings.json" },
      { path: "/home/ann/.claude/settings.json" },
    ],
    [
      "a home folder with a space",
      { path: "/Users/Ann Lee/.copilot/hooks/" },
      { path: "/Users/Ann Lee/.copilot/hooks/" },
    ],
    ["a line break and markup in the path", { path: "a\n<b>.json" }, { path: "a??b?.json" }],
    ["./ and .. segments", { path: "./x/../.claude/settings.json" }, { path: "?/x/.claude/settings.json" }],
    [
      "a change with markup and quotes",
      { path: "a.json", change: '<script>"disableAllHooks": true' },
      { path: "a.json", change: "script disableAllHooks : true" },
    ],
    ["a change with nothing left", { path: "a.json", change: "<>{}" }, { path: "a.json" }],
    ["an empty path", { path: "" }, { path: "?" }],
  ];
  for (const [what, file, sent] of rows)
    it(what, () => {
      const b = body([file])!;
      expect(b.files).toEqual([sent]);
      expect(GuardRequest.safeParse(b).success, JSON.stringify(b)).toBe(true);
    });

  it("a long path keeps its end; many files are cut to the bound; a long command is cut", () => {
    const long = `/home/${"x".repeat(BOUNDS.pathChars)}/.claude/settings.json`;
    const b = body(Array(BOUNDS.wiringChanges + 5).fill({ path: long }), { command: "y".repeat(5_000) })!;
    expect(b.files).toHaveLength(BOUNDS.wiringChanges);
    expect(b.files![0]!.path.endsWith("/.claude/settings.json")).toBe(true);
    expect(b.files![0]!.path.length).toBe(BOUNDS.pathChars);
    expect(b.command).toHaveLength(BOUNDS.caughtCommandChars);
    expect(GuardRequest.parse(b)).toMatchObject({ kind: "guard-files", undone: true, intentId: "wki_abc" });
  });

  it("no file, no report", () => {
    expect(body([])).toBeNull();
  });
});
