import { IN_PROCESS_MARK } from "../loader/in-process-mark.js";
import { FAIL_CLOSED_REASON } from "../guard/guard.js";
import { OPENCODE_PLUGIN_FILE } from "../guard/guard-files.js";
import { hookCommand } from "./host-wiring.js";

/**
 * OpenCode's wiring: a plugin in `.opencode/plugin/`, which OpenCode loads
 * at every start with no trust step. OpenCode skips a plugin that fails to
 * load, silently (measured, 1.15.13 and 1.18.33), so the file is a few lines
 * that cannot fail to load: node: builtins only, no top-level code beyond
 * constants, a factory that touches nothing that can throw. Every failure
 * of the adapter inside `tool.execute.before` is a refusal (a throw is
 * OpenCode's only refusal; the model reads its message), and OpenCode has
 * no hook timeout, so the plugin keeps one of its own.
 *
 * The adapter runs in OpenCode's own process: the plugin requires
 * `.cohent/cohent.cjs` (loader.ts's in-process API) at the first call, again
 * whenever the file changes, and calls its `hook` with the same contract the
 * spawned hook has: the payload `{"event", "input", "output",
 * "directory"}` (the hook or event name, OpenCode's input and output or the
 * event's properties, and OpenCode's ctx.directory, where the agent's shell
 * runs); the answer `{"decision": "allow" | "deny", "reason", "context"?}` on
 * stdout at exit 0. Only the end-of-work events still go to a `node` process.
 */

export { OPENCODE_PLUGIN_FILE };
/** The plugin's own deadline: above the adapter's 25 s would leave a hung adapter hanging the agent. */
export const OPENCODE_PLUGIN_TIMEOUT_MS = 25_000;
/** The session events the plugin forwards (OpenCode's `event` hook sees every bus event). */
export const OPENCODE_EVENTS = ["session.created", "session.idle", "session.deleted"] as const;
/** Those it hands to an adapter process that outlives OpenCode: `opencode run` exits right after session.idle (measured: the stop was lost under load). */
export const OPENCODE_DETACHED_EVENTS = ["session.idle", "session.deleted"] as const;
/** What cohent.cjs's head says when it serves the in-process API (loader/in-process-mark.ts). */
export const OPENCODE_IN_PROCESS_MARK = IN_PROCESS_MARK;
const [, , ...ARGS] = hookCommand("opencode").split(" ");

