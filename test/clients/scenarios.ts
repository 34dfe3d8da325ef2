// The conformance scenarios. Each drives one real client through a scripted
// model and lets the file system decide: a blocked write leaves no file, an
// allowed one leaves it. Every blocked call must also have reached the model
// as a tool result carrying the adapter's reason.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { honoursOnFailure } from "../../mcp-server/src/hook-tool.ts";
import { join } from "node:path";
import { agentClient } from "../helpers/backend.ts";
import type { ClientKind, ClientSpec } from "./clients.ts";
import {
  agentIntents,
  control,
  hookTimeline,
  fileExists,
  readRepoFile,
  type RunResult,
  type Workspace,
} from "./harness.ts";
import { blackHole, breakAdapter, pathWithoutNode, restoreAdapter, type AdapterFailure } from "./failures.ts";
import type { Action, Step } from "./script.ts";
import { SUBAGENT_MARK } from "./fake-anthropic.ts";

/** Report rows: what the README's compatibility table is made of. */
export const ROWS = {
  editBeforeIntent: "Edit before any intent is blocked",
  readBeforeIntent: "Read-only shell before any intent runs",
  intentThroughShell: "Intent and scope published by the agent through its own shell",
  inScope: "Edit inside the declared scope runs",
  outOfScope: "Edit outside the declared scope is blocked",
  peerOverlap: "Edit overlapping a peer's scope is blocked, peer named",
  claimQueue:
    "Claim queue: refused on a peer's path, queued as the refusal says; peer completes, the next edit lands, the model told of the grant",
  paused: "Paused from the API: edit and shell blocked",
  cancelled: "Cancelled from the API: edit and shell blocked",
  resumed: "Resumed: edit and shell run again",
  adapterWhilePaused: "Adapter's own command runs while paused; chained variant blocked",
  applyPatchTool: "apply_patch tool call is an edit",
  applyPatchHeredoc: "apply_patch heredoc through the shell is an edit",
  backendDown: "Backend stopped: edit and shell blocked, reason says so",
  doctorModified: "doctor reports a hook modified after trust",
  modifiedHookSkipped: "Known gap: Codex silently skips a hook modified after trust",
  writeStdinGap: "Known gap: write_stdin into a terminal opened before a pause still runs",
  claudeEditTool: "Edit tool on an existing file: in scope runs, outside blocked",
  unguardedControl: "Control: without Cohent's hooks the same edit is written",
  mcpKillSwitch: "MCP tool: runs before intent (opaque), blocked while paused, runs on resume",
  fullAccess: "danger-full-access sandbox: intent, scope, guard",
  shellOutOfScope: "A shell command's named write outside the declared scope is refused like an edit's",
  denyReachesModel: "Deny reason reaches the model as the tool result",
  adapterMissing: "Adapter missing: edit and shell blocked, repaired edit runs",
  adapterThrows:
    "Adapter throws at load: edit and shell blocked, no stack trace or path shown, repaired edit runs",
  adapterHangs: "Adapter hangs: its own deadline refuses edit and shell, repaired edit runs",
  backendHangs: "Backend accepts connections but never answers: edit and shell blocked, repaired edit runs",
  subagentForeground: "Sub-agent (foreground): write in scope runs, outside blocked",
  subagentBackground:
    "Sub-agent (background, main Stop first): write in scope runs, outside blocked, intent completes after it",
  subagentLate:
    "Sub-agent (background) writing seconds after the parent's answer: in scope runs, outside blocked for the scope, done after it",
  mcpCohent:
    "Cohent's own MCP server inside the client (init's entry): intent and scope over MCP, edit in scope runs, scope refused while paused",
  nodeMissing: "node missing from the hook's PATH: edit and shell blocked, edit runs once node is back",
  gitSweepRefused:
    "Shared checkout: git add -A && git commit with a peer's edits in the tree is refused, peer named",
  commitOwn:
    "Shared checkout: node .cohent/cohent.mjs commit -m commits only the agent's file, with the trailer",
  shellHeld:
    "Shell writes held: a visible write refused like an edit, an invisible one caught, told to the model, noticed to the peer, undone by restore",
  // Copilot CLI, Gemini CLI, OpenCode (scenarios-more.ts).
  intentRecorded:
    "Backend: the agent's intent under the client's name, with its prompt, completed by the stop event",
  copilotWiringNative:
    "Copilot, its own wiring only (.github/hooks): scope src, the patch tool on docs/out.md refused, src edits run",
  copilotWiringClaude:
    "Copilot with only the Claude wiring: init's mcp_tool entry makes Copilot drop .claude/settings.json whole (a warning naming it), so no Cohent hook runs there: Copilot is guarded by its own wiring only",
  copilotWiringBoth: "Copilot with both wirings (what init writes): the same refusals and the same allows",
  copilotSubagentGap:
    "Known gap: Copilot 1.0.85 marks no sub-agent call (its own sessionId, no parent), so a sub-agent's edits are refused as an unknown session's (closed)",
  subagentMore:
    "Sub-agent (Copilot task, Gemini invoke_agent, OpenCode task): held to the parent's scope, in scope runs, outside refused",
  // Claude Code's spawn-free wiring (test/clients/spawn-free/scenarios.ts).
  spawnFreeGuard:
    "Spawn-free wiring (mcp_tool + gate): Write and Edit on a peer's path refused naming the peer, in-scope Write and Edit run",
  spawnFreeNoSpawn:
    "Spawn-free wiring: no hook process per PreToolUse/PostToolUse once the MCP server marked the session (2.1.332); the gate runs the command hook every time on 2.1.197",
  spawnFreeFails:
    "Spawn-free wiring, the MCP server missing, exiting at start, crashing or hanging in the call, or still connecting: 2.1.332 refuses, 2.1.197's gate refuses the peer's path",
  spawnFreePause:
    "Spawn-free wiring: a pause from the API refuses edit and shell through the mcp_tool handler",
  // Issue 49 (test/clients/spawn-free/forged.ts, scenarios-silent.ts).
  forgedMark:
    "A forged spawn-free mark (by a script, a one-liner, with the MCP server killed) opens nothing: Write and sed -i of a peer's file, a write outside the scope and into the peer's folder refused",
  hooksOff:
    "disableAllHooks written by a script into a settings file: caught at the end of the call, undone at once, the session paused (next call refused with the reason), the peer's file untouched",
  silentBackground:
    "A background job's write into a peer's file after the call: caught and told at the next call, restored byte for byte, the peer noticed",
  // Issue 50 item 2 (scenarios-build.ts).
  buildMidSession:
    "The build the checkout holds decides, mid-session: adapter deleted or throwing at load, an in-scope edit and a touch refused with the repair; upgraded, they run and the new build decides",
  // Issue 50 item 3 (scenarios-stale.ts).
  staleWrite:
    "Stale write across agents and clients: read, a peer (Claude Code) changes line 5 and completes, the agent's whole-file write and shell write refused naming the peer and the lines; read again, the write runs",
} as const;
export type RowId = keyof typeof ROWS;

export interface Check {
  row: RowId;
  name: string;
  ok: boolean;
  detail: string;
  /** A failure the adapter is known to have (scenarios-more.ts KNOWN_FAILURES): why; it does not fail the suite. */
  known?: string;
}

export class Checker {
  readonly checks: Check[] = [];
  /** The files of this workspace decide blocked and allowed. */
  constructor(private readonly ws: Workspace) {}

  private exists(rel: string): boolean {
    return fileExists(this.ws, rel);
  }

  expect(row: RowId, name: string, ok: boolean, detail = ""): boolean {
    this.checks.push({ row, name, ok, detail: ok ? "" : detail });
    return ok;
  }

