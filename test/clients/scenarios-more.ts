// The adapter's scenarios in Copilot CLI, Gemini CLI and OpenCode (issue 24,
// "proven in the real binaries"): the wiring `cohent init` writes
// (.github/hooks/cohent.json and .claude/settings.json, .gemini/settings.json,
// .opencode/plugin/cohent.js), the real adapter, a real backend, scripted
// models. The steps are scenarios.ts's (`shell`, `write`, `patch`), said in
// each client's own tools (more-harness.ts). Lean by design: one client run
// walks a whole flow (no intent → intent → in scope → outside), so that the six
// versions stay within the CI's time. The file system decides blocked and
// allowed; every refusal must have reached the model.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HOSTS } from "@cohent/protocol/hosts";
import type { ClientKind } from "./clients.ts";
import { SUBAGENT_MARK } from "./fake-chat.ts";
import { OPENCODE_IN_PROCESS_MARK } from "../../adapter/src/installer/opencode-plugin.js";
import { blackHole, breakAdapter, restoreAdapter } from "./failures.ts";
import { agentIntents, control, fileExists, readRepoFile } from "./harness.ts";
import type { Step } from "./script.ts";
import {
  appRefusedOutsideScope,
  clip,
  DEADLINE_REFUSED,
  FAST_DEADLINE,
  intentCmd,
  INTENT_OK,
  noLeak,
  patch,
  peerHolds,
  PROMPT,
  publishedBySelf,
  QUEUE_CMD,
  queueCommandIn,
  scopeCmd,
  sh,
  WRAPPER_REFUSED,
  write,
  type Ctx,
  type RowId,
  type Scenario,
} from "./scenarios.ts";

const NO_INTENT = /no (structured intent|prompt or intent)/;

/**
 * What the model reads when the adapter itself fails (missing, throwing at load). Gemini's guard
 * runs behind the fail-closed wrapper and OpenCode's plugin refuses with the same line; Copilot
 * runs the hook bare (every non-zero exit refuses, measured) and says so in its own words.
 */
const FAILED: Record<string, RegExp> = {
  copilot: /Denied by preToolUse hook/,
  gemini: WRAPPER_REFUSED,
  opencode: WRAPPER_REFUSED,
};

/**
 * OpenCode runs the adapter in its own process (issue 44): failures.ts's hanging adapter (a
 * process whose every connect never completes) would there patch OpenCode's own sockets, and
 * its plugin never requires a cohent.cjs that does not say it serves it. The in-process hang:
 * a cohent.cjs that serves the plugin and never answers; the plugin's own deadline refuses.
 */
function hangInProcess(repo: string): void {
  breakAdapter(repo, "missing");
  writeFileSync(
    join(repo, ".cohent", "cohent.cjs"),
    `// ${OPENCODE_IN_PROCESS_MARK}: a test's adapter that never answers\nexports.hook = () => new Promise(() => {});\n`,
  );
}
/** What OpenCode's model reads then: the plugin's own deadline, here 6 s. */
const PLUGIN_DEADLINE = { COHENT_PLUGIN_TIMEOUT_MS: "6000" };
const PLUGIN_REFUSED = /the guard hook did not answer within/;

/** The intent the agent published, as the backend holds it: under this client's name, with the prompt, completed. */
async function intentRecorded(c: Ctx, touched: string): Promise<void> {
  const name = HOSTS[c.client.kind as keyof typeof HOSTS];
  // OpenCode hands its stop (session.idle) to an adapter process that outlives `opencode run`: its
  // checkpoint may land a moment after the run ends. And `opencode run PROMPT` gives the plugin the
  // prompt in double quotes (measured: chat.message's text part is "\"do it\"", fixture
  // opencode@*/chat.message.json), which the adapter records as it came.
  let mine: Awaited<ReturnType<typeof agentIntents>>[number] | undefined;
  for (let i = 0; i < 40; i++) {
    mine = (await agentIntents(c.ws)).find((x) => x.record?.objective === "Add the feature module");
    if (mine?.state === "completed" || c.client.kind !== "opencode") break;
    await new Promise((r) => setTimeout(r, 250));
  }
  c.check.expect(
    "intentRecorded",
    `backend: intent by ${name} with the agent's record and prompt`,
    !!mine && mine.client === name && mine.prompt === (c.client.kind === "opencode" ? `"${PROMPT}"` : PROMPT),
    `intent: ${clip(JSON.stringify(mine ?? null), 800)}`,
  );
  c.check.expect(
    "intentRecorded",
    `backend: the stop event completed it, touching ${touched}`,
    !!mine &&
      mine.state === "completed" &&
      mine.checkpoints.some((k) => k.status === "completed" && !!k.paths?.includes(touched)),
    `intent: ${clip(JSON.stringify(mine ?? null), 800)}`,
  );
}