/** The plugin's text, byte for byte what init writes (the fingerprint compares it). */
export const OPENCODE_PLUGIN = `// Cohent's guard for OpenCode, written by \`cohent init\`. Do not edit: doctor and every session
// start compare this file with what init wrote; a person changes it with \`cohent init --upgrade\`.
// Each hook calls .cohent/cohent.cjs in this process (required at the first call, and again when
// the file changes) with {event, input, output, directory} and reads {decision, reason, context}
// (a context goes to the model with the prompt or with a tool's result). A tool call runs only on
// an explicit allow: a deny refuses it, and so does every failure of the adapter (missing, not one
// that serves this plugin, throws, answers junk, or takes longer than ${OPENCODE_PLUGIN_TIMEOUT_MS / 1000} s). The other hooks never block.
import { spawn } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const FAILED = ${JSON.stringify(FAIL_CLOSED_REASON)};
const SLOW = "Cohent: the guard hook did not answer within ${OPENCODE_PLUGIN_TIMEOUT_MS / 1000} s, so this tool call is refused. Try again; if it persists run node .cohent/cohent.mjs doctor";
const EVENTS = ${JSON.stringify(OPENCODE_EVENTS)};
// \`opencode run\` exits right after session.idle without waiting for the hooks: the end-of-work
// events go to an adapter process that outlives it, and nothing waits for their answer.
const DETACHED = ${JSON.stringify(OPENCODE_DETACHED_EVENTS)};
// Only a cohent.cjs whose head says it serves this plugin is required: any other would run its CLI here.
const MARK = ${JSON.stringify(OPENCODE_IN_PROCESS_MARK)};

export const CohentGuard = async (ctx) => {
  let root = process.cwd();
  try {
    root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
  } catch {}
  const directory = ctx && typeof ctx.directory === "string" ? ctx.directory : root;
  const contexts = new Map();
  let adapter = null;
  // The adapter's hook; required again when cohent.cjs changes (an upgrade, a repair). Throws when it cannot serve.
  const load = () => {
    const file = join(root, ".cohent", "cohent.cjs");
    const st = statSync(file);
    const stamp = [st.ino, st.size, st.mtimeMs, st.ctimeMs].join(":");
    if (adapter && adapter.stamp === stamp) return adapter.hook;
    adapter = null;
    if (!readFileSync(file, "latin1").slice(0, 4096).includes(MARK)) throw new Error("not an in-process adapter");
    const require = createRequire(file);
    delete require.cache[require.resolve(file)];
    globalThis.cohentInProcess = MARK;
    let m;
    try {
      m = require(file);
    } finally {
      delete globalThis.cohentInProcess;
    }
    if (!m || typeof m.hook !== "function") throw new Error("no hook");
    adapter = { stamp, hook: m.hook };
    return m.hook;
  };
  const ask = (event, input, output) =>
    new Promise((resolve) => {
      const ms = Number(process.env.COHENT_PLUGIN_TIMEOUT_MS) > 0 ? Number(process.env.COHENT_PLUGIN_TIMEOUT_MS) : ${OPENCODE_PLUGIN_TIMEOUT_MS};
      const timer = setTimeout(() => resolve({ failed: SLOW }), ms);
      const done = (answer) => {
        clearTimeout(timer);
        resolve(answer);
      };
      try {
        const payload = JSON.stringify({ event, input, output, directory });
        Promise.resolve(load()(payload, { host: "opencode", dir: root, within: ms })).then(
          (r) => {
            let answer = null;
            try {
              if (r && r.exitCode === 0) answer = JSON.parse(r.stdout);
            } catch {}
            done(answer && typeof answer === "object" ? answer : { failed: FAILED });
          },
          () => done({ failed: FAILED }),
        );
      } catch {
        done({ failed: FAILED });
      }
    });
  return {
    "tool.execute.before": async (input, output) => {
      const a = await ask("tool.execute.before", input, output);
      if (a.decision === "allow") return;
      throw new Error(a.decision === "deny" && typeof a.reason === "string" && a.reason ? a.reason : a.failed || FAILED);
    },
    "tool.execute.after": async (input, output) => {
      const a = await ask("tool.execute.after", input, output);
      // What peers changed, told once: the model reads it with the tool's result.
      try {
        if (typeof a.context === "string" && a.context && typeof output.output === "string") output.output += "\\n\\n" + a.context;
      } catch {}
    },
    "chat.message": async (input, output) => {
      const a = await ask("chat.message", input, output);
      try {
        if (typeof a.context === "string" && a.context) contexts.set(input.sessionID, a.context);
      } catch {}
    },
    "experimental.chat.system.transform": async (input, output) => {
      try {
        const context = contexts.get(input.sessionID);
        if (context) output.system.push(context);
      } catch {}
    },
    event: async (arg) => {
      try {
        const e = arg.event;
        if (DETACHED.includes(e.type)) {
          const child = spawn("node", ${JSON.stringify([".cohent/cohent.cjs", ...ARGS])}, { cwd: root, stdio: ["pipe", "ignore", "ignore"], detached: true, windowsHide: true });
          child.on("error", () => {});
          child.stdin.on("error", () => {});
          child.stdin.end(JSON.stringify({ event: e.type, input: {}, output: e.properties || {}, directory }));
          child.unref();
          setTimeout(() => {
            try {
              child.kill("SIGKILL");
            } catch {}
          }, ${OPENCODE_PLUGIN_TIMEOUT_MS}).unref();
        } else if (EVENTS.includes(e.type)) await ask(e.type, {}, e.properties || {});
      } catch {}
    },
  };
};
`;

/** The plugin's text with line endings made LF: a checkout with core.autocrlf holds CRLF, and the plugin loads alike. */
export const pluginText = (b: Buffer | string) =>
  (typeof b === "string" ? b : b.toString("utf8")).replace(/\r\n/g, "\n");