  /**
   * The file was not written, and the model got a tool result carrying the adapter's reason.
   * `existedAfter`: whether the file existed right after the call, for a file a later step writes (taken by a `before` action).
   */
  blocked(
    row: RowId,
    r: RunResult,
    stepId: string,
    file: string,
    reason: RegExp,
    existedAfter = this.exists(file),
  ): void {
    const res = r.results.get(stepId);
    this.expect(
      row,
      `${stepId}: ${file} not written`,
      !existedAfter,
      `${file} exists: the call was not blocked`,
    );
    const out = res?.output ?? "";
    // Claude Code marks a hook deny as an error result; Codex has no such flag.
    const ok = out.includes("Cohent: ") && reason.test(out) && res?.isError !== false;
    this.expect(
      row,
      `${stepId}: reason ${reason} reached the model`,
      ok,
      res ? `tool result: ${clip(out)}` : "no tool result for this call reached the model",
    );
    this.expect(
      "denyReachesModel",
      `${stepId}: deny reason in the tool result`,
      ok,
      res ? `tool result: ${clip(out)}` : "no tool result",
    );
  }

  /**
   * The file was not written and the model read `reason` for the call: for a refusal that is the
   * client's own wording rather than the adapter's (Copilot: "Denied by preToolUse hook … (hook errored)").
   */
  refused(row: RowId, r: RunResult, stepId: string, file: string, reason: RegExp): void {
    const res = r.results.get(stepId);
    const out = res?.output ?? "";
    this.expect(
      row,
      `${stepId}: ${file} not written`,
      !this.exists(file),
      `${file} exists: the call was not blocked`,
    );
    this.expect(
      row,
      `${stepId}: reason ${reason} reached the model`,
      !!res && reason.test(out),
      res ? `tool result: ${clip(out)}` : "no tool result for this call reached the model",
    );
    this.expect(
      "denyReachesModel",
      `${stepId}: refusal in the tool result`,
      !!res && reason.test(out),
      res ? `tool result: ${clip(out)}` : "no tool result",
    );
  }

  /** The call ran: its file exists and no deny came back. */
  allowed(row: RowId, r: RunResult, stepId: string, file: string): void {
    const res = r.results.get(stepId);
    this.expect(
      row,
      `${stepId}: ${file} written`,
      this.exists(file),
      `${file} missing; tool result: ${clip(res?.output ?? "(none)")}`,
    );
    this.expect(
      row,
      `${stepId}: not denied`,
      !!res && !res.output.includes("Cohent: "),
      `tool result: ${clip(res?.output ?? "(none)")}`,
    );
  }

  /** A command ran and its output reached the model. */
  ran(row: RowId, r: RunResult, stepId: string, output: RegExp): void {
    const res = r.results.get(stepId);
    const out = res?.output ?? "";
    this.expect(
      row,
      `${stepId}: ran, output ${output}`,
      !!res && !out.includes("Cohent: ") && output.test(out),
      `tool result: ${clip(res ? out : "(none)")}`,
    );
  }

  scriptOk(r: RunResult, row: RowId): void {
    this.expect(
      row,
      "client run finished",
      r.code === 0 && r.scriptErrors.length === 0,
      `exit ${r.code}; script errors: ${r.scriptErrors.map(String).join("; ")}; stderr: ${clip(r.stderr, 600)}`,
    );
  }
}

export function clip(s: string, n = 400): string {
  const t = s.replace(/\s+/g, " ").trim();
  return t.length > n ? t.slice(0, n) + "…" : t;
}

export interface Ctx {
  client: ClientSpec;
  ws: Workspace;
  check: Checker;
  run(
    steps: Step[],
    opts?: {
      prompt?: string;
      sandbox?: "workspace-write" | "danger-full-access";
      keepTrust?: boolean;
      untrusted?: boolean;
      mcp?: boolean;
      env?: NodeJS.ProcessEnv;
      subSteps?: Step[];
      codexToml?: string;
      claudeMcp?: { config: string; tools: string[] };
      /** Claude: record every hook payload in RunResult.hooks. */
      hookLog?: boolean;
    },
  ): Promise<RunResult>;
}

export interface Scenario {
  id: string;
  title: string;
  only?: ClientKind;
  rows: RowId[];
  body(ctx: Ctx): Promise<void>;
}

// ---------------------------------------------------------------- steps

/** Git in the run's checkout as its person would run it (the workspace's HOME, no system config); throws on failure. */
export function repoGit(c: Ctx, ...args: string[]): void {
  const r = spawnSync("git", args, {
    cwd: c.ws.repo,
    encoding: "utf8",
    env: { ...process.env, HOME: c.ws.home, GIT_CONFIG_NOSYSTEM: "1" },
  });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
}

export const sh = (id: string, command: string, before?: Step["before"]): Step => ({
  id,
  action: { kind: "shell", command },
  ...(before ? { before } : {}),
});
export const write = (id: string, path: string, before?: Step["before"]): Step => ({
  id,
  action: { kind: "write", path, content: `${id}\n` },
  ...(before ? { before } : {}),
});
export const patch = (id: string, body: string, before?: Step["before"]): Step => ({
  id,
  action: { kind: "patch", patch: body },
  ...(before ? { before } : {}),
});

export const intentRecord = (objective: string, output: string, component: string) =>
  JSON.stringify({
    objective,
    plan: [`build ${output}`],
    components: [component],
    dependsOn: [],
    deferred: [],
    outputs: [output],
    blockers: [],
    requires: [],
    capabilities: [],
    state: "planned",
  });
export const intentCmd = (
  objective = "Add the feature module",
  output = "feature-module",
  component = "feature",
) => `node .cohent/cohent.mjs intent '${intentRecord(objective, output, component)}'`;
export const scopeCmd = (...paths: string[]) => `node .cohent/cohent.mjs scope ${paths.join(" ")}`;

export const QUEUE_CMD = (...paths: string[]) => `node .cohent/cohent.mjs scope --queue ${paths.join(" ")}`;
/** The queue command a refusal quotes (its paths end at the "(" that explains it); a fixed one when there is none, which the checks then catch. */
export function queueCommandIn(refusal: string | undefined): string {
  const m = /node \.cohent\/cohent\.mjs scope --queue(?: [^\s()]+)+/.exec(refusal ?? "");
  return m ? m[0] : QUEUE_CMD("no-queue-command-in-the-refusal");
}

export const PROMPT = "Add a feature module to the demo app";
export const INTENT_OK = /\[cohent intent\] wki_\w+: (proceed|parallel)/;
const NETCHECK = (url: string) =>
  `node -e "fetch('${url}/healthz').then(r=>console.log('NET-OK',r.status),e=>console.log('NET-FAIL',(e.cause&&e.cause.code)||e.message))"`;

export function publishedBySelf(c: Ctx, r: RunResult): void {
  c.check.ran("intentThroughShell", r, "intent", INTENT_OK);
  c.check.ran("intentThroughShell", r, "scope", /Scope claimed: src\/feature/);
}

/** An edit of the existing src/app.ts outside the scope: the file is unchanged and the refusal reached the model. */
export function appRefusedOutsideScope(c: Ctx, r: RunResult, row: RowId, stepId: string): void {
  const app = readRepoFile(c.ws, "src/app.ts");
  c.check.expect(
    row,
    `${stepId}: src/app.ts unchanged`,
    app === "export const app = 1;\n",
    `src/app.ts is now ${JSON.stringify(app)}`,
  );
  const out = r.results.get(stepId)?.output ?? "";
  c.check.expect(
    row,
    `${stepId}: reason reached the model`,
    /Cohent: .*outside your declared scope/.test(out),
    `tool result: ${clip(out)}`,
  );
}

