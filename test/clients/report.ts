// The coverage report: client × version × scenario row → pass/fail, the
// known client gaps the guard cannot close, and the compatibility
// table. Printed at the end of `npm run test:clients` and written to
// test/artifacts/clients-report.md.
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CLIENTS } from "./clients.ts";
import { ARTIFACTS, REPORT_FILE, RESULTS_DIR } from "./paths.ts";
import { HOSTS } from "@cohent/protocol/hosts";
import { MORE_KINDS } from "./more-harness.ts";
import { ROWS, SCENARIOS, type RowId, type Scenario } from "./scenarios.ts";
import { moreScenariosFor } from "./scenarios-more.ts";
// Adds `shell-held` to both lists (scenarios.ts, scenarios-more.ts).
import "./scenarios-shell.ts";
// The spawn-free scenarios and issue 49's (the forged mark, disableAllHooks, a background write), for their rows.
import "./spawn-free/scenarios.ts";
import "./spawn-free/forged.ts";
import "./scenarios-silent.ts";
// Issue 50 item 2: the checkout's build decides, mid-session (Claude Code, OpenCode).
import "./scenarios-build.ts";
import "./scenarios-stale.ts";
import type { ClientResults } from "./suite.ts";

type Cell = "pass" | "FAIL" | "known failure" | "n/a" | "not run";

/** Codex and Claude Code (scenarios.ts); Copilot CLI, Gemini CLI and OpenCode (scenarios-more.ts), each in its own table. */
const FIRST_CLIENTS = CLIENTS.filter((c) => !MORE_KINDS.includes(c.kind));
const MORE_CLIENTS = CLIENTS.filter((c) => MORE_KINDS.includes(c.kind));

function scenariosOf(kind: string): Scenario[] {
  return MORE_KINDS.includes(kind) ? moreScenariosFor(kind as never) : SCENARIOS;
}

/** Rows that apply to a client kind: some scenario for it contributes to the row. */
function rowApplies(row: RowId, kind: string): boolean {
  if (row === "denyReachesModel") return true;
  return scenariosOf(kind).some((s) => (!s.only || s.only === kind) && s.rows.includes(row));
}

export function loadResults(): ClientResults[] {
  if (!existsSync(RESULTS_DIR)) return [];
  return readdirSync(RESULTS_DIR)
    .filter((f) => f.endsWith(".json"))
    .map((f) => JSON.parse(readFileSync(join(RESULTS_DIR, f), "utf8")) as ClientResults);
}

export function cell(results: ClientResults | undefined, row: RowId, kind: string): Cell {
  if (!rowApplies(row, kind)) return "n/a";
  if (!results) return "not run";
  const checks = results.scenarios.flatMap((s) => s.checks.filter((c) => c.row === row));
  // A pass on the retry whose first failure is not the machine's is a failure too.
  const errored = results.scenarios.some(
    (s) =>
      (s.error || (s.retry && !s.retry.machine)) &&
      scenariosOf(kind)
        .find((x) => x.id === s.scenario)
        ?.rows.includes(row),
  );
  if (checks.length === 0 && !errored) {
    // The scenario ran but checks this row on other versions only (a version's known gap): n/a.
    const ran = results.scenarios.some((s) =>
      scenariosOf(kind)
        .find((x) => x.id === s.scenario)
        ?.rows.includes(row),
    );
    return ran ? "n/a" : "not run";
  }
  if (errored || checks.some((c) => !c.ok && !c.known)) return "FAIL";
  return checks.every((c) => c.ok) ? "pass" : "known failure";
}

