import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseExemptCommand, PREFIXES } from "../../adapter/src/guard/exemption.js";

/**
 * Every COHENT_* name the adapter knows, and whether it keeps the exemption
 * as a prefix of the adapter's own command (which skips the kill switch).
 * The scan below fails when the adapter's sources name a COHENT_* variable
 * this table does not classify: a new one is refused until someone decides.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** What the adapter bundle is built from: its sources, the client package's, the MCP file's, the protocol's, and the build (it writes the entries). */
const SOURCES = ["adapter/src", "adapter/build.mjs", "client/src", "mcp-server/src", "protocol/src"];

const SELF = "codex-self-1";
const ctx = { cwd: "/repo", repoRoot: "/repo", sessionId: SELF };

type Case = { value: string; exempt: boolean };
/** name → the values tried and the answer each must get. */
const TABLE: Record<string, { changes: string; cases: Case[] }> = {
  COHENT_AGENT_TOKEN: {
    changes: "credential",
    cases: [{ value: "coh_abcdefghijklmnopqrstuv", exempt: false }],
  },
  COHENT_BUNDLE_HEAD: { changes: "code (build constant)", cases: [{ value: "x", exempt: false }] },
  COHENT_BUNDLE_LENGTH: { changes: "code (build constant)", cases: [{ value: "1", exempt: false }] },
  COHENT_BUNDLE_HASH: { changes: "code (build constant)", cases: [{ value: "abc", exempt: false }] },
  COHENT_CLIENT: { changes: "identity", cases: [{ value: "Claude-Code", exempt: false }] },
  COHENT_CODE_CACHE: {
    changes: "nothing: the compile cache of the same bundle",
    cases: [
      { value: "0", exempt: true },
      { value: "1", exempt: true },
    ],
  },
  COHENT_HOOK_DEADLINE_MS: {
    changes: "nothing: a hook run's deadline",
    cases: [
      { value: "25000", exempt: true },
      { value: "999999", exempt: true },
      { value: "1000000", exempt: false },
      { value: "1e9", exempt: false },
      { value: "", exempt: false },
    ],
  },
  COHENT_PLUGIN_TIMEOUT_MS: {
    changes: "nothing: the OpenCode plugin's own deadline",
    cases: [
      { value: "25000", exempt: true },
      { value: "1000000", exempt: false },
    ],
  },
  COHENT_POLL_EVERY_MS: {
    changes: "nothing: the hook guard's poll interval",
    cases: [
      { value: "0", exempt: true },
      { value: "-1", exempt: false },
    ],
  },
  COHENT_ROOT: { changes: "target", cases: [{ value: "/repo", exempt: false }] },
  COHENT_SCHEMAS: { changes: "code (build constant)", cases: [{ value: "x", exempt: false }] },
  COHENT_SESSION: {
    changes: "identity, unless it names the calling session",
    cases: [
      { value: SELF, exempt: true },
      { value: "claude-peer-2", exempt: false },
      { value: "", exempt: false },
    ],
  },
  COHENT_TIMEOUT_MS: {
    changes: "nothing: the command's HTTP timeout",
    cases: [
      { value: "8000", exempt: true },
      { value: "86400000", exempt: false },
    ],
  },
  COHENT_TRANSPORT: { changes: "code path", cases: [{ value: "node", exempt: false }] },
  COHENT_USAGE_LOG: {
    changes: "target (a file written)",
    cases: [
      { value: "/tmp/x.jsonl", exempt: false },
      { value: "1", exempt: false },
    ],
  },
  COHENT_VERSION: { changes: "identity (build constant)", cases: [{ value: "9.9.9", exempt: false }] },
  COHENT_WARM: {
    changes: "nothing: whether a hook call may be answered warm",
    cases: [
      { value: "0", exempt: true },
      { value: "1", exempt: true },
      { value: "2", exempt: false },
    ],
  },
  COHENT_WARM_IDLE_MS: {
    changes: "nothing: the warm guard's idle time",
    cases: [
      { value: "1000", exempt: true },
      { value: "forever", exempt: false },
    ],
  },
};

function sourceFiles(rel: string): string[] {
  const abs = path.join(ROOT, rel);
  if (statSync(abs).isFile()) return [abs];
  return readdirSync(abs, { recursive: true, encoding: "utf8" })
    .map((f) => path.join(abs, f))
    .filter((f) => /\.(ts|mts|cts|js|mjs|cjs)$/.test(f) && statSync(f).isFile());
}

describe("COHENT_* prefixes on the adapter's own command", () => {
  it("the table classifies every COHENT_* name the adapter's sources name, and no other", () => {
    const named = new Set<string>();
    for (const file of SOURCES.flatMap(sourceFiles))
      for (const m of readFileSync(file, "utf8").matchAll(/\bCOHENT_[A-Z0-9_]*[A-Z0-9]\b/g)) named.add(m[0]);
    expect([...named].sort()).toEqual(Object.keys(TABLE).sort());
    // The implementation's table too: a name the test classifies is one the adapter decides on.
    expect(Object.keys(PREFIXES).sort()).toEqual(Object.keys(TABLE).sort());
  });

  const rows = Object.entries(TABLE).flatMap(([name, { changes, cases }]) =>
    cases.map((c) => ({ name, changes, ...c })),
  );
  it.each(rows)("$name=$value ($changes): exempt $exempt", ({ name, value, exempt }) => {
    const r = parseExemptCommand(`${name}=${value} node .cohent/cohent.mjs checkpoint blocked paused`, ctx);
    expect(r.exempt).toBe(exempt);
    if (!r.exempt) {
      // The refusal names the variable, so the deny can say which prefix lost the exemption.
      expect(r.prefix).toBe(name);
      expect(r.why).toContain(name);
    }
  });

  it("a name the adapter does not know is refused, and one refused name among inert ones refuses the command", () => {
    for (const command of [
      "COHENT_SERVER=http://evil node .cohent/cohent.mjs context",
      "COHENT_SERVICE=http://evil node .cohent/cohent.mjs context",
      "COHENT_TIMEOUT_MS=100 COHENT_ROOT=/elsewhere node .cohent/cohent.mjs context",
      "COHENT_ROOT=/elsewhere COHENT_TIMEOUT_MS=100 node .cohent/cohent.mjs context",
      `COHENT_SESSION=${SELF} COHENT_AGENT_TOKEN=coh_x node .cohent/cohent.mjs context`,
    ]) {
      const r = parseExemptCommand(command, ctx);
      expect(r, command).toMatchObject({ exempt: false, prefix: expect.stringMatching(/^COHENT_/) });
    }
    expect(
      parseExemptCommand(`COHENT_TIMEOUT_MS=100 COHENT_SESSION=${SELF} node .cohent/cohent.mjs context`, ctx),
    ).toMatchObject({ exempt: true, argv: ["context"] });
  });

  it("without the calling session's id, COHENT_SESSION is never inert", () => {
    expect(
      parseExemptCommand(`COHENT_SESSION=${SELF} node .cohent/cohent.mjs context`, {
        cwd: "/repo",
        repoRoot: "/repo",
      }).exempt,
    ).toBe(false);
  });

  it("a refused prefix on a command that is not the adapter's own names no prefix (nothing to exempt)", () => {
    const r = parseExemptCommand("COHENT_ROOT=/x node other.mjs", ctx);
    expect(r).toMatchObject({ exempt: false });
    expect(r).not.toHaveProperty("prefix");
  });
});
