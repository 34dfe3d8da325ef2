// A stale write refused across agents and clients (issue 50 item 3, adapter/src/guard/stale-write.ts),
// in the real clients. One definition for every client kind, like scenarios-shell.ts; it adds itself
// to both lists when imported (suite.ts, report.ts).
//
// src/shared/table.ts is committed. The agent publishes its intent and reads the file with its own
// read tool (Codex, which has none, with `cat`). Then bo, a second session in the same checkout driven
// through the checkout's built hook as Claude Code (another client), claims the file, rewrites line 5
// with its Write tool and completes. The agent's whole-file write (its edit tool) and a shell write
// naming the file (`printf > file`) are refused naming bo's session and line 5, and the file keeps
// bo's bytes; the agent reads the file again and the same shell write runs.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentRuns, claude, hook, type Checkout } from "../adapter/helpers.ts";
import { fileExists, readRepoFile } from "./harness.ts";
import { MORE_SCENARIOS } from "./scenarios-more.ts";
import {
  clip,
  intentCmd,
  INTENT_OK,
  SCENARIOS,
  sh,
  write,
  type Ctx,
  type Scenario,
  repoGit,
} from "./scenarios.ts";
import type { Action, Step } from "./script.ts";

const ROW = "staleWrite" as const;
const FILE = "src/shared/table.ts";
const TEXT = Array.from({ length: 12 }, (_, i) => `export const v${i} = ${i};\n`).join("");
/** bo's change: line 5 only. */
const BOS = TEXT.replace("v4 = 4", 'v4 = "bo"');
const AGENTS = "agent\n";
const SHELL_WRITE = `printf 'agent\\n' > ${FILE}`;

/** The file committed, so every client can read it. */
function setUp(c: Ctx): void {
  mkdirSync(join(c.ws.repo, "src", "shared"), { recursive: true });
  writeFileSync(join(c.ws.repo, FILE), TEXT);
  repoGit(c, "add", FILE);
  repoGit(c, "commit", "-q", "-m", "the shared table");
}

/** The agent's read, in its client's own read tool (Codex has none: a shell `cat`, recorded by the shell watch). */
function readStep(c: Ctx, id: string): Step {
  const abs = join(c.ws.repo, FILE);
  const action: Action | null =
    c.client.kind === "claude"
      ? { kind: "claude-call", name: "Read", input: { file_path: abs } }
      : c.client.kind === "gemini"
        ? { kind: "tool", name: "read_file", args: { file_path: abs } }
        : c.client.kind === "opencode"
          ? { kind: "tool", name: "read", args: { filePath: abs } }
          : c.client.kind === "copilot"
            ? { kind: "tool", name: "view", args: { path: abs } }
            : null;
  return action ? { id, action } : sh(id, `cat ${FILE}`);
}

/**
 * bo, in the same checkout through its built hook as Claude Code, with his own token and session:
 * publishes, claims the file, rewrites it with Write (PreToolUse, the write, PostToolUse, which
 * journals it), completes. No warm guard: nothing of his outlives the step.
 */
async function bosEdit(c: Ctx, session: string): Promise<void> {
  const home = join(c.ws.dir, "bo-home");
  mkdirSync(home, { recursive: true });
  const co: Checkout = { root: c.ws.repo, home, script: join(c.ws.repo, ".cohent", "cohent.mjs") };
  const env = { ...claude.env, COHENT_AGENT_TOKEN: c.ws.bobToken, COHENT_SESSION: session, COHENT_WARM: "0" };
  const must = (ok: boolean, what: string, detail: string) => {
    if (!ok) throw new Error(`bo: ${what}: ${clip(detail, 600)}`);
  };
  await hook(co, claude.prompt(session, co.root, "Rework the shared table"), env);
  const intent = JSON.stringify({
    objective: "Rework the shared table",
    plan: ["rewrite line 5"],
    components: ["shared"],
    dependsOn: [],
    deferred: [],
    outputs: ["shared-table"],
    blockers: [],
    requires: [],
    capabilities: [],
    state: "planned",
  });
  for (const args of [
    ["intent", intent],
    ["scope", FILE],
  ]) {
    const r = await agentRuns(co, claude, session, args, { env });
    must(r.cmd?.code === 0, args[0]!, `${r.pre.denied ?? ""} ${r.cmd?.stdout ?? ""} ${r.cmd?.stderr ?? ""}`);
  }
  const payload = (event: string) => ({
    ...claude.write(session, co.root, join(co.root, FILE), event),
    tool_use_id: "toolu_bo",
  });
  const pre = await hook(co, payload("PreToolUse"), env);
  must(pre.denied === null, "Write refused", pre.denied ?? pre.stderr);
  writeFileSync(join(co.root, FILE), BOS);
  await hook(co, payload("PostToolUse"), env);
  const done = await agentRuns(co, claude, session, ["checkpoint", "completed", "table done"], { env });
  must(done.cmd?.code === 0, "checkpoint", `${done.pre.denied ?? ""} ${done.cmd?.stderr ?? ""}`);
}

export const STALE_WRITE: Scenario = {
  id: "stale-write",
  title:
    "the agent reads src/shared/table.ts; bo (Claude Code, same checkout) rewrites its line 5 and completes; the agent's whole-file write and `printf > file` are refused naming bo's session and line 5, the file keeps bo's bytes; read again, the shell write runs",
  rows: [ROW],
  async body(c) {
    setUp(c);
    const bo = `bo-stale-${Math.random().toString(36).slice(2, 8)}`;
    const held = () => (fileExists(c.ws, FILE) ? readRepoFile(c.ws, FILE) : "(missing)");
    const after: Record<string, string> = {};
    const take = (id: string) => () => void (after[id] = held());
    const steps: Step[] = [
      sh("intent", intentCmd()),
      readStep(c, "read"),
      // Claude Code's own Write refuses a file changed since it read it, before any hook: its edit
      // form never reaches the guard, so its first stale write is the shell's `cat >`.
      c.client.kind === "claude"
        ? sh("stale-edit", `cat > ${FILE} <<'EOF'\nagent\nEOF`, () => bosEdit(c, bo))
        : write("stale-edit", FILE, () => bosEdit(c, bo)),
      sh("stale-shell", SHELL_WRITE, take("stale-edit")),
      { ...readStep(c, "read-again"), before: take("stale-shell") },
      sh("fresh-shell", SHELL_WRITE),
    ];
    const r = await c.run(steps);
    c.check.scriptOk(r, ROW);
    c.check.ran(ROW, r, "intent", INTENT_OK);
    for (const id of ["stale-edit", "stale-shell"]) {
      const out = r.results.get(id)?.output ?? "";
      c.check.expect(
        ROW,
        `${id}: refused as stale, naming bo's session and line 5, telling to read again`,
        out.includes(bo) && out.includes(`line 5 of ${FILE}`) && out.includes(`Read ${FILE} again`),
        `tool result: ${clip(out, 700)}`,
      );
      c.check.expect(ROW, `${id}: ${FILE} keeps bo's bytes`, after[id] === BOS, JSON.stringify(after[id]));
    }
    const fresh = r.results.get("fresh-shell")?.output ?? "";
    c.check.expect(
      ROW,
      "read again: the same shell write runs",
      held() === AGENTS,
      `${FILE}: ${JSON.stringify(held())}; tool result: ${clip(fresh)}`,
    );
  },
};

SCENARIOS.push(STALE_WRITE);
MORE_SCENARIOS.push(STALE_WRITE);