export const GAPS: { client: string; gap: string; evidence: string; adapter: string }[] = [
  {
    client: "Codex 0.169.0 and 0.171.0",
    gap: "`write_stdin` into a running terminal fires no PreToolUse: input typed into a terminal opened before a pause or cancel still runs.",
    evidence:
      'Scenario `write-stdin-gap`: `exec_command {cmd:"bash", tty:true}` before the pause, `write_stdin` after it writes a file; a new shell command in the same run is refused ("paused").',
    adapter:
      "`write_stdin` is in the opaque set, so it is held to the kill switch whenever a client announces it; today Codex does not. Every new `exec_command` and edit is refused; the open terminal is not. Nothing in the Bash payload says a command opens an interactive terminal, so the adapter cannot refuse those up front.",
  },
  {
    client: "Codex (all)",
    gap: "Project hooks run only when the project is trusted and each hook's hash is recorded in `$CODEX_HOME/config.toml`; both gates are silent in `codex exec`. Editing a hook after trust makes Codex skip it silently.",
    evidence:
      'Scenario `modified-hooks`: after the PreToolUse timeout changes, an edit with no intent is written (row "Known gap").',
    adapter:
      "`node .cohent/cohent.mjs doctor` reports project trust and each hook as trusted / modified / untrusted, and warns when hooks.json is newer than the trust store; the backend's guard status shows a session that stopped calling in.",
  },
  {
    client: "Codex (all)",
    gap: "Under the default `workspace-write` sandbox the agent's shell has no network, loopback included.",
    evidence:
      "Scenario `intent-scope`: the agent's own `fetch` fails (NET-FAIL), yet `intent` and `scope` succeed.",
    adapter:
      "Relay: the PreToolUse hook (outside the sandbox) performs `intent`/`scope`/`checkpoint`/`context`/`commit` (the commit itself too: Git runs in the hook) and leaves the answer in `.cohent/runtime.json`; the sandboxed command prints it.",
  },
  {
    client: "Codex (all)",
    gap: 'MCP tools are deferred behind `tool_search`: a direct `mcp__<server>__<tool>` call is refused ("unsupported call"); the model must first emit a `tool_search_call`, then call `{type:"function_call", namespace:"mcp__<server>", name:"<tool>"}`. Under `codex exec` (approval policy never) an MCP call is refused unless the server sets `default_tools_approval_mode = "approve"`.',
    evidence:
      "Scenario `mcp-kill-switch` does exactly that; PreToolUse fires for the MCP call and the pause blocks it.",
    adapter:
      "Every `mcp__*` tool is opaque: held to the kill switch, reachability and configuration rows only (an MCP write is not scope-checked).",
  },
  {
    client: "Codex (all)",
    gap: "The shell tool runs a login shell that resets PATH; a `node` outside the system PATH (nvm) is not found by the agent's commands.",
    evidence: "docs/clients.md.",
    adapter: "`doctor` checks that `node` resolves in a login shell.",
  },
  {
    client: "Codex (history)",
    gap: "`apply_patch` PreToolUse hooks regressed more than once (openai/codex #26729, #27833).",
    evidence: "Scenario `apply-patch` runs the tool call and the heredoc on every pinned version.",
    adapter:
      "Parses targets from the patch (Add, Update, Delete, Move to), for the tool and for a heredoc sent through the shell.",
  },
  {
    client: "Claude Code",
    gap: "Exit code 2 is ignored for some sub-agent tool calls (anthropics/claude-code #40580).",
    evidence: "Public tracker; sub-agents are not scripted here.",
    adapter: "Every deny is the JSON `hookSpecificOutput` form with a non-empty reason, never exit 2.",
  },
  {
    client: "Both",
    gap: "Both clients fail open on a deny without a reason, `ask`, exit 1, non-JSON stdout, or exit 2 with empty stderr.",
    evidence: "docs/clients.md; every blocked step here asserts the reason reached the model.",
    adapter:
      "A deny always carries a reason; an internal adapter failure on PreToolUse is itself a deny with its reason.",
  },
  {
    client: "Copilot CLI 1.0.85",
    gap: "A sub-agent's calls (`task`) carry the sub-agent's own `sessionId` and nothing that names the parent (1.0.102 adds `parentAgentId`).",
    evidence:
      "Scenario `subagent`: the sub-agent's edit inside the parent's scope is refused \"no structured intent\", and so is a shell write it names.",
    adapter:
      "A call of an unknown session has no intent: its edits are refused (closed), so a 1.0.85 sub-agent cannot edit; 1.0.102's are held to the parent's scope.",
  },
  {
    client: "Every client (by design)",
    gap: "A shell command's writes that it does not name (a script, a path built at run time) cannot be refused before the call.",
    evidence:
      "Scenario `shell-held`: the script's write lands; the check after the call catches it, the model is told, the peer noticed, and `restore` brings the bytes back.",
    adapter:
      "Named writes are held like an edit's targets (intent, scope, peers); the rest is caught after the call under the peers' claims and the guard's files. Out of reach: a process still writing after the call ended, and a network service.",
  },
];

