// Spawn-free hooks in the real Claude Code (issue #44 items 1 and 2). `cohent init` wires
// PreToolUse/PostToolUse as an `mcp_tool` handler (Cohent's stdio MCP server, `"onFailure": "block"`)
// plus a shell-only gate that runs the full command hook unless the server marked the session
// (`.cohent/spawn-free/<session>.<Claude Code's pid>`). These scenarios check, on 2.1.332 (honours
// onFailure) and 2.1.197 (ignores it): the guard's decisions, that no hook node runs per call once the
// session is marked, every way the MCP server can fail, and a pause reaching the MCP path.
// Imported by suite.ts; it pushes itself onto SCENARIOS (Claude only).
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { control, fileExists, readRepoFile, type RunResult } from "../harness.ts";
import {
  clip,
  intentCmd,
  INTENT_OK,
  peerHolds,
  SCENARIOS,
  scopeCmd,
  sh,
  write,
  type Ctx,
  type RowId,
} from "../scenarios.ts";
import type { Step } from "../script.ts";
import {
  chainText,
  dropGates,
  dropMcpEntry,
  gateOf,
  isHookNode,
  isServerNode,
  marks,
  nodeWrapper,
  readNodeLog,
  setMcpTimeout,
  setStandinMode,
  standinLog,
  useStandin,
} from "./lib.ts";

/** Claude Code honours `"onFailure": "block"` on an mcp_tool handler from 2.1.332 (docs/clients.md). */
function honoursOnFailure(version: string): boolean {
  const [a, b, c] = version.split(".").map(Number) as [number, number, number];
  return a !== 2 ? a > 2 : b !== 1 ? b > 1 : c >= 332;
}

/** What the peer's path holds before the run: bob's file there, for the Edit tool. */
const PEER_FILE = "src/shared/util.ts";
const PEER_CONTENT = "export const shared = 1;\n";
const BOB = /overlaps the scope of bob/;

const edit = (id: string, abs: string, from: string, to: string, before?: Step["before"]): Step => ({
  id,
  action: { kind: "claude-call", name: "Edit", input: { file_path: abs, old_string: from, new_string: to } },
  ...(before ? { before } : {}),
});

/** The workspace's logging `node` (first on PATH) and the env a run needs for it. */
function wrapped(c: Ctx): { env: NodeJS.ProcessEnv; log: string } {
  const log = join(c.ws.dir, `node-starts-${Date.now()}.log`);
  const bin = nodeWrapper(join(c.ws.dir, `wrap-bin-${Date.now()}`), log);
  return { env: { PATH: `${bin}:${process.env.PATH}` }, log };
}

function peerFile(c: Ctx): void {
  mkdirSync(join(c.ws.repo, "src", "shared"), { recursive: true });
  writeFileSync(join(c.ws.repo, PEER_FILE), PEER_CONTENT);
}

/** The peer's file unchanged and bob named in the tool result of `stepId`. */
function peerEditRefused(c: Ctx, row: RowId, r: RunResult, stepId: string): void {
  const now = readRepoFile(c.ws, PEER_FILE);
  c.check.expect(
    row,
    `${stepId}: ${PEER_FILE} unchanged`,
    now === PEER_CONTENT,
    `now ${JSON.stringify(now)}`,
  );
  const out = r.results.get(stepId)?.output ?? "";
  c.check.expect(
    row,
    `${stepId}: reason names bob`,
    /Cohent: /.test(out) && BOB.test(out),
    `tool result: ${clip(out)}`,
  );
}

/** A call refused by the client because the mcp_tool handler failed: no file, an error result reached the model. */
function refusedByHandler(c: Ctx, row: RowId, r: RunResult, stepId: string, file: string | null): void {
  const res = r.results.get(stepId);
  if (file)
    c.check.expect(
      row,
      `${stepId}: ${file} not written`,
      !fileExists(c.ws, file),
      `${file} exists: the call ran`,
    );
  c.check.expect(
    row,
    `${stepId}: refused (an error result reached the model)`,
    !!res && res.isError === true && !INTENT_OK.test(res.output) && !/Scope claimed/.test(res.output),
    res ? `tool result (isError ${res.isError}): ${clip(res.output)}` : "no tool result",
  );
}

