// Nothing silent between calls (issue 49 item 3, scenario `background-write`), one
// definition for every client kind, like scenarios-shell.ts: Codex and Claude Code
// (scenarios.ts's list) and Copilot CLI, Gemini CLI, OpenCode (scenarios-more.ts's
// list). It adds itself to both lists when imported; suite.ts and report.ts import it.
//
// bob holds src/shared with uncommitted work in src/shared/util.ts. The agent
// publishes its intent and starts `nohup sh docs/late.sh >/dev/null 2>&1 &`: the
// call ends at once, and the job writes bob's file two seconds later, between the
// agent's calls. Its next call (`ls src`) is made only once the file has changed.
// The write must be caught and told: the model reads it in a request before it
// asks for `restore` (Claude Code, Codex: the next call's hooks; Gemini: AfterTool
// context; OpenCode: appended to a tool's result; Copilot reads no PostToolUse
// answer, so a call after that one is scripted too), `node .cohent/cohent.mjs
// restore src/shared/util.ts` brings bob's bytes back, and bob's next poll
// carries a notice naming the file. The file's content decides.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileExists, readRepoFile } from "./harness.ts";
import { MORE_SCENARIOS } from "./scenarios-more.ts";
import {
  clip,
  intentCmd,
  INTENT_OK,
  peerHolds,
  SCENARIOS,
  sh,
  write,
  type Ctx,
  type Scenario,
  repoGit,
} from "./scenarios.ts";
import type { Step } from "./script.ts";

const HELD = "src/shared/util.ts";
const COMMITTED = "export const shared = 1;\n";
const BOB = 'export const shared = "bob: half-done helpers";\n';
/** Two seconds after the call that started it, the job writes bob's file (its path built at run time). */
const LATE = 'sleep 2\np=src/shared\necho late > "$p/util.ts"\n';
const LATE_BYTES = "late\n";
const START = "nohup sh docs/late.sh >/dev/null 2>&1 &";
/**
 * Codex: under its default sandbox (workspace-write) no process a command started outlives the call
 * (measured, 0.169.0 and 0.171.0: the job never wrote, with `setsid` too), so no background write can
 * happen there. Under danger-full-access the job outlives it once it has left the call's session
 * (`setsid`) and the call has lasted a moment (without `sleep 0.5` it never wrote either).
 */
const START_CODEX = "setsid nohup sh docs/late.sh >/dev/null 2>&1 & sleep 0.5";
const RESTORE = `node .cohent/cohent.mjs restore ${HELD}`;

/** What the model must read: the file, and near it its holder and the way back. */
const TOLD = [/\bbob\b/, /node \.cohent\/cohent\.mjs restore/];
function toldIn(text: string): boolean {
  for (let i = text.indexOf(HELD); i >= 0; i = text.indexOf(HELD, i + 1)) {
    const near = text.slice(Math.max(0, i - 800), i + 800);
    if (TOLD.every((re) => re.test(near))) return true;
  }
  return false;
}

/** bob's work in the tree (committed, then changed and not committed) and the job's script, outside the guard. */
function setUp(c: Ctx): void {
  mkdirSync(join(c.ws.repo, "src", "shared"), { recursive: true });
  writeFileSync(join(c.ws.repo, HELD), COMMITTED);
  repoGit(c, "add", HELD);
  repoGit(c, "commit", "-q", "-m", "shared helpers");
  writeFileSync(join(c.ws.repo, HELD), BOB);
  writeFileSync(join(c.ws.repo, "docs", "late.sh"), LATE);
}

/** Waits (bounded) until the job has written bob's file: the next call is made only after the write. */
async function untilWritten(c: Ctx, held: () => string): Promise<void> {
  for (let i = 0; i < 100 && held() === BOB; i++) await new Promise((r) => setTimeout(r, 100));
  // The write is done once the file holds the job's bytes; a moment more for the job to exit.
  await new Promise((r) => setTimeout(r, 200));
}