/** The client's name in the tables: the protocol's, but Codex CLI as the tables have always said. */
function clientName(kind: string): string {
  return kind === "codex" ? "Codex CLI" : (HOSTS[kind as keyof typeof HOSTS] ?? kind);
}

function label(kind: string, version: string): string {
  return `${kind === "codex" ? "Codex" : clientName(kind)} ${version}`;
}

/** One table of scenario rows over some clients: the rows that apply to at least one of them. */
function rowTable(cols: typeof CLIENTS, byLabel: Map<string, ClientResults>): string[] {
  const lines: string[] = [];
  lines.push(`| Scenario | ${cols.map((c) => label(c.kind, c.version)).join(" | ")} |`);
  lines.push(`|---|${cols.map(() => "---").join("|")}|`);
  for (const row of Object.keys(ROWS) as RowId[]) {
    if (!cols.some((c) => rowApplies(row, c.kind))) continue;
    // A "Known gap" row passes when the gap reproduces exactly as documented.
    const show = (x: Cell) =>
      ROWS[row].startsWith("Known gap")
        ? (({ pass: "reproduced", FAIL: "FAIL (behaviour changed)" } as Record<string, string>)[x] ?? x)
        : x;
    lines.push(
      `| ${ROWS[row]} | ${cols.map((c) => show(cell(byLabel.get(c.label), row, c.kind))).join(" | ")} |`,
    );
  }
  lines.push("");
  return lines;
}

export function renderReport(all: ClientResults[] = loadResults()): string {
  const byLabel = new Map(all.map((r) => [r.client, r]));
  const lines: string[] = [];
  lines.push("# Real-client conformance report", "");
  lines.push(
    `Generated ${new Date().toISOString()} by \`npm run test:clients\` (real clients, real backend on loopback, scripted model).`,
    "",
  );
  lines.push(...rowTable(FIRST_CLIENTS, byLabel));
  lines.push("Copilot CLI, Gemini CLI and OpenCode (scenarios-more.ts, through init's wiring):", "");
  lines.push(...rowTable(MORE_CLIENTS, byLabel));
  const timing = CLIENTS.map((c) => byLabel.get(c.label))
    .filter((r): r is ClientResults => !!r)
    .map(
      (r) =>
        `${r.client}: ${r.scenarios.length} scenarios, ${(r.scenarios.reduce((a, s) => a + s.ms, 0) / 1000).toFixed(0)} s`,
    );
  if (timing.length) lines.push(`Time per client: ${timing.join("; ")}.`, "");

  const failures = all.flatMap((r) =>
    r.scenarios.flatMap((s) => [
      ...(s.error ? [`- **${r.client}** \`${s.scenario}\`: error: ${s.error.split("\n")[0]}`] : []),
      ...s.checks
        .filter((c) => !c.ok)
        .map(
          (c) =>
            `- **${r.client}** \`${s.scenario}\` [${ROWS[c.row]}] ${c.known ? `known failure (${c.known}): ` : ""}${c.name}: ${c.detail}`,
        ),
    ]),
  );
  lines.push("## Failures", "", ...(failures.length ? failures : ["None."]), "");

  // Every retried scenario, with its first failure's cause and whether that cause is the machine's.
  const retries = all.flatMap((r) =>
    r.scenarios
      .filter((s) => s.retry)
      .map(
        (s) =>
          `- **${r.client}** \`${s.scenario}\`: retry ${s.retry!.passed ? "passed" : "failed"}; first failure ${s.retry!.machine ? `the machine's (${s.retry!.machine}): counts as a pass` : "not the machine's: FAIL"}: ${s.retry!.firstError.split("\n")[0]}`,
      ),
  );
  lines.push("## Retries", "", ...(retries.length ? retries : ["None."]), "");

  lines.push("## Known client gaps the guard cannot close", "");
  lines.push("| Client | Gap | Evidence | What the adapter does |", "|---|---|---|---|");
  for (const g of GAPS) lines.push(`| ${g.client} | ${g.gap} | ${g.evidence} | ${g.adapter} |`);
  lines.push("");
  lines.push("## Compatibility table (docs/clients.md)", "", ...compatibilityTable(all), "");
  return lines.join("\n");
}