const ROW_GUARD: RowId = "spawnFreeGuard";
const ROW_SPAWN: RowId = "spawnFreeNoSpawn";
const ROW_FAILS: RowId = "spawnFreeFails";
const ROW_PAUSE: RowId = "spawnFreePause";

// ---------------------------------------------------------------- decisions and process count

SCENARIOS.push({
  id: "spawn-free-guard",
  title:
    "init's wiring (mcp_tool + gate): a peer holds src/shared; Write and Edit there refused naming bob, in-scope Write and Edit run; on 2.1.332 no hook node per PreToolUse/PostToolUse after the first call (the mark's pid is the gate's $PPID), on 2.1.197 the gate runs the command hook every time",
  only: "claude",
  rows: [ROW_GUARD, ROW_SPAWN],
  async body(c) {
    peerFile(c);
    await peerHolds(c, ROW_GUARD, ["src/shared"]);
    const abs = (rel: string) => join(c.ws.repo, rel);
    const steps: Step[] = [
      // No scope of its own: a path outside bob's is allowed, bob's is refused naming him (as peer-overlap).
      sh("intent", intentCmd()),
      write("in-1", "src/feature/a.ts"),
      write("peer-write", "src/shared/new.ts"),
      {
        id: "peer-read",
        action: { kind: "claude-call", name: "Read", input: { file_path: abs(PEER_FILE) } },
      },
      edit("peer-edit", abs(PEER_FILE), "shared = 1", "shared = 2"),
      write("in-2", "src/feature/b.ts"),
      edit("in-edit", abs("src/feature/a.ts"), "in-1", "edited"),
      write("in-3", "src/feature/c.ts"),
    ];
    const { env, log } = wrapped(c);
    const r = await c.run(steps, { env, hookLog: true });
    c.check.scriptOk(r, ROW_GUARD);
    c.check.ran(ROW_GUARD, r, "intent", INTENT_OK);
    c.check.allowed(ROW_GUARD, r, "in-1", "src/feature/a.ts");
    c.check.blocked(ROW_GUARD, r, "peer-write", "src/shared/new.ts", BOB);
    peerEditRefused(c, ROW_GUARD, r, "peer-edit");
    c.check.allowed(ROW_GUARD, r, "in-2", "src/feature/b.ts");
    c.check.allowed(ROW_GUARD, r, "in-3", "src/feature/c.ts");
    const a = fileExists(c.ws, "src/feature/a.ts") ? readRepoFile(c.ws, "src/feature/a.ts") : "(missing)";
    c.check.expect(
      ROW_GUARD,
      "in-edit: src/feature/a.ts edited",
      a === "edited\n",
      `content ${JSON.stringify(a)}`,
    );

    // Who ran: every node start, with its process tree.
    const starts = readNodeLog(log);
    const servers = starts.filter(isServerNode);
    const hooks = starts.filter(isHookNode);
    const gated = hooks.flatMap((h) => {
      const g = gateOf(h);
      return g ? [{ h, ...g }] : [];
    });
    const m = marks(c.ws.repo);
    // The PreToolUse and PostToolUse events that fired (a refused call has no PostToolUse), as a logging hook heard them.
    const events = r.hooks.filter((h) => h.event === "PreToolUse" || h.event === "PostToolUse").length;
    const tree = [
      `server: ${servers.map((s) => "\n" + chainText(s)).join("\n")}`,
      `first gate-spawned hook: ${gated[0] ? "\n" + chainText(gated[0].h) : "(none)"}`,
      `marks: ${JSON.stringify(m)}`,
      `hook nodes: ${hooks.length} in all, ${gated.length} started by a gate, for ${events} PreToolUse/PostToolUse events`,
    ].join("\n");
    if (process.env.COHENT_CLIENTS_DEBUG) console.error(`[${c.client.label}] spawn-free-guard\n${tree}`);
    c.check.expect(ROW_SPAWN, "the MCP server started once", servers.length === 1, tree);
    if (honoursOnFailure(c.client.version)) {
      const serverParent = servers[0]?.chain[1]?.pid;
      c.check.expect(
        ROW_SPAWN,
        "the server marked the session with its parent's pid (Claude Code)",
        m.length === 1 && m[0]!.ppid === serverParent,
        tree,
      );
      c.check.expect(
        ROW_SPAWN,
        "the gate's $PPID is the pid in the mark",
        gated.every((g) => m.some((k) => k.ppid === g.gatePpid)),
        `gate $PPIDs ${JSON.stringify([...new Set(gated.map((g) => g.gatePpid))])} vs marks ${JSON.stringify(m)}\n${tree}`,
      );
      // The first call's PreToolUse (and, when it raced the mark, its PostToolUse) may still go to the command hook.
      c.check.expect(
        ROW_SPAWN,
        `at most 2 of the ${events} PreToolUse/PostToolUse gates ran the command hook`,
        gated.length <= 2,
        `${gated.length} gate-spawned hook nodes (of ${hooks.length} hook nodes in all)\n${tree}`,
      );
    } else {
      c.check.expect(
        ROW_SPAWN,
        "2.1.197: no mark (the server answered {} and left the call to the gate)",
        m.length === 0,
        tree,
      );
      c.check.expect(
        ROW_SPAWN,
        `2.1.197: every one of the ${events} PreToolUse/PostToolUse gates ran the command hook`,
        events > 0 && gated.length === events,
        `${gated.length} gate-spawned hook nodes\n${tree}`,
      );
    }
  },
});