export const BACKGROUND_WRITE: Scenario = {
  id: "background-write",
  title:
    "bob holds src/shared with uncommitted work: the agent starts `nohup sh docs/late.sh &`, which writes bob's file two seconds after the call; at the agent's next call the write is caught and told to the model, `restore` brings bob's bytes back, bob is noticed",
  rows: ["silentBackground"],
  async body(c) {
    const row = "silentBackground" as const;
    const { bob, intentId } = await peerHolds(c, row, ["src/shared"]);
    setUp(c);
    const held = () => (fileExists(c.ws, HELD) ? readRepoFile(c.ws, HELD) : "(missing)");
    c.check.expect(row, `set-up: ${HELD} holds bob's uncommitted work`, held() === BOB, held());
    const after: Record<string, string> = {};
    // Copilot reads no PostToolUse answer: a second call after the write, which its PreToolUse may refuse with the catch.
    const copilot = c.client.kind === "copilot";
    const steps: Step[] = [
      sh("intent", intentCmd()),
      sh("start", c.client.kind === "codex" ? START_CODEX : START),
      sh("next", "ls src", async () => {
        after.start = held();
        await untilWritten(c, held);
        after.job = held();
      }),
      ...(copilot ? [sh("next-2", "ls docs")] : []),
      sh("restore", RESTORE),
      write("after", "src/mine/after.ts", () => void (after.restore = held())),
    ];
    const r = await c.run(steps, c.client.kind === "codex" ? { sandbox: "danger-full-access" } : {});
    if (process.env.COHENT_CLIENTS_DEBUG) {
      for (const s of steps)
        console.error(`[${c.client.label}] ${s.id}:`, clip(r.results.get(s.id)?.output ?? "(none)", 600));
      console.error(`[${c.client.label}] ${HELD}: ${JSON.stringify(after)}`);
    }
    c.check.scriptOk(r, row);
    c.check.ran(row, r, "intent", INTENT_OK);
    const start = r.results.get("start")?.output ?? "(none)";
    c.check.expect(
      row,
      "start: the background job started (not refused)",
      !!r.results.get("start") && !start.includes("Cohent: ") && after.start === BOB,
      `${HELD} when the call returned: ${JSON.stringify(after.start)}; tool result: ${clip(start)}`,
    );
    // The premise: the job wrote the file after the call that started it, before the next one.
    c.check.expect(
      row,
      "the job wrote bob's file between the calls",
      after.job === LATE_BYTES,
      `${HELD} before the next call: ${JSON.stringify(after.job)}`,
    );
    // Told: a request the model received before it asked for `restore` carries the catch.
    const askedRestore = r.modelSaw.findIndex((b) => /\d_restore"/.test(b));
    const before = askedRestore < 0 ? r.modelSaw : r.modelSaw.slice(0, askedRestore);
    const told = before.findIndex(toldIn);
    c.check.expect(
      row,
      "the model was told of the write (src/shared/util.ts, bob, the restore command) before it restored",
      told >= 0,
      `no request to the model carried ${HELD} with ${TOLD.join(" and ")} near it; next: ${clip(r.results.get("next")?.output ?? "(none)", 600)}` +
        (copilot ? `; next-2: ${clip(r.results.get("next-2")?.output ?? "(none)", 600)}` : ""),
    );
    const restored = r.results.get("restore")?.output ?? "";
    c.check.expect(
      row,
      "restore: ran and restored the file",
      /Restored 1 file\(s\)/.test(restored),
      `tool result: ${clip(restored, 800)}`,
    );
    c.check.expect(
      row,
      `restore: ${HELD} is bob's again (byte for byte)`,
      after.restore === BOB && held() === BOB,
      `after restore: ${JSON.stringify(after.restore)}; at the end: ${JSON.stringify(held())}`,
    );
    const poll = await bob.poll(intentId);
    const notices = JSON.stringify(poll.body?.data?.packet?.notices ?? null);
    c.check.expect(
      row,
      "bob's next poll carries a notice naming src/shared/util.ts",
      poll.status === 200 && /src\/shared\/util\.ts/.test(notices),
      `poll ${poll.status}: ${clip(JSON.stringify(poll.body), 800)}`,
    );
  },
};

SCENARIOS.push(BACKGROUND_WRITE);
MORE_SCENARIOS.push(BACKGROUND_WRITE);