const EDIT_ROWS: Partial<Record<string, RowId[]>> = {
  codex: ["applyPatchTool", "applyPatchHeredoc"],
  claude: ["claudeEditTool"],
  copilot: ["copilotWiringNative", "copilotWiringClaude", "copilotWiringBoth"],
};
const EDIT_TOOLS: Record<string, string> = {
  codex: "apply_patch (tool and shell heredoc)",
  claude: "Write, Edit",
  copilot: "apply_patch (its own wiring, the Claude wiring, both)",
  gemini: "write_file",
  opencode: "write",
};
const NOTES: Record<string, string> = {
  codex:
    "`doctor` reports hook trust; a hook edited after trust is skipped silently; `write_stdin` into an already-open terminal is not guarded",
  claude: "project hooks from `.claude/settings.json`, no trust step",
  copilot:
    "repository hooks only in a trusted folder (untrusted: none run, silently); runs `.claude/settings.json`'s hooks too; no context injection",
  gemini: "project hooks only in a trusted folder (`--skip-trust` runs unguarded, silently)",
  opencode: "`.opencode/plugin/cohent.js`, no trust step; the plugin keeps its own deadline",
};

/** Enforcement level per client and version, from the results. */
export function compatibilityTable(all: ClientResults[]): string[] {
  const byLabel = new Map(all.map((r) => [r.client, r]));
  const out = [
    "| Client | Version | Enforcement (measured) | Edit guard | Pause, cancel, backend down (edit and shell) | Notes |",
    "|---|---|---|---|---|---|",
  ];
  for (const c of CLIENTS) {
    // A version between the pinned ones runs a few scenarios only: not a compatibility row.
    if (c.between) continue;
    const r = byLabel.get(c.label);
    const rows = (Object.keys(ROWS) as RowId[]).filter((row) => rowApplies(row, c.kind));
    // A row that applies to the client but checks other versions only (one version's known gap) is n/a here, not short.
    const cells = rows.map((row) => cell(r, row, c.kind)).filter((x) => x !== "n/a");
    const passed = cells.filter((x) => x === "pass").length;
    const full = c.kind === "codex" ? "Guarded once the project and hooks are trusted" : "Guarded";
    const level = !r
      ? "not measured"
      : cells.every((x) => x === "pass")
        ? full
        : `Partial (${passed}/${cells.length} rows pass)`;
    const editRows: RowId[] = ["editBeforeIntent", "outOfScope", "peerOverlap", ...(EDIT_ROWS[c.kind] ?? [])];
    const editTools = EDIT_TOOLS[c.kind] ?? "?";
    const edit = editRows.map((row) => cell(r, row, c.kind)).every((x) => x === "pass")
      ? `yes: ${editTools}`
      : r
        ? "gaps"
        : "?";
    const kill = ["paused", "cancelled", "resumed", "backendDown"]
      .map((row) => cell(r, row as RowId, c.kind))
      .every((x) => x === "pass")
      ? "yes"
      : r
        ? "gaps"
        : "?";
    out.push(`| ${clientName(c.kind)} | ${c.version} | ${level} | ${edit} | ${kill} | ${NOTES[c.kind]} |`);
  }
  return out;
}

export function writeReport(): string {
  const text = renderReport();
  mkdirSync(ARTIFACTS, { recursive: true });
  writeFileSync(REPORT_FILE, text + "\n");
  return text;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1])
  process.stdout.write(writeReport() + "\n");
