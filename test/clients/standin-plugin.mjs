// The stand-in OpenCode plugin of the probes: logs every hook it is given and
// refuses what the probe's plan asks, the way standin-hook.cjs does for the
// command hooks. probe-harness.ts copies it into .opencode/plugin/ with
// STANDIN_DIR replaced by the folder of the plan and the log.
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";

const DIR = "STANDIN_DIR";

function log(label, payload) {
  let text;
  try {
    text = JSON.stringify(payload);
  } catch {
    text = JSON.stringify(String(payload));
  }
  appendFileSync(
    join(DIR, "standin-log.jsonl"),
    JSON.stringify({
      t: Date.now(),
      label,
      argv: [],
      cwd: process.cwd(),
      env: env(),
      raw: text,
      payload: JSON.parse(text),
    }) + "\n",
  );
}

function env() {
  const out = {};
  for (const [k, v] of Object.entries(process.env))
    if (/^(OPENCODE|CLAUDE|COPILOT|GEMINI|CURSOR)/.test(k)) out[k] = v;
  return out;
}

/** The first rule of the plan that matches this call: the probe's answer. */
async function answer(label, tool, raw) {
  let rules = [];
  try {
    rules = JSON.parse(readFileSync(join(DIR, "standin-plan.json"), "utf8")).rules || [];
  } catch {
    /* no plan: allow */
  }
  const rule = rules.find(
    (r) =>
      (!r.event || r.event === label) &&
      (!r.tool || new RegExp(r.tool).test(tool)) &&
      (!r.match || new RegExp(r.match).test(raw)),
  );
  if (!rule) return;
  if (rule.sleepMs) await new Promise((r) => setTimeout(r, rule.sleepMs));
  if (rule.throw) throw new Error(rule.stderr || "stand-in plugin refuses");
}

export const Standin = async (ctx) => {
  log("init", { keys: Object.keys(ctx), directory: ctx.directory, worktree: ctx.worktree });
  return {
    event: async ({ event }) => log(`event:${event?.type}`, event),
    "chat.message": async (input, output) => log("chat.message", { input, output }),
    "chat.params": async (input, output) =>
      log("chat.params", { input: { sessionID: input?.sessionID, agent: input?.agent }, output }),
    "permission.ask": async (input, output) => log("permission.ask", { input, output }),
    "tool.execute.before": async (input, output) => {
      log("tool.execute.before", { input, output });
      await answer("tool.execute.before", String(input?.tool ?? ""), JSON.stringify({ input, output }));
    },
    "tool.execute.after": async (input, output) => log("tool.execute.after", { input, output }),
  };
};