/** What bob, the peer, works on: his session, prompt and intent record (objective, output, component). */
export interface PeerWork {
  session: string;
  prompt: string;
  record: [objective: string, output: string, component: string];
}
const SHARED_HELPERS: PeerWork = {
  session: "bob-session-1",
  prompt: "Rework the shared helpers",
  record: ["Rework the shared helpers", "shared-helpers", "shared"],
};

/** bob, a peer driven over HTTP, publishes an intent and claims `paths`; returns his client and intent. */
export async function peerHolds(c: Ctx, row: RowId, paths: string[], work: PeerWork = SHARED_HELPERS) {
  const bob = agentClient(c.ws.backend.url, c.ws.bobToken, work.session);
  const pub = await bob.post({
    type: "publish",
    prompt: work.prompt,
    paths: [],
    clientName: "Claude Code",
  });
  const intentId = pub.body?.data?.intentId as string;
  const int = await bob.post({
    type: "intent",
    intentId,
    intent: JSON.parse(intentRecord(...work.record)),
  });
  const claim = await bob.post({ type: "scope", intentId, paths });
  c.check.expect(
    row,
    `peer published and claimed ${paths.join(", ")} over HTTP`,
    pub.status === 200 && int.status === 200 && claim.status === 200,
    JSON.stringify([pub, int, claim]).slice(0, 600),
  );
  return { bob, intentId };
}

// ---------------------------------------------------------------- scenarios

