import { describe, expect, it } from "vitest";
import {
  HOST_IDS,
  HOSTS,
  hostHeader,
  parseHostHeader,
  type EnforcementLevel,
  type EnforcementWhy,
  type HostReport,
} from "@cohent/protocol";
import { enforcement, hostChange, type EnforcementFacts } from "../../backend/src/core/enforcement.js";

/** Guarded or advisory, and why: every combination that decides, as a table. */
const base: EnforcementFacts = {
  host: "claude",
  wiring: "fail-closed",
  guardSeen: true,
  modifiedFiles: null,
};
const cases: [string, Partial<EnforcementFacts>, EnforcementLevel, EnforcementWhy, RegExp][] = [
  [
    "Claude Code, its own wiring, a guarded call seen",
    {},
    "guarded",
    "fail-closed",
    /^Claude Code's own wiring/,
  ],
  [
    "Claude Code through the guard in Cohent's MCP server (mcp_tool, onFailure honoured)",
    { wiring: "mcp-tool", hostVersion: "2.1.332" },
    "guarded",
    "mcp-tool",
    /^Claude Code 2\.1\.332 calls the guard in Cohent's MCP server .*no process per tool call/,
  ],
  [
    "the mcp_tool wiring with no guarded call yet",
    { wiring: "mcp-tool", guardSeen: false },
    "advisory",
    "no-guard-call",
    /No guarded tool call seen yet/,
  ],
  ["Codex, its own wiring", { host: "codex" }, "guarded", "fail-closed", /^Codex's own wiring/],
  ["Copilot CLI, its own wiring", { host: "copilot" }, "guarded", "fail-closed", /^Copilot CLI's/],
  ["Gemini CLI, its own wiring", { host: "gemini" }, "guarded", "fail-closed", /^Gemini CLI's/],
  ["OpenCode, its plugin", { host: "opencode" }, "guarded", "fail-closed", /^OpenCode's/],
  [
    "Cursor, its own wiring: not proven in the binary",
    { host: "cursor" },
    "guarded",
    "fail-closed",
    /not proven in the binary/,
  ],
  [
    "Copilot CLI through Claude Code's settings (measured to fail closed)",
    { host: "copilot", wiring: "foreign" },
    "guarded",
    "foreign-measured",
    /Copilot CLI runs Claude Code's hooks .*measured/,
  ],
  [
    "Cursor through Claude Code's settings (no failClosed there)",
    { host: "cursor", wiring: "foreign" },
    "advisory",
    "foreign-unproven",
    /without failClosed/,
  ],
  [
    "Gemini CLI through another client's configuration",
    { host: "gemini", wiring: "foreign" },
    "advisory",
    "foreign-unproven",
    /^Gemini CLI runs another client's hook configuration/,
  ],
  [
    "a foreign wiring with no guarded call yet",
    { host: "copilot", wiring: "foreign", guardSeen: false },
    "advisory",
    "no-guard-call",
    /No guarded tool call seen yet/,
  ],
  [
    "its hook published but never guarded",
    { guardSeen: false },
    "advisory",
    "no-guard-call",
    /No guarded tool call seen yet: Claude Code's hook/,
  ],
  [
    "the hook says its wiring is modified",
    { wiring: "modified" },
    "advisory",
    "wiring-modified",
    /^Guard wiring modified/,
  ],
  [
    "its checkout's wiring report is open",
    { modifiedFiles: [".claude/settings.json"] },
    "advisory",
    "wiring-modified",
    /\(\.claude\/settings\.json\)/,
  ],
  [
    "a modified checkout outranks everything, even with no host reported",
    { host: null, wiring: null, modifiedFiles: ["a", "b", "c", "d"] },
    "advisory",
    "wiring-modified",
    /a, b, c and 1 more/,
  ],
  [
    "no host reported: a plain HTTP or MCP integration, an older adapter",
    { host: null, wiring: null, guardSeen: false },
    "advisory",
    "not-reported",
    /custom integration over HTTP or MCP/,
  ],
  [
    "no host reported, even with calls",
    { host: null, wiring: null },
    "advisory",
    "not-reported",
    /Coordinated, not enforced/,
  ],
  [
    "Copilot CLI at a version reported to ignore a deny",
    { host: "copilot", hostVersion: "1.0.70" },
    "advisory",
    "host-version",
    /1\.0\.65 to 1\.0\.73 were reported to ignore a hook's deny/,
  ],
  [
    "…at the range's first version",
    { host: "copilot", hostVersion: "1.0.65" },
    "advisory",
    "host-version",
    /upgrade to 1\.0\.85/,
  ],
  [
    "…at its last, through Claude's settings",
    { host: "copilot", hostVersion: "v1.0.73-beta", wiring: "foreign" },
    "advisory",
    "host-version",
    /reported/,
  ],
  [
    "Copilot CLI just before the range",
    { host: "copilot", hostVersion: "1.0.64" },
    "guarded",
    "fail-closed",
    /fails closed/,
  ],
  [
    "Copilot CLI after it",
    { host: "copilot", hostVersion: "1.0.74" },
    "guarded",
    "fail-closed",
    /fails closed/,
  ],
  [
    "Copilot CLI measured (1.0.102 is past 1.0.73 as a number)",
    { host: "copilot", hostVersion: "1.0.102" },
    "guarded",
    "fail-closed",
    /fails closed/,
  ],
  [
    "a version that is not a number",
    { host: "copilot", hostVersion: "nightly" },
    "guarded",
    "fail-closed",
    /fails closed/,
  ],
  [
    "another host's version in that range",
    { host: "gemini", hostVersion: "1.0.70" },
    "guarded",
    "fail-closed",
    /fails closed/,
  ],
  ["the hook could not tell its host", { host: "unknown" }, "advisory", "unknown-host", /could not tell/],
  [
    "a host name Cohent does not know (stored by hand)",
    { host: "vscode" },
    "advisory",
    "unknown-host",
    /could not tell/,
  ],
  ["a known host with no wiring (stored by hand)", { wiring: null }, "advisory", "not-reported", /no wiring/],
];

describe("enforcement: guarded or advisory, with the reason", () => {
  it.each(cases)("%s", (_name, facts, level, why, reason) => {
    const out = enforcement({ ...base, ...facts });
    expect([out.level, out.why]).toEqual([level, why]);
    expect(out.reason).toMatch(reason);
  });

  it("names every host by its display name", () => {
    for (const host of HOST_IDS) expect(enforcement({ ...base, host }).reason).toContain(HOSTS[host]);
  });
});

describe("hostChange: the hot path writes only what changed", () => {
  const stored = { host: "claude", hostVersion: "2.1.332", wiring: "fail-closed", guardSeenAt: new Date(0) };
  const report: HostReport = { host: "claude", hostVersion: "2.1.332", wiring: "fail-closed" };
  it.each([
    ["the same report, a guard call already seen", stored, report, true, null],
    ["the same report on a POST", stored, report, false, null],
    ["no report (CLI, MCP, an older adapter)", stored, null, true, null],
    ["no report, nothing stored", { ...stored, host: null, guardSeenAt: null }, null, true, null],
    [
      "the first report, on a publish",
      { host: null, hostVersion: null, wiring: null, guardSeenAt: null },
      report,
      false,
      { ...report, guardSeen: false },
    ],
    [
      "the first guarded call",
      { ...stored, guardSeenAt: null },
      report,
      true,
      { ...report, guardSeen: true },
    ],
    [
      "the same report on a POST before any guarded call",
      { ...stored, guardSeenAt: null },
      report,
      false,
      null,
    ],
    [
      "a new version",
      stored,
      { ...report, hostVersion: "2.1.400" },
      true,
      { ...report, hostVersion: "2.1.400", guardSeen: false },
    ],
    [
      "a version dropped",
      stored,
      { ...report, hostVersion: null },
      false,
      { ...report, hostVersion: null, guardSeen: false },
    ],
    [
      "the wiring turned modified",
      stored,
      { ...report, wiring: "modified" },
      true,
      { ...report, wiring: "modified", guardSeen: false },
    ],
  ] as const)("%s", (_name, s, r, guardCall, expected) => {
    expect(hostChange(s, r, guardCall)).toEqual(expected);
  });
});

describe("x-cohent-host", () => {
  it.each([
    [
      { host: "claude", hostVersion: "2.1.332", wiring: "fail-closed" },
      "host=claude; version=2.1.332; wiring=fail-closed",
    ],
    [{ host: "copilot", hostVersion: null, wiring: "foreign" }, "host=copilot; wiring=foreign"],
    // A service older than mcp-tool reads fail-closed and ignores via.
    [
      { host: "claude", hostVersion: "2.1.332", wiring: "mcp-tool" },
      "host=claude; version=2.1.332; wiring=fail-closed; via=mcp-tool",
    ],
    [{ host: "unknown", hostVersion: "", wiring: "modified" }, "host=unknown; wiring=modified"],
    [
      { host: "cursor", hostVersion: "1.7.2 (universal)", wiring: "fail-closed" },
      "host=cursor; version=1.7.2_universal; wiring=fail-closed",
    ],
    [
      { host: "gemini", hostVersion: "v".repeat(100), wiring: "fail-closed" },
      `host=gemini; version=${"v".repeat(64)}; wiring=fail-closed`,
    ],
  ] as const)("builds %j and reads it back", (report, header) => {
    expect(hostHeader(report)).toBe(header);
    const back = parseHostHeader(header);
    expect(back).toEqual({
      report: { ...report, hostVersion: header.match(/version=([^;]+)/)?.[1] ?? null },
    });
  });

  it("reads via=mcp-tool only on an intact wiring", () => {
    expect(parseHostHeader("host=claude; wiring=modified; via=mcp-tool")).toEqual({
      report: { host: "claude", hostVersion: null, wiring: "modified" },
    });
    expect(parseHostHeader("host=claude; wiring=fail-closed; via=other")).toEqual({
      report: { host: "claude", hostVersion: null, wiring: "fail-closed" },
    });
  });

  it("ignores keys it does not know and spaces around pairs", () => {
    expect(parseHostHeader("  host=opencode ;wiring=fail-closed; plugin=2 ")).toEqual({
      report: { host: "opencode", hostVersion: null, wiring: "fail-closed" },
    });
  });

  it.each([
    ["", /key=value/],
    ["claude", /key=value/],
    ["host=claude", /wiring must be one of fail-closed, foreign, modified/],
    ["wiring=fail-closed", /host must be one of codex, claude, copilot, gemini, cursor, opencode, unknown/],
    ["host=vscode; wiring=fail-closed", /host must be one of/],
    ["host=Claude; wiring=fail-closed", /host must be one of/],
    ["host=claude; wiring=open", /wiring must be one of/],
    ["host=claude; host=codex; wiring=fail-closed", /host given twice/],
    ["host=claude; version=2.1 beta; wiring=fail-closed", /key=value/],
    ["host=claude; version=2.1/3; wiring=fail-closed", /version takes letters/],
    [`host=claude; version=${"1".repeat(65)}; wiring=fail-closed`, /at most 64/],
    [`host=claude; wiring=fail-closed; x=${"y".repeat(300)}`, /at most 256/],
    ["host=__proto__; wiring=fail-closed", /host must be one of/],
  ])("refuses %j", (raw, error) => {
    const out = parseHostHeader(raw);
    expect("error" in out && out.error).toMatch(error);
  });
});
