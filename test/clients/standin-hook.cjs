// The stand-in hook of the probes: logs what the client gave it and answers
// what the probe asks. It is copied beside its plan and its log, outside the
// checkout: `node <dir>/standin-hook.cjs LABEL` appends one JSON line per
// call to <dir>/standin-log.jsonl, with its argv, cwd, stdin (raw and parsed)
// and the environment variables a client may set for hooks, then answers by
// the first rule of <dir>/standin-plan.json that matches the call:
//   { "rules": [ { "event": "preToolUse", "tool": "^bash$", "stdout": "…",
//     "stderr": "…", "exit": 2, "sleepMs": 5000, "throw": true } ] }
// `event` matches the label given on the command line or the payload's
// event name; `tool` is a regular expression over the payload's tool name,
// `match` one over the raw stdin (so one run can ask each call for another
// answer, by a marker in its command or path).
// No rule: exit 0, nothing printed.
const fs = require("fs");
const path = require("path");

const dir = __dirname;
const label = process.argv[2] || "";
const ENV_PREFIXES = /^(COPILOT|GEMINI|OPENCODE|CLAUDE|CURSOR|GITHUB_COPILOT)/;

const toolOf = (p) => {
  if (!p || typeof p !== "object") return "";
  return String(p.tool_name ?? p.toolName ?? p.tool ?? "");
};

const eventOf = (p) => {
  if (!p || typeof p !== "object") return "";
  return String(p.hook_event_name ?? p.hookEventName ?? "");
};

let raw = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (c) => (raw += c));
process.stdin.on("end", () => {
  let payload = null;
  try {
    payload = JSON.parse(raw);
  } catch {
    /* logged raw */
  }
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (ENV_PREFIXES.test(k)) env[k] = v;
  if (process.env.PWD) env.PWD = process.env.PWD;
  fs.appendFileSync(
    path.join(dir, "standin-log.jsonl"),
    JSON.stringify({
      t: Date.now(),
      label,
      argv: process.argv.slice(2),
      cwd: process.cwd(),
      env,
      raw,
      payload,
    }) + "\n",
  );
  let rules = [];
  try {
    rules = JSON.parse(fs.readFileSync(path.join(dir, "standin-plan.json"), "utf8")).rules || [];
  } catch {
    /* no plan: allow */
  }
  const ev = eventOf(payload);
  const tool = toolOf(payload);
  const rule = rules.find(
    (r) =>
      (!r.event || r.event === label || r.event === ev) &&
      (!r.tool || new RegExp(r.tool).test(tool)) &&
      (!r.match || new RegExp(r.match).test(raw)),
  );
  if (!rule) process.exit(0);
  const answer = () => {
    if (rule.throw) throw new Error(`stand-in hook throws at ${__filename}`);
    if (rule.stdout) process.stdout.write(rule.stdout);
    if (rule.stderr) process.stderr.write(rule.stderr);
    process.exitCode = rule.exit ?? 0;
  };
  if (rule.sleepMs) setTimeout(answer, rule.sleepMs);
  else answer();
});