export const SCENARIOS: Scenario[] = [
  {
    id: "before-intent",
    title: "edit before any intent; read-only shell before any intent",
    rows: ["editBeforeIntent", "readBeforeIntent"],
    async body(c) {
      const r = await c.run([
        write("early-write", "src/early.ts"),
        sh("read", "cat README.md && git status --short"),
      ]);
      c.check.scriptOk(r, "editBeforeIntent");
      c.check.blocked(
        "editBeforeIntent",
        r,
        "early-write",
        "src/early.ts",
        /no (structured intent|prompt or intent)/,
      );
      c.check.ran("readBeforeIntent", r, "read", /README-MARKER-4417/);
    },
  },
  {
    id: "intent-scope",
    title:
      "intent and scope through the agent's shell (default sandbox), then in-scope and out-of-scope edits",
    rows: ["intentThroughShell", "inScope", "outOfScope", "shellOutOfScope"],
    async body(c) {
      const steps = [
        ...(c.client.kind === "codex" ? [sh("netcheck", NETCHECK(c.ws.backend.url))] : []),
        sh("intent", intentCmd()),
        sh("scope", scopeCmd("src/feature")),
        write("in-scope", "src/feature/a.ts"),
        write("out-of-scope", "docs/notes.md"),
        sh("shell-out-of-scope", "echo s > docs/shell.txt"),
        sh("context", "node .cohent/cohent.mjs context"),
      ];
      const r = await c.run(steps);
      c.check.scriptOk(r, "intentThroughShell");
      if (c.client.kind === "codex") {
        // The point of the relay: in workspace-write the agent's own shell has no network at all.
        c.check.ran("intentThroughShell", r, "netcheck", /NET-FAIL/);
      }
      publishedBySelf(c, r);
      // The backend holds what the agent published itself: prompt (hook), record (shell), and the finish (Stop hook).
      const intents = await agentIntents(c.ws);
      const mine = intents.find((i) => i.record?.objective === "Add the feature module");
      const clientName = c.client.kind === "codex" ? "Codex" : "Claude Code";
      c.check.expect(
        "intentThroughShell",
        `backend: intent by ${clientName} with the agent's record and prompt`,
        !!mine && mine.client === clientName && mine.prompt === PROMPT,
        `intents: ${clip(JSON.stringify(intents), 800)}`,
      );
      c.check.expect(
        "intentThroughShell",
        "backend: the Stop hook completed it, touching src/feature/a.ts",
        !!mine &&
          mine.state === "completed" &&
          mine.checkpoints.some((k) => k.status === "completed" && !!k.paths?.includes("src/feature/a.ts")),
        `intent: ${clip(JSON.stringify(mine ?? null), 800)}`,
      );
      c.check.allowed("inScope", r, "in-scope", "src/feature/a.ts");
      c.check.blocked("outOfScope", r, "out-of-scope", "docs/notes.md", /outside your declared scope/);
      c.check.blocked(
        "shellOutOfScope",
        r,
        "shell-out-of-scope",
        "docs/shell.txt",
        /shell write refused .*outside your declared scope/,
      );
      c.check.ran("intentThroughShell", r, "context", /wki_\w+/);
    },
  },
  {
    id: "peer-overlap",
    title: "a peer session holds src/shared; the agent's overlapping edit is blocked and the peer named",
    rows: ["peerOverlap"],
    async body(c) {
      await peerHolds(c, "peerOverlap", ["src/shared"]);
      const r = await c.run([
        sh("intent", intentCmd()),
        write("overlap", "src/shared/util.ts"),
        write("elsewhere", "src/mine/own.ts"),
        sh("scope-overlap", scopeCmd("src/shared")),
      ]);
      c.check.scriptOk(r, "peerOverlap");
      c.check.ran("peerOverlap", r, "intent", INTENT_OK);
      c.check.blocked("peerOverlap", r, "overlap", "src/shared/util.ts", /overlaps the scope of bob/);
      c.check.allowed("peerOverlap", r, "elsewhere", "src/mine/own.ts");
      // The scope command itself is refused by the backend (not by the hook) and names the peer.
      const out = r.results.get("scope-overlap")?.output ?? "";
      c.check.expect(
        "peerOverlap",
        "scope over the peer's path is refused, naming bob",
        /Scope refused/.test(out) && /bob/.test(out),
        `tool result: ${clip(out)}`,
      );
    },
  },
  {
    id: "claim-queue",
    title:
      "a peer holds src/shared; the agent is refused there, queues with the command the refusal gave it (Codex: relayed from the sandbox), works elsewhere meanwhile; the peer completes and the agent's next edit there lands, the grant told to the model",
    rows: ["claimQueue"],
    async body(c) {
      const { bob, intentId } = await peerHolds(c, "claimQueue", ["src/shared"]);
      let completed: { status: number; body: unknown } | null = null;
      let refusedExisted = true;
      const r = await c.run([
        sh("intent", intentCmd()),
        write("refused", "src/shared/util.ts"),
        // The scripted model does what the refusal says: it runs the queue command quoted there.
        {
          id: "queue",
          action: (outputs) => ({ kind: "shell", command: queueCommandIn(outputs.at(-1)) }),
          // The refused write's result is back: its file must not exist (the granted edit writes it later).
          before: () => void (refusedExisted = fileExists(c.ws, "src/shared/util.ts")),
        },
        write("elsewhere", "src/mine/own.ts"),
        // The peer finishes between two model turns: a completed checkpoint releases src/shared and grants the queue.
        write("granted-edit", "src/shared/util.ts", async () => {
          completed = await bob.post({ type: "checkpoint", intentId, status: "completed", summary: "done" });
        }),
      ]);
      c.check.scriptOk(r, "claimQueue");
      c.check.ran("claimQueue", r, "intent", INTENT_OK);
      c.check.blocked(
        "claimQueue",
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
      // Not granted yet: a refusal (exit 1) that says where the claim waits and behind whom.
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
      // The grant's notice line, as the fake model server received it (a hook's injected context).
      const grant = /\[cohent notice\] Scope [^"]*?src\/shared\/util\.ts[^"]*? granted to you from the queue/;
      const seenAt = r.modelSaw.findIndex((body) => grant.test(body));
      if (process.env.COHENT_CLIENTS_DEBUG && seenAt >= 0) {
        const body = r.modelSaw[seenAt]!;
        const at = body.search(grant);
        console.error(
          `[${c.client.label}] grant in request ${seenAt + 1}/${r.requests}:`,
          body.slice(at - 300, at + 200),
        );
      }
      c.check.expect(
        "claimQueue",
        "the model saw the scope-granted notice",
        seenAt >= 0,
        `no request to the model carried ${grant}`,
      );
    },
  },
  {
    id: "pause-cancel-resume",
    title:
      "paused then cancelled from the API blocks edits and the shell; the adapter's own command runs, a chained one does not; resume continues",
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
    id: "apply-patch",
    title: "Codex: apply_patch as a tool call and as a heredoc through the shell are both edits",
    only: "codex",
    rows: ["applyPatchTool", "applyPatchHeredoc"],
    async body(c) {
      const add = (path: string) => `*** Begin Patch\n*** Add File: ${path}\n+patched\n*** End Patch\n`;
      const heredoc = (path: string) => `apply_patch <<'EOF'\n${add(path)}EOF`;
      const update = `*** Begin Patch\n*** Update File: src/app.ts\n@@\n-export const app = 1;\n+export const app = 2;\n*** End Patch\n`;
      const r = await c.run([
        patch("patch-early", add("src/feature/early.ts")),
        sh("heredoc-early", heredoc("src/feature/early2.ts")),
        sh("intent", intentCmd()),
        sh("scope", scopeCmd("src/feature")),
        patch("patch-in", add("src/feature/p.ts")),
        sh("heredoc-in", heredoc("src/feature/h.ts")),
        patch("patch-out", add("docs/p.md")),
        sh("heredoc-out", heredoc("docs/h.md")),
        patch("patch-update-out", update),
      ]);
      c.check.scriptOk(r, "applyPatchTool");
      publishedBySelf(c, r);
      c.check.blocked(
        "applyPatchTool",
        r,
        "patch-early",
        "src/feature/early.ts",
        /no (structured intent|prompt or intent)/,
      );
      c.check.blocked(
        "applyPatchHeredoc",
        r,
        "heredoc-early",
        "src/feature/early2.ts",
        /no (structured intent|prompt or intent)/,
      );
      c.check.allowed("applyPatchTool", r, "patch-in", "src/feature/p.ts");
      c.check.allowed("applyPatchHeredoc", r, "heredoc-in", "src/feature/h.ts");
      c.check.blocked("applyPatchTool", r, "patch-out", "docs/p.md", /outside your declared scope/);
      c.check.blocked("applyPatchHeredoc", r, "heredoc-out", "docs/h.md", /outside your declared scope/);
      appRefusedOutsideScope(c, r, "applyPatchTool", "patch-update-out");
    },
  },
  {
    id: "backend-down",
    title: "the backend stops mid-session: edits and the shell are blocked with a reason that says so",
    rows: ["backendDown"],
    async body(c) {
      const r = await c.run([
        sh("intent", intentCmd()),
        sh("scope", scopeCmd("src/feature")),
        write("up-edit", "src/feature/up.ts"),
        write("down-edit", "src/feature/down.ts", () => c.ws.stopBackend()),
        sh("down-shell", "echo d > src/feature/down-shell.txt"),
      ]);
      c.check.scriptOk(r, "backendDown");
      publishedBySelf(c, r);
      c.check.allowed("backendDown", r, "up-edit", "src/feature/up.ts");
      c.check.blocked("backendDown", r, "down-edit", "src/feature/down.ts", /cannot be reached/);
      c.check.blocked("backendDown", r, "down-shell", "src/feature/down-shell.txt", /cannot be reached/);
    },
  },
  {
    id: "full-access",
    title:
      "Codex with sandbox_mode danger-full-access: the agent's shell has network; the guard holds the same",
    only: "codex",
    rows: ["fullAccess"],
    async body(c) {
      const r = await c.run(
        [
          sh("netcheck", NETCHECK(c.ws.backend.url)),
          write("early-write", "src/feature/early.ts"),
          sh("intent", intentCmd()),
          sh("scope", scopeCmd("src/feature")),
          write("in-scope", "src/feature/a.ts"),
          write("out-of-scope", "docs/notes.md"),
        ],
        { sandbox: "danger-full-access" },
      );
      c.check.scriptOk(r, "fullAccess");
      c.check.ran("fullAccess", r, "netcheck", /NET-OK 200/);
      c.check.blocked(
        "fullAccess",
        r,
        "early-write",
        "src/feature/early.ts",
        /no (structured intent|prompt or intent)/,
      );
      c.check.ran("fullAccess", r, "intent", INTENT_OK);
      c.check.ran("fullAccess", r, "scope", /Scope claimed: src\/feature/);
      c.check.allowed("fullAccess", r, "in-scope", "src/feature/a.ts");
      c.check.blocked("fullAccess", r, "out-of-scope", "docs/notes.md", /outside your declared scope/);
    },
  },
  {
    id: "modified-hooks",
    title: "Codex: a hooks file modified after trust; doctor reports it, and Codex skips the hook silently",
    only: "codex",
    rows: ["doctorModified", "modifiedHookSkipped"],
    async body(c) {
      const doctor = () => {
        const d = spawnSync("node", [".cohent/cohent.mjs", "doctor", "--json"], {
          cwd: c.ws.repo,
          encoding: "utf8",
          timeout: 30_000,
          env: { PATH: process.env.PATH, HOME: c.ws.home, CODEX_HOME: c.ws.codexHome },
        });
        return { code: d.status, text: d.stdout + d.stderr, json: safeJson(d.stdout) };
      };
      // Trust is written by the run; a no-op run first, so the CODEX_HOME is exactly what a trusted user has.
      const first = await c.run([sh("noop", "true")]);
      c.check.scriptOk(first, "doctorModified");
      const before = doctor();
      const trustedBefore = codexHookStates(before.json);
      c.check.expect(
        "doctorModified",
        "doctor before the change: PreToolUse hook trusted",
        trustedBefore.get("PreToolUse") === "trusted",
        `doctor: ${clip(before.text, 800)}`,
      );
      // A person edits the PreToolUse hook (here: its timeout) after trusting it.
      const file = join(c.ws.repo, ".codex", "hooks.json");
      const cfg = JSON.parse(readFileSync(file, "utf8"));
      cfg.hooks.PreToolUse[0].hooks[0].timeout = 45;
      writeFileSync(file, JSON.stringify(cfg, null, 2) + "\n");
      const after = doctor();
      const states = codexHookStates(after.json);
      c.check.expect(
        "doctorModified",
        "doctor after the change: PreToolUse hook modified",
        states.get("PreToolUse") === "modified",
        `doctor: ${clip(after.text, 1200)}`,
      );
      c.check.expect(
        "doctorModified",
        "doctor after the change: other hooks still trusted",
        states.get("UserPromptSubmit") === "trusted",
        `doctor: ${clip(after.text, 800)}`,
      );
      // Run again WITHOUT re-trusting: Codex must skip the modified hook silently (the gap doctor exists for).
      const r = await c.run([write("unguarded-edit", "src/unguarded.ts")], { keepTrust: true });
      c.check.expect(
        "modifiedHookSkipped",
        "unguarded-edit: written although no intent exists (modified hook not run)",
        fileExists(c.ws, "src/unguarded.ts"),
        `tool result: ${clip(r.results.get("unguarded-edit")?.output ?? "(none)")}`,
      );
    },
  },
];

/** Scenarios that need a `Step` helper outside this file's constants. */
SCENARIOS.push(
  {
    id: "write-stdin-gap",
    title:
      "Codex: a terminal opened before a pause; write_stdin into it after the pause (measures the known gap)",
    only: "codex",
    rows: ["writeStdinGap"],
    async body(c) {
      const sessionOf = (outputs: string[]) =>
        Number(/session ID (\d+)/i.exec(outputs.at(-1) ?? "")?.[1] ?? -1);
      const r = await c.run([
        sh("intent", intentCmd()),
        sh("scope", scopeCmd("src/feature")),
        {
          id: "open-terminal",
          action: {
            kind: "codex-call",
            name: "exec_command",
            args: { cmd: "bash", tty: true, yield_time_ms: 1500 },
          },
        },
        {
          id: "typed",
          action: (outputs) => ({
            kind: "codex-call",
            name: "write_stdin",
            args: {
              session_id: sessionOf(outputs),
              chars: "echo typed > typed-while-paused.txt\n",
              yield_time_ms: 1500,
            },
          }),
          before: () => control(c.ws, "pause"),
        },
        sh("paused-shell", "echo p > src/feature/paused.txt"),
      ]);
      c.check.scriptOk(r, "writeStdinGap");
      publishedBySelf(c, r);
      const open = r.results.get("open-terminal")?.output ?? "";
      c.check.expect(
        "writeStdinGap",
        "open-terminal: a terminal session is running",
        /session ID \d+/i.test(open),
        `tool result: ${clip(open)}`,
      );
      // The control: the pause is in force for announced tools.
      c.check.blocked("paused", r, "paused-shell", "src/feature/paused.txt", /paused/);
      // The gap, as measured: input typed into the already-open terminal ran although the session is paused.
      c.check.expect(
        "writeStdinGap",
        "typed: typed-while-paused.txt written while paused (no PreToolUse for write_stdin)",
        fileExists(c.ws, "typed-while-paused.txt"),
        `not written: the gap did not reproduce (update the known-gaps table). tool result: ${clip(r.results.get("typed")?.output ?? "(none)")}`,
      );
    },
  },
  {
    id: "edit-tool",
    title: "Claude Code: Read then Edit an existing file, inside and outside the declared scope",
    only: "claude",
    rows: ["claudeEditTool"],
    async body(c) {
      const abs = (rel: string) => join(c.ws.repo, rel);
      const r = await c.run([
        sh("intent", intentCmd()),
        sh("scope", scopeCmd("src/feature")),
        write("create", "src/feature/mod.ts"),
        {
          id: "read-in",
          action: { kind: "claude-call", name: "Read", input: { file_path: abs("src/feature/mod.ts") } },
        },
        {
          id: "edit-in",
          action: {
            kind: "claude-call",
            name: "Edit",
            input: { file_path: abs("src/feature/mod.ts"), old_string: "create", new_string: "edited" },
          },
        },
        {
          id: "read-out",
          action: { kind: "claude-call", name: "Read", input: { file_path: abs("src/app.ts") } },
        },
        {
          id: "edit-out",
          action: {
            kind: "claude-call",
            name: "Edit",
            input: { file_path: abs("src/app.ts"), old_string: "app = 1", new_string: "app = 2" },
          },
        },
      ]);
      c.check.scriptOk(r, "claudeEditTool");
      publishedBySelf(c, r);
      c.check.ran("claudeEditTool", r, "read-out", /export const app/);
      const mod = fileExists(c.ws, "src/feature/mod.ts")
        ? readRepoFile(c.ws, "src/feature/mod.ts")
        : "(missing)";
      c.check.expect(
        "claudeEditTool",
        "edit-in: src/feature/mod.ts edited",
        mod === "edited\n",
        `content ${JSON.stringify(mod)}; tool result: ${clip(r.results.get("edit-in")?.output ?? "(none)")}`,
      );
      appRefusedOutsideScope(c, r, "claudeEditTool", "edit-out");
    },
  },
  {
    id: "mcp-kill-switch",
    title:
      "an MCP tool (mcp__demo__touch) is opaque: held to the kill switch, not to intent or scope (Codex: found through tool_search first)",
    rows: ["mcpKillSwitch"],
    async body(c) {
      const touch = (id: string, rel: string, before?: Step["before"]): Step => {
        const args = { path: join(c.ws.repo, rel), text: id };
        const action: Action =
          c.client.kind === "codex"
            ? // Codex defers MCP tools: the call names the namespace that tool_search returned.
              {
                kind: "codex-item",
                item: {
                  type: "function_call",
                  id: `fc_${id}`,
                  namespace: "mcp__demo",
                  name: "touch",
                  arguments: JSON.stringify(args),
                },
              }
            : { kind: "claude-call", name: "mcp__demo__touch", input: args };
        return { id, action, ...(before ? { before } : {}) };
      };
      const search: Step[] =
        c.client.kind === "codex"
          ? [
              {
                id: "tool-search",
                action: {
                  kind: "codex-item",
                  item: {
                    type: "tool_search_call",
                    id: "ts_1",
                    execution: "client",
                    status: "completed",
                    arguments: { query: "touch a file", limit: 8 },
                  },
                },
              },
            ]
          : [];
      const r = await c.run(
        [
          ...search,
          touch("mcp-before-intent", "mcp-early.txt"),
          sh("intent", intentCmd()),
          touch("mcp-paused", "mcp-paused.txt", () => control(c.ws, "pause")),
          touch("mcp-resumed", "mcp-resumed.txt", () => control(c.ws, "resume")),
        ],
        { mcp: true },
      );
      c.check.scriptOk(r, "mcpKillSwitch");
      if (c.client.kind === "codex") c.check.ran("mcpKillSwitch", r, "tool-search", /mcp__demo/);
      c.check.ran("mcpKillSwitch", r, "intent", INTENT_OK);
      c.check.allowed("mcpKillSwitch", r, "mcp-before-intent", "mcp-early.txt");
      c.check.ran("mcpKillSwitch", r, "mcp-before-intent", /MCP-TOUCHED/);
      c.check.blocked("mcpKillSwitch", r, "mcp-paused", "mcp-paused.txt", /paused/);
      c.check.allowed("mcpKillSwitch", r, "mcp-resumed", "mcp-resumed.txt");
    },
  },
  {
    id: "unguarded-control",
    title:
      "control: the same early edit with Cohent's hooks not active is written (the file system tells blocked from allowed)",
    rows: ["unguardedControl"],
    async body(c) {
      if (c.client.kind === "claude") {
        // Drop the hooks from the project settings: Claude Code then runs no Cohent hook at all.
        writeFileSync(join(c.ws.repo, ".claude", "settings.json"), "{}\n");
        const r = await c.run([write("early-write", "src/early.ts")]);
        c.check.scriptOk(r, "unguardedControl");
        c.check.allowed("unguardedControl", r, "early-write", "src/early.ts");
      } else {
        // Hooks present but never trusted: Codex skips them silently in exec.
        const r = await c.run([write("early-write", "src/early.ts")], { untrusted: true });
        c.check.scriptOk(r, "unguardedControl");
        c.check.allowed("unguardedControl", r, "early-write", "src/early.ts");
      }
    },
  },
);

/** Scenarios added for issue 15 (commits in a shared checkout). */
SCENARIOS.push({
  id: "shared-checkout",
  title:
    "a peer's staged, unstaged and new files in the tree: the agent's sweeping git commit is refused; commit -m lands only its own file",
  rows: ["gitSweepRefused", "commitOwn"],
  async body(c) {
    await peerHolds(c, "gitSweepRefused", ["docs/guide.md", "src/shared"], {
      session: "bob-session-git",
      prompt: "Rework the guide and the shared helpers",
      record: ["Rework the guide", "guide", "docs"],
    });
    // Bob's work in the shared tree: a staged change with an unstaged one on top, and a new file.
    const git = (...args: string[]) =>
      spawnSync("git", args, {
        cwd: c.ws.repo,
        encoding: "utf8",
        env: { ...process.env, HOME: c.ws.home, GIT_CONFIG_NOSYSTEM: "1" },
      }).stdout;
    writeFileSync(join(c.ws.repo, "docs", "guide.md"), "guide, staged by bob\n");
    git("add", "docs/guide.md");
    writeFileSync(join(c.ws.repo, "docs", "guide.md"), "guide, staged by bob, then edited again\n");
    mkdirSync(join(c.ws.repo, "src", "shared"), { recursive: true });
    writeFileSync(join(c.ws.repo, "src", "shared", "util.ts"), "export const util = 1;\n");
    const base = git("rev-parse", "HEAD").trim();
    const bobBefore = {
      cached: git("diff", "--cached", "--", "docs", "src/shared"),
      diff: git("diff", "--", "docs", "src/shared"),
      untracked: git("ls-files", "--others", "--exclude-standard", "--", "src/shared"),
    };

    const r = await c.run([
      sh("intent", intentCmd()),
      sh("scope", scopeCmd("src/feature")),
      write("own-file", "src/feature/a.ts"),
      sh("sweep", "git add -A && git commit -m 'Add the feature module'"),
      sh("commit", "node .cohent/cohent.mjs commit -m 'Add the feature module'"),
    ]);
    c.check.scriptOk(r, "gitSweepRefused");
    publishedBySelf(c, r);
    c.check.allowed("commitOwn", r, "own-file", "src/feature/a.ts");
    const sweep = r.results.get("sweep")?.output ?? "";
    c.check.expect(
      "gitSweepRefused",
      "sweep: refused, naming bob and his paths, offering commit -m",
      /Cohent: /.test(sweep) &&
        /bob/.test(sweep) &&
        /docs\/guide\.md/.test(sweep) &&
        /src\/shared\/util\.ts/.test(sweep) &&
        /cohent\.mjs commit -m/.test(sweep),
      `tool result: ${clip(sweep, 800)}`,
    );
    c.check.expect(
      "denyReachesModel",
      "sweep: deny reason in the tool result",
      /Cohent: /.test(sweep),
      `tool result: ${clip(sweep)}`,
    );
    c.check.ran("commitOwn", r, "commit", /Committed [0-9a-f]{40}: src\/feature\/a\.ts\./);
    const head = git("rev-parse", "HEAD").trim();
    const files = git("show", "--name-only", "--format=", "HEAD").trim();
    const message = git("log", "-1", "--format=%B");
    c.check.expect(
      "commitOwn",
      "one new commit on the base, holding only src/feature/a.ts",
      git("rev-parse", "HEAD~1").trim() === base && files === "src/feature/a.ts",
      `HEAD ${head}, parent ${git("rev-parse", "HEAD~1").trim()} (base ${base}), files ${JSON.stringify(files)}`,
    );
    c.check.expect(
      "commitOwn",
      "the commit carries Cohent-Intent and Cohent-Person: alice",
      /Cohent-Intent: wki_\w+/.test(message) && /Cohent-Person: alice/.test(message),
      `message: ${clip(message)}`,
    );
    const bobAfter = {
      cached: git("diff", "--cached", "--", "docs", "src/shared"),
      diff: git("diff", "--", "docs", "src/shared"),
      untracked: git("ls-files", "--others", "--exclude-standard", "--", "src/shared"),
    };
    c.check.expect(
      "commitOwn",
      "bob's staged, unstaged and new work exactly as it was",
      JSON.stringify(bobAfter) === JSON.stringify(bobBefore) && bobAfter.cached.includes("staged by bob"),
      `before ${clip(JSON.stringify(bobBefore))}; after ${clip(JSON.stringify(bobAfter))}`,
    );
    const recorded = await c.ws.backend.deps.db.prisma.$transaction((tx) =>
      tx.checkpoint.findMany({ where: { source: `commit:${head}` } }),
    );
    c.check.expect(
      "commitOwn",
      "backend: the commit is a checkpoint of the agent's intent",
      recorded.length === 1 && recorded[0]!.paths === JSON.stringify(["src/feature/a.ts"]),
      `checkpoints: ${clip(JSON.stringify(recorded))}`,
    );
  },
});

function safeJson(s: string): any {
  try {
    return JSON.parse(s);
  } catch {
    return null;
  }
}

/** event → trust state from doctor --json (shape: data.codex.hooks[].{event, trust}). */
function codexHookStates(json: any): Map<string, string> {
  const out = new Map<string, string>();
  const hooks = json?.data?.codex?.hooks;
  if (Array.isArray(hooks))
    for (const h of hooks)
      if (h?.ours !== false && typeof h?.event === "string") out.set(h.event, String(h.trust));
  return out;
}

// ---------------------------------------------------------------- the adapter itself fails

/** The wrapper's line (guard.ts FAIL_CLOSED_REASON, wired by init.ts) and the adapter's deadline refusal (deadline.ts). */
export const WRAPPER_REFUSED = /the guard hook failed/;
export const DEADLINE_REFUSED = /did not reach a verdict/;
/** A shorter deadline keeps the hanging runs quick (the default is 25 s of the wiring's 30 s hook timeout), with room for a loaded machine. */
export const FAST_DEADLINE = { COHENT_HOOK_DEADLINE_MS: "6000" };

export function noLeak(c: Ctx, row: RowId, r: RunResult, ids: string[]): void {
  for (const id of ids) {
    const out = r.results.get(id)?.output ?? "";
    c.check.expect(
      row,
      `${id}: no stack trace or absolute path reached the model`,
      !/\n\s+at |\/(root|home|tmp|Users)\/|cohent-real|\.mjs:\d+/.test(out),
      `tool result: ${clip(out)}`,
    );
  }
}

const adapterFailure = (how: AdapterFailure, row: RowId, reason: RegExp): Scenario => ({
  id: `adapter-${how}`,
  title: `the adapter ${how === "missing" ? "is missing" : how === "throws" ? "throws while loading" : "hangs (no answer, no transport timeout)"} mid-session: edit and shell refused with a reason the model saw; once repaired an edit runs`,
  rows: [row],
  async body(c) {
    const r = await c.run(
      [
        sh("intent", intentCmd()),
        sh("scope", scopeCmd("src/feature")),
        write("before", "src/feature/before.ts"),
        write("broken-edit", "src/feature/broken.ts", () => {
          breakAdapter(c.ws.repo, how);
          // Claude Code 2.1.332's guard runs in the MCP server, which loaded the adapter before it broke
          // and keeps deciding right; without its marks the gate runs the broken command hook again.
          rmSync(join(c.ws.repo, ".cohent", "spawn-free"), { recursive: true, force: true });
        }),
        sh("broken-shell", "echo b > src/feature/broken-shell.txt"),
        write("repaired-edit", "src/feature/repaired.ts", () => restoreAdapter(c.ws.repo)),
      ],
      how === "hangs" ? { env: FAST_DEADLINE } : {},
    );
    c.check.scriptOk(r, row);
    publishedBySelf(c, r);
    c.check.allowed(row, r, "before", "src/feature/before.ts");
    c.check.blocked(row, r, "broken-edit", "src/feature/broken.ts", reason);
    c.check.blocked(row, r, "broken-shell", "src/feature/broken-shell.txt", reason);
    noLeak(c, row, r, ["broken-edit", "broken-shell"]);
    c.check.allowed(row, r, "repaired-edit", "src/feature/repaired.ts");
  },
});

SCENARIOS.push(
  adapterFailure("missing", "adapterMissing", WRAPPER_REFUSED),
  adapterFailure("throws", "adapterThrows", WRAPPER_REFUSED),
  adapterFailure("hangs", "adapterHangs", DEADLINE_REFUSED),
  {
    id: "backend-hangs",
    title:
      "the service accepts connections but never answers: edit and shell refused (transport timeout or the adapter's deadline); once it answers again an edit runs",
    rows: ["backendHangs"],
    async body(c) {
      // The project file points at a black hole for the middle steps: the real backend keeps its state.
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
          // The machine's credential for that address too (credentials are kept per service URL).
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
      ]);
      c.check.scriptOk(r, "backendHangs");
      publishedBySelf(c, r);
      c.check.allowed("backendHangs", r, "before", "src/feature/before.ts");
      c.check.blocked(
        "backendHangs",
        r,
        "hung-edit",
        "src/feature/hung.ts",
        /cannot be reached|did not reach a verdict/,
      );
      c.check.blocked(
        "backendHangs",
        r,
        "hung-shell",
        "src/feature/hung-shell.txt",
        /cannot be reached|did not reach a verdict/,
      );
      c.check.allowed("backendHangs", r, "answering-edit", "src/feature/answering.ts");
    },
  },
  {
    id: "node-missing",
    title:
      "node is not on the PATH the hooks inherit: edit and shell refused with the wrapper's reason; once node is back the agent publishes and an edit runs (Claude Code 2.1.332: its guard's server never started, so the session stays refused)",
    rows: ["nodeMissing"],
    async body(c) {
      const bin = pathWithoutNode(join(c.ws.dir, "no-node-bin"));
      const nodeBack = () => symlinkSync(process.execPath, join(bin, "node"));
      const r = await c.run(
        [
          write("no-node-edit", "src/feature/no-node.ts"),
          sh("no-node-shell", "echo n > src/feature/no-node-shell.txt"),
          sh("intent", intentCmd(), nodeBack),
          sh("scope", scopeCmd("src/feature")),
          write("node-back-edit", "src/feature/node-back.ts"),
        ],
        { env: { PATH: bin } },
      );
      c.check.scriptOk(r, "nodeMissing");
      c.check.blocked("nodeMissing", r, "no-node-edit", "src/feature/no-node.ts", WRAPPER_REFUSED);
      c.check.blocked("nodeMissing", r, "no-node-shell", "src/feature/no-node-shell.txt", WRAPPER_REFUSED);
      noLeak(c, "nodeMissing", r, ["no-node-edit", "no-node-shell"]);
      if (
        c.client.kind === "claude" &&
        honoursOnFailure({ name: "claude-code", version: c.client.version })
      ) {
        // Its guard's MCP server could not start without node, and Claude Code does not start it
        // again in the session: every call stays refused until /mcp reconnects it or a new session.
        const out = r.results.get("node-back-edit")?.output ?? "";
        c.check.expect(
          "nodeMissing",
          "node-back-edit: still refused, the guard's server not connected (Claude Code's own words)",
          !fileExists(c.ws, "src/feature/node-back.ts") && /MCP server 'cohent' not connected/.test(out),
          `tool result: ${clip(out)}`,
        );
      } else {
        publishedBySelf(c, r);
        c.check.allowed("nodeMissing", r, "node-back-edit", "src/feature/node-back.ts");
      }
      rmSync(join(bin, "node"), { force: true });
    },
  },
);

