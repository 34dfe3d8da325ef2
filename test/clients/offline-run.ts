// One run of a client with no network but the loopback: probes.ts starts this
// inside `unshare -n` (a network namespace holding only `lo`), so the fake
// model, the stand-in hook and the client all live there. Prints one JSON
// line: the exit code, how many hook calls were logged, whether an allowed
// shell write landed and a denied one did not, and the run's time.
//
//   unshare -n sh -c 'ip link set lo up && npx tsx test/clients/offline-run.ts copilot@1.0.102'
import { CLIENTS } from "./clients.ts";
import { startFakeChat } from "./fake-chat.ts";
import { startFakeGemini } from "./fake-gemini.ts";
import {
  installStandinPlugin,
  probeWorkspace,
  runCopilot,
  runGemini,
  runOpencode,
  setPlan,
  type ProbeRun,
} from "./probe-harness.ts";
import { outcome } from "./probe-kit.ts";
import { writeCopilotHooks } from "./probes-copilot.ts";
import { writeGeminiHooks } from "./probes-gemini.ts";
import type { Step } from "./script.ts";

const label = process.argv[2];
const client = CLIENTS.find((c) => c.label === label);
if (!client) throw new Error(`unknown client ${label}`);
const shell = client.kind === "gemini" ? "run_shell_command" : "bash";
const touch = (id: string): Step => ({
  id,
  action: { kind: "tool", name: shell, args: { command: `echo ${id} > ${id}.txt`, description: id } },
});
const steps = [touch("offline-allowed"), touch("offline-denied")];
const ws = probeWorkspace();
let run: ProbeRun;
if (client.kind === "gemini") {
  const model = await startFakeGemini();
  writeGeminiHooks(ws, ["BeforeTool"]);
  setPlan(ws, [
    { match: "offline-denied", stdout: JSON.stringify({ decision: "deny", reason: "R-OFFLINE" }) },
  ]);
  run = await runGemini(client, ws, model, steps, { prompt: "do it" });
  await model.close();
} else {
  const model = await startFakeChat();
  if (client.kind === "copilot") {
    writeCopilotHooks(ws, ["preToolUse"]);
    setPlan(ws, [
      {
        match: "offline-denied",
        stdout: JSON.stringify({ permissionDecision: "deny", permissionDecisionReason: "R-OFFLINE" }),
      },
    ]);
    run = await runCopilot(client, ws, model, steps, { prompt: "do it" });
  } else {
    installStandinPlugin(ws);
    setPlan(ws, [
      { event: "tool.execute.before", match: "offline-denied", throw: true, stderr: "R-OFFLINE" },
    ]);
    run = await runOpencode(client, ws, model, steps, { prompt: "do it" });
  }
  await model.close();
}
process.stdout.write(
  JSON.stringify({
    code: run.code,
    ms: run.ms,
    hookCalls: run.hooks.length,
    allowed: outcome(ws, "offline-allowed.txt"),
    denied: outcome(ws, "offline-denied.txt"),
    deniedResult: run.results.get("offline-denied") ?? null,
    stderr: run.stderr.slice(-400),
  }) + "\n",
);
ws.dispose();