/** The client's own edit tool on the existing src/app.ts (Gemini `replace`; OpenCode `read`, then `edit`). */
function editOutside(c: Ctx): Step[] {
  const file = join(c.ws.repo, "src", "app.ts");
  if (c.client.kind === "gemini")
    return [
      {
        id: "edit-out",
        action: {
          kind: "tool",
          name: "replace",
          args: {
            file_path: file,
            old_string: "app = 1",
            new_string: "app = 2",
            instruction: "bump the app",
          },
        },
      },
    ];
  if (c.client.kind === "opencode")
    return [
      { id: "read-out", action: { kind: "tool", name: "read", args: { filePath: file } } },
      {
        id: "edit-out",
        action: {
          kind: "tool",
          name: "edit",
          args: { filePath: file, oldString: "app = 1", newString: "app = 2" },
        },
      },
    ];
  return [];
}

/** The client's patch tool updating an existing file (Copilot only). */
const update = (id: string, file: string, from: string, to: string) =>
  patch(id, `*** Begin Patch\n*** Update File: ${file}\n@@\n-${from}\n+${to}\n*** End Patch\n`);

export const MORE_SCENARIOS: Scenario[] = [
  {
    id: "guard-flow",
    title:
      "one run: an edit before any intent is refused, a read-only shell runs; intent and scope through the agent's own shell; in scope written, outside refused, a shell write outside refused too; the backend holds the intent",
    rows: [
      "editBeforeIntent",
      "readBeforeIntent",
      "intentThroughShell",
      "inScope",
      "outOfScope",
      "shellOutOfScope",
      "intentRecorded",
    ],
    async body(c) {
      const r = await c.run([
        write("early-write", "src/early.ts"),
        sh("read", "cat README.md && git status --short"),
        sh("intent", intentCmd()),
        sh("scope", scopeCmd("src/feature")),
        write("in-scope", "src/feature/a.ts"),
        write("out-of-scope", "docs/notes.md"),
        ...editOutside(c),
        sh("shell-out-of-scope", "echo s > docs/shell.txt"),
        sh("context", "node .cohent/cohent.mjs context"),
      ]);
      c.check.scriptOk(r, "intentThroughShell");
      c.check.blocked("editBeforeIntent", r, "early-write", "src/early.ts", NO_INTENT);
      c.check.ran("readBeforeIntent", r, "read", /README-MARKER-4417/);
      publishedBySelf(c, r);
      c.check.allowed("inScope", r, "in-scope", "src/feature/a.ts");
      c.check.blocked("outOfScope", r, "out-of-scope", "docs/notes.md", /outside your declared scope/);
      // The edit tool on an existing file outside the scope (Copilot's patch tool: the copilot-wiring-* scenarios).
      if (c.client.kind !== "copilot") appRefusedOutsideScope(c, r, "outOfScope", "edit-out");
      c.check.blocked(
        "shellOutOfScope",
        r,
        "shell-out-of-scope",
        "docs/shell.txt",
        /shell write refused .*outside your declared scope/,
      );
      c.check.ran("intentThroughShell", r, "context", /wki_\w+/);
      await intentRecorded(c, "src/feature/a.ts");
    },
  },
  {
    id: "claim-queue",
    title:
      "a peer holds src/shared: the agent's edit there is refused naming bob and quoting the queue command; it queues as told, works elsewhere; bob completes and the next edit there lands",
    rows: ["peerOverlap", "claimQueue"],
    async body(c) {
      const { bob, intentId } = await peerHolds(c, "claimQueue", ["src/shared"]);
      let completed: { status: number } | null = null;
      let refusedExisted = true;
      const r = await c.run([
        sh("intent", intentCmd()),
        write("refused", "src/shared/util.ts"),
        {
          id: "queue",
          action: (outputs) => ({ kind: "shell", command: queueCommandIn(outputs.at(-1)) }),
          before: () => void (refusedExisted = fileExists(c.ws, "src/shared/util.ts")),
        },
        write("elsewhere", "src/mine/own.ts"),
        write("granted-edit", "src/shared/util.ts", async () => {
          completed = await bob.post({ type: "checkpoint", intentId, status: "completed", summary: "done" });
        }),
      ]);
      c.check.scriptOk(r, "claimQueue");
      c.check.ran("claimQueue", r, "intent", INTENT_OK);
      c.check.blocked(
        "peerOverlap",
        r,
        "refused",
        "src/shared/util.ts",
        /overlaps the scope of bob/,
        refusedExisted,
      );
      const refusal = r.results.get("refused")?.output ?? "";
      c.check.expect(
        "claimQueue",
        "refused: the reason names the queue command and what to do meanwhile",
        refusal.includes(QUEUE_CMD("src/shared/util.ts")) && /Meanwhile, work on files outside/.test(refusal),
        `tool result: ${clip(refusal, 800)}`,
      );
      const queued = r.results.get("queue")?.output ?? "";
      c.check.expect(
        "claimQueue",
        "queue: queued for src/shared/util.ts at place 1, behind bob",
        /queued for src\/shared\/util\.ts at place 1, behind bob/.test(queued) &&
          !queued.includes("Cohent: "),
        `tool result: ${clip(queued, 800)}`,
      );
      c.check.allowed("claimQueue", r, "elsewhere", "src/mine/own.ts");
      c.check.expect(
        "claimQueue",
        "peer completed over HTTP",
        (completed as { status: number } | null)?.status === 200,
        clip(JSON.stringify(completed), 600),
      );
      c.check.allowed("claimQueue", r, "granted-edit", "src/shared/util.ts");
      // Copilot ignores every hook's output but preToolUse's (measured): no notice can reach its model.
      if (c.client.kind !== "copilot") {
        const grant =
          /\[cohent notice\] Scope [^"]*?src\/shared\/util\.ts[^"]*? granted to you from the queue/;
        c.check.expect(
          "claimQueue",
          "the model saw the scope-granted notice",
          r.modelSaw.some((body) => grant.test(body)),
          `no request to the model carried ${grant}`,
        );
      }
    },
  },
  {
    id: "pause-cancel-resume",
    title:
      "paused then cancelled from the API: edits and the shell refused, the adapter's own command runs, a chained one does not; resumed: both run",
    rows: ["paused", "cancelled", "resumed", "adapterWhilePaused"],
    async body(c) {
      const r = await c.run([
        sh("intent", intentCmd()),
        sh("scope", scopeCmd("src/feature")),
        write("before-pause", "src/feature/one.ts"),
        sh("paused-shell", "echo p > src/feature/paused-shell.txt", () => control(c.ws, "pause")),
        write("paused-edit", "src/feature/paused-edit.ts"),
        sh("paused-adapter", "node .cohent/cohent.mjs context"),
        sh("paused-chained", "node .cohent/cohent.mjs context && echo c > src/feature/chained.txt"),
        sh("cancelled-shell", "echo c > src/feature/cancelled-shell.txt", () => control(c.ws, "cancel")),
        write("cancelled-edit", "src/feature/cancelled-edit.ts"),
        write("resumed-edit", "src/feature/resumed-edit.ts", () => control(c.ws, "resume")),
        sh("resumed-shell", "echo r > src/feature/resumed-shell.txt"),
      ]);
      c.check.scriptOk(r, "paused");
      publishedBySelf(c, r);
      c.check.allowed("paused", r, "before-pause", "src/feature/one.ts");
      c.check.blocked("paused", r, "paused-shell", "src/feature/paused-shell.txt", /paused/);
      c.check.blocked("paused", r, "paused-edit", "src/feature/paused-edit.ts", /paused/);
      const adapterOut = r.results.get("paused-adapter")?.output ?? "";
      c.check.expect(
        "adapterWhilePaused",
        "paused-adapter: node .cohent/cohent.mjs context ran (not denied)",
        !!r.results.get("paused-adapter") &&
          !adapterOut.includes("Cohent: ") &&
          /wki_|cohent context|paused/i.test(adapterOut),
        `tool result: ${clip(adapterOut)}`,
      );
      c.check.blocked("adapterWhilePaused", r, "paused-chained", "src/feature/chained.txt", /paused/);
      c.check.blocked("cancelled", r, "cancelled-shell", "src/feature/cancelled-shell.txt", /cancelled/);
      c.check.blocked("cancelled", r, "cancelled-edit", "src/feature/cancelled-edit.ts", /cancelled/);
      c.check.allowed("resumed", r, "resumed-edit", "src/feature/resumed-edit.ts");
      c.check.allowed("resumed", r, "resumed-shell", "src/feature/resumed-shell.txt");
    },
  },
  {
    id: "adapter-fails",
    title:
      "one run: the adapter goes missing, then throws at load, then hangs (its own deadline, 6 s here): each edit and shell call refused with a reason the model read, no stack trace or path; repaired, an edit runs",
    rows: ["adapterMissing", "adapterThrows", "adapterHangs"],
    async body(c) {
      const failed = FAILED[c.client.kind]!;
      const oc = c.client.kind === "opencode";
      const r = await c.run(
        [
          sh("intent", intentCmd()),
          sh("scope", scopeCmd("src/feature")),
          write("before", "src/feature/before.ts"),
          write("missing-edit", "src/feature/missing.ts", () => breakAdapter(c.ws.repo, "missing")),
          sh("missing-shell", "echo m > src/feature/missing-shell.txt"),
          write("throws-edit", "src/feature/throws.ts", () => breakAdapter(c.ws.repo, "throws")),
          sh("throws-shell", "echo t > src/feature/throws-shell.txt"),
          write("hangs-edit", "src/feature/hangs.ts", () =>
            oc ? hangInProcess(c.ws.repo) : breakAdapter(c.ws.repo, "hangs"),
          ),
          sh("hangs-shell", "echo h > src/feature/hangs-shell.txt"),
          write("repaired-edit", "src/feature/repaired.ts", () => restoreAdapter(c.ws.repo)),
        ],
        { env: oc ? { ...FAST_DEADLINE, ...PLUGIN_DEADLINE } : FAST_DEADLINE },
      );
      c.check.scriptOk(r, "adapterMissing");
      publishedBySelf(c, r);
      c.check.allowed("adapterMissing", r, "before", "src/feature/before.ts");
      for (const [row, id, file] of [
        ["adapterMissing", "missing-edit", "src/feature/missing.ts"],
        ["adapterMissing", "missing-shell", "src/feature/missing-shell.txt"],
        ["adapterThrows", "throws-edit", "src/feature/throws.ts"],
        ["adapterThrows", "throws-shell", "src/feature/throws-shell.txt"],
      ] as [RowId, string, string][]) {
        if (c.client.kind === "copilot") c.check.refused(row, r, id, file, failed);
        else c.check.blocked(row, r, id, file, failed);
      }
      const hung = oc ? PLUGIN_REFUSED : DEADLINE_REFUSED;
      c.check.blocked("adapterHangs", r, "hangs-edit", "src/feature/hangs.ts", hung);
      c.check.blocked("adapterHangs", r, "hangs-shell", "src/feature/hangs-shell.txt", hung);
      noLeak(c, "adapterThrows", r, ["missing-edit", "missing-shell", "throws-edit", "throws-shell"]);
      noLeak(c, "adapterHangs", r, ["hangs-edit", "hangs-shell"]);
      c.check.allowed("adapterMissing", r, "repaired-edit", "src/feature/repaired.ts");
    },
  },
  {
    id: "backend-fails",
    title:
      "one run: the service accepts connections and never answers (edit and shell refused), answers again (an edit runs), then stops (edit and shell refused, 'cannot be reached')",
    rows: ["backendHangs", "backendDown"],
    async body(c) {
      const projectFile = join(c.ws.repo, ".cohent", "project.json");
      const project = readFileSync(projectFile, "utf8");
      const credFile = join(c.ws.home, ".config", "cohent", "credentials.json");
      let hole: { port: number; close(): Promise<void> } | null = null;
      const r = await c.run([
        sh("intent", intentCmd()),
        sh("scope", scopeCmd("src/feature")),
        write("before", "src/feature/before.ts"),
        write("hung-edit", "src/feature/hung.ts", async () => {
          hole = await blackHole();
          const url = `http://127.0.0.1:${(hole as { port: number }).port}`;
          const creds = JSON.parse(readFileSync(credFile, "utf8"));
          creds.services[url] = creds.services[c.ws.backend.url];
          writeFileSync(credFile, JSON.stringify(creds), { mode: 0o600 });
          writeFileSync(projectFile, project.replace(c.ws.backend.url, url));
        }),
        sh("hung-shell", "echo h > src/feature/hung-shell.txt"),
        write("answering-edit", "src/feature/answering.ts", async () => {
          writeFileSync(projectFile, project);
          await hole?.close();
        }),
        write("down-edit", "src/feature/down.ts", () => c.ws.stopBackend()),
        sh("down-shell", "echo d > src/feature/down-shell.txt"),
      ]);
      c.check.scriptOk(r, "backendHangs");
      publishedBySelf(c, r);
      c.check.allowed("backendHangs", r, "before", "src/feature/before.ts");
      const hung = /cannot be reached|did not reach a verdict/;
      c.check.blocked("backendHangs", r, "hung-edit", "src/feature/hung.ts", hung);
      c.check.blocked("backendHangs", r, "hung-shell", "src/feature/hung-shell.txt", hung);
      c.check.allowed("backendHangs", r, "answering-edit", "src/feature/answering.ts");
      c.check.blocked("backendDown", r, "down-edit", "src/feature/down.ts", /cannot be reached/);
      c.check.blocked("backendDown", r, "down-shell", "src/feature/down-shell.txt", /cannot be reached/);
    },
  },
];