// ---------------------------------------------------------------- Claude Code sub-agents

const subagent = (background: boolean): Scenario => ({
  id: `subagent-${background ? "background" : "foreground"}`,
  title: `Claude Code: a ${background ? "background" : "foreground"} sub-agent works under the parent's intent and scope${background ? "; the main agent's Stop comes first and must not complete the intent" : ""}`,
  only: "claude",
  rows: [background ? "subagentBackground" : "subagentForeground"],
  async body(c) {
    const row: RowId = background ? "subagentBackground" : "subagentForeground";
    const spawn: Step = {
      id: "spawn",
      action: {
        kind: "claude-call",
        name: "Agent",
        input: {
          description: "Write the feature module",
          prompt: `${SUBAGENT_MARK}: write src/feature/sub.ts`,
          subagent_type: "general-purpose",
          run_in_background: background,
        },
      },
    };
    const r = await c.run([sh("intent", intentCmd()), sh("scope", scopeCmd("src/feature")), spawn], {
      subSteps: [write("sub-in", "src/feature/sub.ts"), write("sub-out", "docs/sub.md")],
    });
    c.check.scriptOk(r, row);
    publishedBySelf(c, r);
    c.check.allowed(row, r, "sub-in", "src/feature/sub.ts");
    c.check.blocked(row, r, "sub-out", "docs/sub.md", /outside your declared scope/);
    // The intent completes once the sub-agent has stopped, not before (a completed intent would have refused sub-in).
    const intents = await agentIntents(c.ws);
    const mine = intents.find((i) => i.record?.objective === "Add the feature module");
    c.check.expect(
      row,
      "backend: the intent completed after the sub-agent stopped, touching its write",
      !!mine &&
        mine.state === "completed" &&
        mine.checkpoints.some((k) => k.status === "completed" && !!k.paths?.includes("src/feature/sub.ts")),
      `intent: ${clip(JSON.stringify(mine ?? null), 800)}`,
    );
  },
});

