// One run of the real Claude Code (COHENT_CLIENTS=claude@2.1.332 by default) in a checkout set up by
// `cohent init`, with a logging `node` first on PATH: which node processes ran, their process trees,
// and the marks the MCP server wrote. `npx tsx test/clients/spawn-free/probe-ppid.ts [label]`
import { join } from "node:path";
import { CLIENTS } from "../clients.ts";
import { startFakeAnthropic } from "../fake-anthropic.ts";
import { prepareWorkspace, runClaude } from "../harness.ts";
import { intentCmd, scopeCmd, sh, write } from "../scenarios.ts";
import { chainText, isHookNode, isServerNode, marks, nodeWrapper, readNodeLog, unwrapGates } from "./lib.ts";

async function main() {
  const label = process.argv[2] ?? "claude@2.1.332";
  const client = CLIENTS.find((c) => c.label === label)!;
  const model = await startFakeAnthropic();
  const ws = await prepareWorkspace();
  const log = join(ws.dir, "node-starts.log");
  const bin = nodeWrapper(join(ws.dir, "wrap-bin"), log);
  // SF_UNWRAP=1: the gates without their inner `sh -c` (the fix FINDINGS.md proposes), in this checkout only.
  if (process.env.SF_UNWRAP === "1") console.log("unwrapped gates:", unwrapGates(ws.repo));
  try {
    const r = await runClaude(
      client,
      ws,
      model,
      [
        sh("intent", intentCmd()),
        sh("scope", scopeCmd("src/feature")),
        write("w1", "src/feature/a.ts"),
        write("w2", "src/feature/b.ts"),
        write("w3", "src/feature/c.ts"),
        write("out", "docs/out.md"),
      ],
      { prompt: "Add a feature module to the demo app", env: { PATH: `${bin}:${process.env.PATH}` } },
    );
    console.log("exit", r.code, "requests", r.requests);
    for (const [k, v] of r.results) console.log(k, "=>", v.output.slice(0, 160).replace(/\s+/g, " "));
    const starts = readNodeLog(log);
    if (process.env.SF_VERBOSE === "1")
      for (const s of starts) console.log(`--- ${s.at} ${s.args}\n${chainText(s)}`);
    else for (const s of starts) console.log(`--- ${s.at} ${s.args.slice(0, 100)}`);
    console.log(
      "hook nodes:",
      starts.filter(isHookNode).length,
      "server nodes:",
      starts.filter(isServerNode).length,
    );
    console.log("marks:", JSON.stringify(marks(ws.repo)));
  } finally {
    await ws.dispose();
    await model.close();
  }
}
void main();