/**
 * Copilot runs `.github/hooks/*.json` and `.claude/settings.json` alike (measured), but drops the
 * whole Claude file when it holds an entry of a type it does not know: init's mcp_tool handler
 * (docs/decisions/0005-zero-spawn-other-clients.md). The reported case: intent, scope `src`, then
 * Copilot's patch tool editing `docs/out.md` must be refused, through its own wiring and through
 * both; with the Claude wiring alone, the file is dropped and says so.
 */
const copilotWiring = (which: "native" | "claude" | "both"): Scenario => {
  const row: RowId =
    which === "native"
      ? "copilotWiringNative"
      : which === "claude"
        ? "copilotWiringClaude"
        : "copilotWiringBoth";
  return {
    id: `copilot-wiring-${which}`,
    title:
      which === "claude"
        ? "Copilot with only the Claude wiring: it drops .claude/settings.json for init's mcp_tool entry, says so, and runs no Cohent hook"
        : `Copilot with ${which === "native" ? "only its own wiring (.github/hooks/cohent.json)" : "both wirings, as init writes them"}: before intent the patch tool is refused; scope src; src/ edits run, docs/out.md and docs/guide.md are refused`,
    only: "copilot",
    rows: [row],
    async body(c) {
      if (which === "claude") {
        rmSync(join(c.ws.repo, ".github", "hooks", "cohent.json"));
        // No Cohent hook runs: the patch lands, and Copilot names the file it dropped.
        const dropped = await c.run([write("early-patch", "docs/out.md")]);
        c.check.scriptOk(dropped, row);
        c.check.allowed(row, dropped, "early-patch", "docs/out.md");
        c.check.expect(
          row,
          "Copilot drops .claude/settings.json for its mcp_tool entry, and says so",
          /settings\.json' could not be loaded: .*Invalid hook type/.test(dropped.stderr),
          `stderr: ${clip(dropped.stderr)}`,
        );
        return;
      }
      if (which === "native") writeFileSync(join(c.ws.repo, ".claude", "settings.json"), "{}\n");
      let earlyExisted = true;
      const r = await c.run([
        write("early-patch", "docs/out.md"),
        // docs-out writes the same file later, when it is not refused: whether it exists is taken here.
        sh("read", "cat README.md", () => void (earlyExisted = fileExists(c.ws, "docs/out.md"))),
        sh("intent", intentCmd()),
        sh("scope", scopeCmd("src")),
        write("in-scope", "src/new.ts"),
        update("in-scope-update", "src/app.ts", "export const app = 1;", "export const app = 2;"),
        write("docs-out", "docs/out.md"),
        update("docs-update", "docs/guide.md", "guide", "guide, patched"),
        sh("shell", "echo s > src/shell.txt"),
      ]);
      c.check.scriptOk(r, row);
      c.check.blocked(row, r, "early-patch", "docs/out.md", NO_INTENT, earlyExisted);
      c.check.ran(row, r, "read", /README-MARKER-4417/);
      c.check.ran(row, r, "intent", INTENT_OK);
      c.check.ran(row, r, "scope", /Scope claimed: src/);
      c.check.allowed(row, r, "in-scope", "src/new.ts");
      const app = readRepoFile(c.ws, "src/app.ts");
      c.check.expect(
        row,
        "in-scope-update: src/app.ts patched",
        app === "export const app = 2;\n",
        `src/app.ts: ${JSON.stringify(app)}`,
      );
      c.check.blocked(row, r, "docs-out", "docs/out.md", /outside your declared scope/);
      const guide = readRepoFile(c.ws, "docs/guide.md");
      c.check.expect(
        row,
        "docs-update: docs/guide.md unchanged",
        guide === "guide\n",
        `docs/guide.md: ${JSON.stringify(guide)}`,
      );
      const out = r.results.get("docs-update")?.output ?? "";
      c.check.expect(
        row,
        "docs-update: reason reached the model",
        /Cohent: .*outside your declared scope/.test(out),
        `tool result: ${clip(out)}`,
      );
      c.check.allowed(row, r, "shell", "src/shell.txt");
    },
  };
};