SCENARIOS.push(subagent(false), subagent(true));

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Whether the version wakes a background sub-agent whose turn ended while a
 * background command of its own ran, when that command ends (measured with
 * `subagent-late`: 2.1.332 does, after the sub-agent's SubagentStop and the
 * parent's task-notification turn; 2.1.197 leaves it stopped).
 */
const WAKES_SUBAGENT: Record<string, boolean> = { "2.1.197": false, "2.1.332": true };

SCENARIOS.push({
  id: "subagent-late",
  title:
    "Claude Code: a background sub-agent writes seconds after the parent's final answer, and (2.1.332) again after it is woken by its own background command: in scope runs, outside is refused for the scope, the intent completes after its last stop",
  only: "claude",
  rows: ["subagentLate"],
  async body(c) {
    const row: RowId = "subagentLate";
    const wakes = WAKES_SUBAGENT[c.client.version] ?? true;
    const spawn: Step = {
      id: "spawn",
      action: {
        kind: "claude-call",
        name: "Agent",
        input: {
          description: "Write the feature module",
          prompt: `${SUBAGENT_MARK}: write src/feature/sub.ts`,
          subagent_type: "general-purpose",
          run_in_background: true,
        },
      },
    };
    const bash = (id: string, command: string): Step => ({
      id,
      action: {
        kind: "claude-call",
        name: "Bash",
        input: { command, description: id, run_in_background: true },
      },
    });
    const r = await c.run(
      [
        sh("intent", intentCmd()),
        sh("scope", scopeCmd("src/feature")),
        // 2.1.332: keeps `claude -p` running past the sub-agent's own background command, so that the wake
        // is certain (with nothing else running, `-p` exited first in one run of two). 2.1.197 wakes no
        // sub-agent, and with a command of the parent's still running it exits without a SessionEnd.
        ...(wakes ? [bash("main-wait", "sleep 18")] : []),
        spawn,
      ],
      {
        subSteps: [
          // The model answers the sub-agent's first request 6 s late: well after the parent's final answer and Stop.
          write("sub-in", "src/feature/sub.ts", () => sleep(6000)),
          write("sub-out", "docs/sub.md"),
          bash("sub-bg", "sleep 4"),
          { id: "sub-idle", action: { kind: "end-turn", text: "Waiting for the background command." } },
          // Only on a version that wakes the sub-agent when sub-bg ends (after its SubagentStop).
          write("sub-in-2", "src/feature/sub2.ts"),
          write("sub-out-2", "docs/sub2.md"),
        ],
        hookLog: true,
      },
    );
    const timeline = `hooks:\n${hookTimeline(r.hooks)}`;
    if (process.env.COHENT_CLIENTS_DEBUG)
      console.error(
        `[${c.client.label}] exit ${r.code} after ${r.ms} ms; ${timeline}\nstdout: ${r.stdout.slice(-600)}`,
      );
    c.check.scriptOk(r, row);
    publishedBySelf(c, r);
    const mainStop = r.hooks.find((h) => h.event === "Stop" && !h.agentId);
    const firstSubWrite = r.hooks.find((h) => h.event === "PreToolUse" && h.agentId && h.tool === "Write");
    c.check.expect(
      row,
      "the sub-agent's first write comes at least 4 s after the parent's final answer (its Stop)",
      !!mainStop && !!firstSubWrite && firstSubWrite.ms - mainStop.ms >= 4000,
      clip(timeline, 2000),
    );
    c.check.allowed(row, r, "sub-in", "src/feature/sub.ts");
    c.check.blocked(row, r, "sub-out", "docs/sub.md", /outside your declared scope/);
    const stops = r.hooks.filter((h) => h.event === "SubagentStop");
    if (wakes) {
      c.check.expect(
        row,
        "the sub-agent was woken after its SubagentStop (two SubagentStops)",
        stops.length >= 2,
        clip(timeline, 2000),
      );
      c.check.allowed(row, r, "sub-in-2", "src/feature/sub2.ts");
      c.check.blocked(row, r, "sub-out-2", "docs/sub2.md", /outside your declared scope/);
    } else {
      c.check.expect(
        row,
        "this version leaves the sub-agent stopped (its woken steps never run)",
        !r.results.has("sub-in-2") && !r.results.has("sub-out-2") && stops.length === 1,
        clip(timeline, 2000),
      );
    }
    // Completed once, after the sub-agent's last SubagentStop: a completion before would have refused its later writes.
    const intents = await agentIntents(c.ws);
    const mine = intents.find((i) => i.record?.objective === "Add the feature module");
    const done = mine?.checkpoints.filter((k) => k.status === "completed") ?? [];
    // Its last tool call, not its SubagentStop: the hook that logs an event and ours run side by side.
    const lastCall = r.hooks
      .filter((h) => h.agentId && h.event !== "SubagentStop" && h.event !== "SubagentStart")
      .at(-1);
    c.check.expect(
      row,
      "backend: the intent completed after the sub-agent's last call, touching its writes",
      !!mine &&
        mine.state === "completed" &&
        done.length === 1 &&
        !!lastCall &&
        done[0]!.at > lastCall.at &&
        ["src/feature/sub.ts", ...(wakes ? ["src/feature/sub2.ts"] : [])].every((p) =>
          done[0]!.paths?.includes(p),
        ),
      `intent: ${clip(JSON.stringify(mine ?? null), 800)}; the sub-agent's last call at ${lastCall?.at}`,
    );
  },
});

// ---------------------------------------------------------------- Cohent's MCP server inside the real clients

SCENARIOS.push({
  id: "mcp-cohent",
  title:
    "Cohent's MCP server, wired as init prints it (Claude: .mcp.json; Codex: config.toml, workspace-write sandbox): intent and scope over MCP, an edit in scope runs, scope while paused is refused",
  rows: ["mcpCohent"],
  async body(c) {
    // The entries exactly as `init --mcp-write` writes them.
    const init = spawnSync(
      "node",
      [".cohent/cohent.mjs", "init", "--server", c.ws.backend.url, "--repo", "acme/demo", "--mcp-write"],
      { cwd: c.ws.repo, encoding: "utf8", env: { PATH: process.env.PATH, HOME: c.ws.home } },
    );
    c.check.expect(
      "mcpCohent",
      "init --mcp-write wrote the MCP entries",
      init.status === 0,
      clip(init.stderr + init.stdout),
    );
    const record = JSON.parse(intentRecord("Add the feature module over MCP", "feature-module", "feature"));
    const call = (
      id: string,
      tool: string,
      args: Record<string, unknown>,
      before?: Step["before"],
    ): Step => ({
      id,
      action:
        c.client.kind === "codex"
          ? {
              kind: "codex-item",
              item: {
                type: "function_call",
                id: `fc_${id}`,
                namespace: "mcp__cohent",
                name: tool,
                arguments: JSON.stringify(args),
              },
            }
          : { kind: "claude-call", name: `mcp__cohent__${tool}`, input: args },
      ...(before ? { before } : {}),
    });
    const search: Step[] =
      c.client.kind === "codex"
        ? [
            {
              id: "tool-search",
              action: {
                kind: "codex-item",
                item: {
                  type: "tool_search_call",
                  id: "ts_1",
                  execution: "client",
                  status: "completed",
                  arguments: { query: "cohent intent scope", limit: 8 },
                },
              },
            },
          ]
        : [];
    const steps = [
      ...search,
      call("mcp-intent", "intent", { intent: record }),
      call("mcp-scope", "scope", { paths: ["src/feature"] }),
      write("in-scope", "src/feature/mcp.ts"),
      write("out-of-scope", "docs/mcp.md"),
      call("mcp-scope-paused", "scope", { paths: ["src/other"] }, () => control(c.ws, "pause")),
    ];
    let r: RunResult;
    if (c.client.kind === "codex") {
      const toml = readFileSync(join(c.ws.repo, ".codex", "config.toml"), "utf8");
      // codex exec never asks: an MCP tool runs only when its server's tools are pre-approved.
      r = await c.run(steps, { codexToml: `\n${toml.trimEnd()}\ndefault_tools_approval_mode = "approve"\n` });
    } else {
      r = await c.run(steps, {
        claudeMcp: {
          config: join(c.ws.repo, ".mcp.json"),
          tools: ["mcp__cohent__intent", "mcp__cohent__scope", "mcp__cohent__context"],
        },
      });
    }
    c.check.scriptOk(r, "mcpCohent");
    if (c.client.kind === "codex") c.check.ran("mcpCohent", r, "tool-search", /mcp__cohent/);
    c.check.ran("mcpCohent", r, "mcp-intent", /proceed|parallel/);
    c.check.ran("mcpCohent", r, "mcp-scope", /src\/feature/);
    c.check.allowed("mcpCohent", r, "in-scope", "src/feature/mcp.ts");
    c.check.blocked("mcpCohent", r, "out-of-scope", "docs/mcp.md", /outside your declared scope/);
    const paused = r.results.get("mcp-scope-paused")?.output ?? "";
    if (process.env.COHENT_CLIENTS_DEBUG)
      console.error(
        `[${c.client.label}] mcp-scope-paused:`,
        paused,
        "\nmcp-intent:",
        r.results.get("mcp-intent")?.output,
      );
    // The hook lets Cohent's own MCP tools through; the service itself refuses the paused session's call.
    c.check.expect(
      "mcpCohent",
      "mcp-scope-paused: refused by the service (SESSION_PAUSED)",
      /"ok":false/.test(paused) && /SESSION_PAUSED/.test(paused),
      `tool result: ${clip(paused)}`,
    );
  },
});
