// Shell writes held like edits (scenario `shell-held`), one definition for
// every client kind: Codex and Claude Code (scenarios.ts's list) and Copilot
// CLI, Gemini CLI, OpenCode (scenarios-more.ts's list, said in each client's
// own tools by more-harness.ts). It adds itself to both lists when imported;
// suite.ts and report.ts import it.
//
// bob holds src/shared with uncommitted work in src/shared/util.ts. The agent
// publishes its intent, then: its edit tool on that file is refused naming
// bob; `sed -i` on it is refused as a shell write naming bob; a script that
// writes it where Cohent cannot see (`sh scripts/w.sh`, the path built at run
// time) runs, the check after the call catches it and the model is told
// (Claude Code, Codex: PostToolUse `decision: "block"`; Gemini: AfterTool
// context; OpenCode: the plugin appends the context to the tool's result;
// Copilot reads no PostToolUse answer, so its next shell or edit call is
// refused once with the reason); the model runs `node .cohent/cohent.mjs
// restore src/shared/util.ts` and bob's bytes are back; bob's next poll
// carries the notice. The file's content at each step decides.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileExists, readRepoFile, type RunResult } from "./harness.ts";
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
/** What bob's file holds in the last commit, and his uncommitted work on top of it (the bytes restore must bring back). */
const COMMITTED = "export const shared = 1;\n";
const BOB = 'export const shared = "bob: half-done helpers";\n';
/** The script's write is built at run time: no reader of the command's text can name it. */
const SCRIPT = 'p=src/shared\necho overwritten > "$p/util.ts"\n';
const OVERWRITTEN = "overwritten\n";
const RESTORE = `node .cohent/cohent.mjs restore ${HELD}`;

/** The reason of the check after the call (guard.ts caughtReason), as the model must read it. */
const CAUGHT = [
  /this shell command changed src\/shared\/util\.ts \(modified\), which it had not claimed/,
  /src\/shared\/util\.ts is claimed by bob/,
  /node \.cohent\/cohent\.mjs restore src\/shared\/util\.ts/,
];
const caughtIn = (text: string) => CAUGHT.every((re) => re.test(text));

/** bob's work in the tree: the file committed, then changed and not committed; the script, outside the guard. */
function setUp(c: Ctx): void {
  mkdirSync(join(c.ws.repo, "src", "shared"), { recursive: true });
  writeFileSync(join(c.ws.repo, HELD), COMMITTED);
  repoGit(c, "add", HELD);
  repoGit(c, "commit", "-q", "-m", "shared helpers");
  writeFileSync(join(c.ws.repo, HELD), BOB);
  mkdirSync(join(c.ws.repo, "scripts"), { recursive: true });
  writeFileSync(join(c.ws.repo, "scripts", "w.sh"), SCRIPT);
}