MORE_SCENARIOS.push(copilotWiring("native"), copilotWiring("claude"), copilotWiring("both"));

/** The client's own sub-agent tool, with a task the fake model answers from the sub-script. */
function spawnSubagent(kind: string): Step {
  const prompt = `${SUBAGENT_MARK}: write src/feature/sub.ts`;
  const args: Record<string, Record<string, unknown>> = {
    copilot: {
      description: "Write the feature module",
      prompt,
      agent_type: "general-purpose",
      name: "feature",
    },
    gemini: { agent_name: "generalist", prompt },
    opencode: { description: "Write the feature module", prompt, subagent_type: "general" },
  };
  return {
    id: "spawn",
    action: { kind: "tool", name: kind === "gemini" ? "invoke_agent" : "task", args: args[kind]! },
  };
}

MORE_SCENARIOS.push({
  id: "subagent",
  title:
    "a sub-agent (Copilot's and OpenCode's task, Gemini's invoke_agent) works under the parent's intent and scope: its write in scope runs, outside is refused, its shell write in scope runs (Copilot 1.0.85: its edits and shell writes are refused, the known gap)",
  rows: ["subagentMore", "copilotSubagentGap"],
  async body(c) {
    const r = await c.run(
      [sh("intent", intentCmd()), sh("scope", scopeCmd("src/feature")), spawnSubagent(c.client.kind)],
      {
        subSteps: [
          write("sub-in", "src/feature/sub.ts"),
          write("sub-out", "docs/sub.md"),
          // A shell write it names is held like an edit (issue 42): in the parent's scope, it runs.
          sh("sub-shell", "echo s > src/feature/sub-shell.txt"),
        ],
      },
    );
    publishedBySelf(c, r);
    if (c.client.label === "copilot@1.0.85") {
      // Measured (MORE-CLIENTS-MEASURED.md): 1.0.85's sub-agent calls carry their own sessionId and nothing
      // that names the parent, so the adapter sees a session without an intent: closed, not held to the scope.
      c.check.scriptOk(r, "copilotSubagentGap");
      c.check.blocked("copilotSubagentGap", r, "sub-in", "src/feature/sub.ts", NO_INTENT);
      c.check.blocked("copilotSubagentGap", r, "sub-out", "docs/sub.md", NO_INTENT);
      c.check.blocked("copilotSubagentGap", r, "sub-shell", "src/feature/sub-shell.txt", NO_INTENT);
      return;
    }
    c.check.scriptOk(r, "subagentMore");
    c.check.allowed("subagentMore", r, "sub-in", "src/feature/sub.ts");
    c.check.blocked("subagentMore", r, "sub-out", "docs/sub.md", /outside your declared scope/);
    c.check.allowed("subagentMore", r, "sub-shell", "src/feature/sub-shell.txt");
  },
});

