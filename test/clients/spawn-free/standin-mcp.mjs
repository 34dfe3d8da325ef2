// A stand-in for Cohent's stdio MCP server in a throwaway checkout (the spawn-free scenarios):
// `.mcp.json`'s `cohent` entry runs this file (copied to .cohent/cohent-mcp-standin.mjs), which runs
// the real server (`node .cohent/cohent.mjs mcp` beside it) as its child and passes every line through,
// except as the mode file `.cohent/standin-mode` says, read at each moment it matters:
//
//   healthy        pass everything through
//   startfail      exit 1 at start, before `initialize` (also on every restart)
//   late:<ms>      start the real server only after <ms> (the client's lines wait)
//   die            exit 1 on a `tools/call` of `hook`, before answering (a restart dies again)
//   hang           never answer a `tools/call` of `hook`
//
// Every decision is appended to .cohent/standin.log (one JSON line), for the checks, and so is the
// time each `hook` call took in the real server (`hook-answer`, ms from the call to its answer).
import { spawn } from "node:child_process";
import { appendFileSync, copyFileSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const mode = () => {
  const f = join(here, "standin-mode");
  return existsSync(f) ? readFileSync(f, "utf8").trim() : "healthy";
};
const log = (entry) =>
  appendFileSync(
    join(here, "standin.log"),
    JSON.stringify({ t: Date.now(), pid: process.pid, ...entry }) + "\n",
  );

const m0 = mode();
log({ event: "start", mode: m0, ppid: process.ppid });
if (m0 === "startfail") {
  log({ event: "exit-at-start" });
  process.exit(1);
}
const delay = /^late:(\d+)$/.exec(m0);

function copyMarks() {
  const dir = join(here, "spawn-free");
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(`.${process.pid}`)) continue;
    const to = join(dir, name.slice(0, -String(process.pid).length) + String(process.ppid));
    if (!existsSync(to)) copyFileSync(join(dir, name), to);
  }
}

let child = null;
/** `hook` calls passed to the real server: JSON-RPC id → when (hrtime). */
const calls = new Map();
const pending = [];
const start = () => {
  child = spawn(process.execPath, [join(here, "cohent.mjs"), "mcp"], { stdio: ["pipe", "pipe", "inherit"] });
  // Passed through line by line; the answer to a `hook` call is logged with the time it took in the server.
  createInterface({ input: child.stdout }).on("line", (line) => {
    process.stdout.write(line + "\n");
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    }
    const t = msg && msg.id !== undefined ? calls.get(msg.id) : undefined;
    if (t === undefined) return;
    calls.delete(msg.id);
    const text = msg.result?.content?.[0]?.text ?? "";
    log({ event: "hook-answer", ms: Number(process.hrtime.bigint() - t) / 1e6, deny: /"deny"/.test(text) });
    // The real server is our child, so it marks sessions with our pid; the mark the gate looks for names
    // Claude Code (our parent): copied, so the pass-through does not change whether the gate stands aside.
    copyMarks();
  });
  child.on("exit", (code) => {
    log({ event: "child-exit", code });
    process.exit(code ?? 1);
  });
  log({ event: "connected-child", child: child.pid });
  for (const l of pending.splice(0)) child.stdin.write(l + "\n");
};
if (delay) setTimeout(start, Number(delay[1]));
else start();

createInterface({ input: process.stdin }).on("line", (line) => {
  let msg = null;
  try {
    msg = JSON.parse(line);
  } catch {
    /* pass it on */
  }
  if (msg?.method === "tools/call" && msg.params?.name === "hook") {
    const m = mode();
    log({
      event: "hook-call",
      mode: m,
      tool: msg.params?.arguments?.tool_name,
      hookEvent: msg.params?.arguments?.event,
    });
    if (m === "die") {
      log({ event: "die-in-call" });
      process.exit(1);
    }
    if (m === "hang") return;
    calls.set(msg.id, process.hrtime.bigint());
  } else if (msg?.method) log({ event: "request", method: msg.method });
  if (child) child.stdin.write(line + "\n");
  else pending.push(line);
});
process.stdin.on("end", () => child?.stdin.end());