// ---------------------------------------------------------------- the MCP server failing

interface FailMode {
  id: string;
  title: string;
  /** Broken from the start (the whole session) or from a step on (mid-session, after two good edits). */
  whole: boolean;
  setup(repo: string): void;
  /** Mid-session: what breaks it, run just before the step after in-1. */
  breakIt?: (repo: string) => void;
}

const FAIL_MODES: FailMode[] = [
  {
    id: "spawn-free-no-server",
    title: "the MCP server not configured (no `cohent` in .mcp.json)",
    whole: true,
    setup: (repo) => dropMcpEntry(repo),
  },
  {
    id: "spawn-free-mcp-file-missing",
    title: ".cohent/cohent-mcp.mjs deleted (the server fails to load)",
    whole: true,
    setup: (repo) => rmSync(join(repo, ".cohent", "cohent-mcp.mjs")),
  },
  {
    id: "spawn-free-exits-at-start",
    title: "the MCP server exits at start, every time",
    whole: true,
    setup: (repo) => useStandin(repo, "startfail"),
  },
  {
    id: "spawn-free-connects-late",
    title: "the MCP server still connecting (answers initialize 25 s late; handler timeout 4 s)",
    whole: true,
    setup: (repo) => {
      useStandin(repo, "late:25000");
      setMcpTimeout(repo, 4);
    },
  },
  {
    id: "spawn-free-dies-in-call",
    title: "the MCP server crashes during the hook call (and again after each restart)",
    whole: false,
    setup: (repo) => useStandin(repo, "healthy"),
    breakIt: (repo) => setStandinMode(repo, "die"),
  },
  {
    id: "spawn-free-hangs",
    title: "the MCP server hangs in the hook call past the handler's timeout (4 s)",
    whole: false,
    setup: (repo) => {
      useStandin(repo, "healthy");
      setMcpTimeout(repo, 4);
    },
    breakIt: (repo) => setStandinMode(repo, "hang"),
  },
];