/**
 * Checks the adapter is known to fail, each with the payload and the answer that show it (the
 * adapter is not this suite's to fix). A matching check that fails is reported as a known failure
 * and does not fail the suite; one that passes fails it, so that the entry goes once the adapter
 * is fixed.
 */
export interface KnownFailure {
  /** Labels (`copilot@1.0.85`) or kinds (`gemini`). */
  clients: string[];
  scenario: string;
  /** Over the check's name. */
  check: RegExp;
  why: string;
}

// OpenCode's grant notice (claim-queue) was the one entry: fixed (the plugin appends a tool call's context to its result).
export const KNOWN_FAILURES: KnownFailure[] = [];

/** The known failure a check of this client and scenario matches, if any. */
export function knownFailure(
  client: { label: string; kind: string },
  scenario: string,
  check: string,
): KnownFailure | null {
  return (
    KNOWN_FAILURES.find(
      (k) =>
        (k.clients.includes(client.label) || k.clients.includes(client.kind)) &&
        k.scenario === scenario &&
        k.check.test(check),
    ) ?? null
  );
}

/** The scenarios that apply to one of these clients. */
export function moreScenariosFor(kind: ClientKind): Scenario[] {
  return MORE_SCENARIOS.filter((s) => !s.only || s.only === kind);
}