export const SHELL_HELD: Scenario = {
  id: "shell-held",
  title:
    "bob holds src/shared with uncommitted work: the agent's edit there and `sed -i` on it are refused naming bob; a script writing it invisibly runs, is caught and told to the model (Copilot: at its next call); `restore` brings bob's bytes back; bob is noticed",
  rows: ["shellHeld"],
  async body(c) {
    const row = "shellHeld" as const;
    const { bob, intentId } = await peerHolds(c, row, ["src/shared"]);
    setUp(c);
    const held = () => (fileExists(c.ws, HELD) ? readRepoFile(c.ws, HELD) : "(missing)");
    c.check.expect(row, `set-up: ${HELD} holds bob's uncommitted work`, held() === BOB, held());
    // The file as each call left it, taken just before the model makes the next one.
    const after: Record<string, string> = {};
    const take = (id: string) => () => void (after[id] = held());
    // Copilot reads no PostToolUse answer: the next shell or edit call carries the catch, refused once.
    const nextCall = c.client.kind === "copilot";
    const steps: Step[] = [
      sh("intent", intentCmd()),
      // Claude Code's Write refuses an existing file it has not read (before any hook): read it first, as a model would.
      ...(c.client.kind === "claude"
        ? [
            {
              id: "read",
              action: {
                kind: "claude-call" as const,
                name: "Read",
                input: { file_path: join(c.ws.repo, HELD) },
              },
            },
          ]
        : []),
      write("edit", HELD),
      sh("sed", `sed -i 's/a/b/' ${HELD}`, take("edit")),
      sh("script", "sh scripts/w.sh", take("sed")),
      ...(nextCall ? [sh("next", "echo n > src/mine/next.txt", take("script"))] : []),
      sh("restore", RESTORE, nextCall ? undefined : take("script")),
      // Told once: the call after the restore runs.
      write("after", "src/mine/after.ts", take("restore")),
    ];
    const r = await c.run(steps);
    if (process.env.COHENT_CLIENTS_DEBUG) {
      for (const s of steps)
        console.error(`[${c.client.label}] ${s.id}:`, clip(r.results.get(s.id)?.output ?? "(none)", 600));
      const at = r.modelSaw.findIndex(caughtIn);
      const body = r.modelSaw[at] ?? "";
      const i = body.search(CAUGHT[0]!);
      console.error(
        `[${c.client.label}] the catch first in request ${at + 1}/${r.requests}:`,
        body.slice(Math.max(0, i - 400), i + 200),
      );
    }
    c.check.scriptOk(r, row);
    c.check.ran(row, r, "intent", INTENT_OK);

    // 1. The edit tool: refused naming bob, the file as bob left it.
    refusedUnchanged(c, r, "edit", after.edit, /overlaps the scope of bob/);
    // 2. sed -i: refused as a shell write, naming bob.
    refusedUnchanged(
      c,
      r,
      "sed",
      after.sed,
      /shell write refused \(this command writes src\/shared\/util\.ts\)/,
    );
    const sed = r.results.get("sed")?.output ?? "";
    c.check.expect(row, "sed: the refusal names bob", /\bbob\b/.test(sed), `tool result: ${clip(sed)}`);
    // 3. The script: allowed (it wrote the file), then caught and told.
    const scriptOut = r.results.get("script")?.output ?? "";
    c.check.expect(
      row,
      "script: ran (not refused), the file overwritten",
      !!r.results.get("script") &&
        !/Cohent: (edit|shell write) refused/.test(scriptOut) &&
        after.script === OVERWRITTEN,
      `${HELD} after it: ${JSON.stringify(after.script)}; tool result: ${clip(scriptOut)}`,
    );
    if (nextCall) {
      // Copilot: the next call is refused with the catch, and writes nothing.
      const next = r.results.get("next")?.output ?? "";
      c.check.expect(
        row,
        "next: refused with the catch (changed src/shared/util.ts, claimed by bob, restore command)",
        next.includes("Cohent: ") && caughtIn(next) && !fileExists(c.ws, "src/mine/next.txt"),
        `src/mine/next.txt ${fileExists(c.ws, "src/mine/next.txt") ? "exists" : "absent"}; tool result: ${clip(next, 800)}`,
      );
      c.check.expect(
        "denyReachesModel",
        "next: deny reason in the tool result",
        next.includes("Cohent: "),
        `tool result: ${clip(next)}`,
      );
    } else {
      // The model read the catch in the very request that brought the script's result back (the first
      // to carry the call's id, `<n>_script`, which the fake model gave it), so before the restore call.
      const told = r.modelSaw.findIndex(caughtIn);
      const scriptBack = r.modelSaw.findIndex((b) => /\d_script"/.test(b));
      c.check.expect(
        row,
        "script: the model's next request carries the catch (changed src/shared/util.ts, claimed by bob, restore command)",
        told >= 0 && told === scriptBack,
        told < 0
          ? `no request to the model carried ${CAUGHT.join(" and ")}; script's tool result: ${clip(scriptOut, 800)}`
          : `first told in request ${told + 1}; the script's result came back in request ${scriptBack + 1}`,
      );
    }
    // 4. restore: bob's bytes back.
    const restored = r.results.get("restore")?.output ?? "";
    c.check.expect(
      row,
      "restore: ran and restored the file",
      /Restored 1 file\(s\) as before the caught call/.test(restored),
      `tool result: ${clip(restored, 800)}`,
    );
    c.check.expect(
      row,
      `restore: ${HELD} is bob's again (byte for byte)`,
      after.restore === BOB && held() === BOB,
      `after restore: ${JSON.stringify(after.restore)}; at the end: ${JSON.stringify(held())}`,
    );
    c.check.allowed(row, r, "after", "src/mine/after.ts");
    // bob's next packet carries the notice.
    const poll = await bob.poll(intentId);
    const notices = JSON.stringify(poll.body?.data?.packet?.notices ?? null);
    c.check.expect(
      row,
      "bob's next poll carries the shell-write notice",
      poll.status === 200 &&
        /changed your claimed src\/shared\/util\.ts through a shell command/.test(notices),
      `poll ${poll.status}: ${clip(JSON.stringify(poll.body), 800)}`,
    );
  },
};

/** A refused call: the file as bob left it (content taken right after the call), the reason in the tool result. */
function refusedUnchanged(c: Ctx, r: RunResult, stepId: string, content: string | undefined, reason: RegExp) {
  const row = "shellHeld" as const;
  c.check.expect(
    row,
    `${stepId}: ${HELD} unchanged`,
    content === BOB,
    `${HELD} after the call: ${JSON.stringify(content)}`,
  );
  const res = r.results.get(stepId);
  const out = res?.output ?? "";
  // Claude Code marks a hook deny as an error result; the others have no such flag.
  const ok = out.includes("Cohent: ") && reason.test(out) && res?.isError !== false;
  c.check.expect(
    row,
    `${stepId}: reason ${reason} reached the model`,
    ok,
    res ? `tool result: ${clip(out, 800)}` : "no tool result for this call reached the model",
  );
  c.check.expect(
    "denyReachesModel",
    `${stepId}: deny reason in the tool result`,
    ok,
    res ? `tool result: ${clip(out)}` : "no tool result",
  );
}

SCENARIOS.push(SHELL_HELD);
MORE_SCENARIOS.push(SHELL_HELD);