for (const mode of FAIL_MODES)
  SCENARIOS.push({
    id: mode.id,
    title: `${mode.title}: 2.1.332 refuses every call from then on (even an in-scope write the command hook allows); 2.1.197's gate still refuses the peer's path and lets in-scope edits run`,
    only: "claude",
    rows: [ROW_FAILS],
    async body(c) {
      await peerHolds(c, ROW_FAILS, ["src/shared"]);
      mode.setup(c.ws.repo);
      const honours = honoursOnFailure(c.client.version);
      const steps: Step[] = [
        sh("intent", intentCmd()),
        write("in-1", "src/feature/a.ts"),
        write("in-2", "src/feature/b.ts", mode.breakIt ? () => mode.breakIt!(c.ws.repo) : undefined),
        write("peer-write", "src/shared/new.ts"),
      ];
      const { env } = wrapped(c);
      const r = await c.run(steps, { env });
      if (process.env.COHENT_CLIENTS_DEBUG)
        console.error(
          `[${c.client.label}] ${mode.id}:\n` +
            [...r.results]
              .map(([k, v]) => `  ${k} (isError ${v.isError}): ${clip(v.output, 300)}`)
              .join("\n") +
            `\n  standin: ${JSON.stringify(standinLog(c.ws.repo)).slice(0, 1500)}`,
        );
      c.check.expect(
        ROW_FAILS,
        "client run finished",
        r.code === 0 && r.scriptErrors.length === 0,
        `exit ${r.code}; stderr ${clip(r.stderr, 400)}`,
      );
      if (honours && mode.whole) {
        // The command hook lets `node .cohent/cohent.mjs intent` through before any intent: a refusal is the handler's.
        refusedByHandler(c, ROW_FAILS, r, "intent", null);
        refusedByHandler(c, ROW_FAILS, r, "in-1", "src/feature/a.ts");
        refusedByHandler(c, ROW_FAILS, r, "in-2", "src/feature/b.ts");
      } else {
        c.check.ran(ROW_FAILS, r, "intent", INTENT_OK);
        c.check.allowed(ROW_FAILS, r, "in-1", "src/feature/a.ts");
        // Mid-session on 2.1.332: the command hook would allow in-2; only the failed handler refuses it.
        if (honours) refusedByHandler(c, ROW_FAILS, r, "in-2", "src/feature/b.ts");
        else c.check.allowed(ROW_FAILS, r, "in-2", "src/feature/b.ts");
      }
      c.check.expect(
        ROW_FAILS,
        "peer-write: src/shared/new.ts not written",
        !fileExists(c.ws, "src/shared/new.ts"),
      );
      if (!honours) {
        const out = r.results.get("peer-write")?.output ?? "";
        c.check.expect(
          ROW_FAILS,
          "peer-write: bob named (the gate's command hook)",
          BOB.test(out),
          `tool result: ${clip(out)}`,
        );
      } else refusedByHandler(c, ROW_FAILS, r, "peer-write", "src/shared/new.ts");
    },
  });

// ---------------------------------------------------------------- pause over the MCP path

SCENARIOS.push({
  id: "spawn-free-pause",
  title:
    "a pause from the API refuses the next edit and shell call: on 2.1.332 through the mcp_tool handler alone (the gates removed in this checkout), on 2.1.197 through init's wiring",
  only: "claude",
  rows: [ROW_PAUSE],
  async body(c) {
    const honours = honoursOnFailure(c.client.version);
    if (honours) dropGates(c.ws.repo);
    const { env } = wrapped(c);
    const r = await c.run(
      [
        sh("intent", intentCmd()),
        sh("scope", scopeCmd("src/feature")),
        write("before-pause", "src/feature/one.ts"),
        write("paused-edit", "src/feature/paused.ts", () => control(c.ws, "pause")),
        sh("paused-shell", "echo p > src/feature/paused-shell.txt"),
        write("resumed-edit", "src/feature/resumed.ts", () => control(c.ws, "resume")),
      ],
      { env },
    );
    if (process.env.COHENT_CLIENTS_DEBUG)
      console.error(
        `[${c.client.label}] spawn-free-pause:\n` +
          [...r.results].map(([k, v]) => `  ${k} (isError ${v.isError}): ${clip(v.output, 300)}`).join("\n"),
      );
    c.check.scriptOk(r, ROW_PAUSE);
    c.check.ran(ROW_PAUSE, r, "intent", INTENT_OK);
    c.check.allowed(ROW_PAUSE, r, "before-pause", "src/feature/one.ts");
    c.check.blocked(ROW_PAUSE, r, "paused-edit", "src/feature/paused.ts", /paused/);
    c.check.blocked(ROW_PAUSE, r, "paused-shell", "src/feature/paused-shell.txt", /paused/);
    c.check.allowed(ROW_PAUSE, r, "resumed-edit", "src/feature/resumed.ts");
  },
});
