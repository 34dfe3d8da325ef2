import { isHost, type Wiring } from "@cohent/protocol/hosts";
import { adapterFailed, deadlineReason } from "../guard/guard.js";
import { DIALECTS } from "../hosts/detect.js";
import { redact } from "@cohent/client";
import { DEADLINE_MS, type Watch } from "./deadline.js";
import { denyText } from "./hook-answer.js";
import { WHOLE } from "./hook-events.js";
import { runHook, type HookResult } from "./hook.js";
import { recordHookUsage } from "./hook-usage.js";
import { enableLiveView, liveEvents } from "../held/live.js";
import { lookNow } from "./hook-caught.js";

/**
 * The hook without a process per call: the same runHook the `hook` command
 * runs, for a caller that lives longer than one tool call (the stdio MCP
 * server Claude Code calls as an `mcp_tool` handler, OpenCode's plugin).
 * The same decisions and reasons; only the deadline differs: past it the
 * call resolves to the refusal the command's deadline writes, instead of
 * ending a process that is not the call's own. Never throws.
 */

export async function hookInProcess(
  payload: string,
  o: {
    host: string;
    root: string | null;
    scriptUrl: string;
    deadlineMs?: number;
    /** How the call arrived (the MCP server's mcp_tool handler), for the host report. */
    via?: { wiring: Wiring; hostVersion: string | null };
  },
): Promise<HookResult> {
  // A caller that lives past one call keeps the held files' state fresh by notifications (held/live.ts).
  enableLiveView();
  const dialect = isHost(o.host) ? DIALECTS[o.host] : null;
  const watch: Watch = { event: null, dialect };
  const ms = o.deadlineMs ?? DEADLINE_MS;
  // hrtime, as hook-main.ts: the global `performance` loads perf_hooks on first touch.
  const started = process.hrtime.bigint();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<HookResult>((resolve) => {
    timer = setTimeout(() => {
      try {
        watch.save?.();
      } catch {
        /* the answer matters more */
      }
      resolve(refusal(watch, denyText(deadlineReason(ms))));
    }, ms);
  });
  let r: HookResult;
  calls++;
  try {
    r = await Promise.race([
      runHook(WHOLE, payload, o.root, o.scriptUrl, watch, o.host, process.env, o.via),
      late,
    ]);
  } catch (err) {
    // runHook never throws; a failure around it is still a refusal of a tool call.
    r = refusal(watch, denyText(adapterFailed(redact(err instanceof Error ? err.message : String(err)))));
  } finally {
    clearTimeout(timer);
    calls--;
  }
  watchBetweenCalls(o.root, payload);
  // The same ledger row as a hook process writes (doctor --cost), for the MCP server's and OpenCode's calls.
  recordHookUsage(o.root, r, Number(process.hrtime.bigint() - started) / 1e6);
  return r;
}

/** The refusal in the watch's dialect for a tool call; any other event ends silently, as the command's deadline does. */
function refusal(watch: Watch, reason: string): HookResult {
  const about = { event: watch.event ?? "unknown", client: null, model: null, agentId: null, injected: 0 };
  if (watch.event !== "PreToolUse" && watch.event !== null) return { ...about, exitCode: 0 };
  const out = watch.dialect ? watch.dialect.deny(reason) : { stderr: reason, exitCode: 2 };
  return { ...about, ...out };
}

// ---- Between calls ----

/** How often a long-lived guard looks between calls when notifications came, and at the longest. */
const LOOK_EVERY_MS = 2_000;
const LOOK_ANYWAY_MS = 30_000;
const SESSION = /"session_id"\s*:\s*"([A-Za-z0-9._:-]{1,200})"/;

let calls = 0;
let last: { root: string; session: string } | null = null;
let ticker: ReturnType<typeof setInterval> | null = null;
let seenEvents = -1;
let lookedAt = 0;
let looking = false;

/**
 * The process lives on between calls: it looks at the held files then too,
 * when notifications came (or every 30 s), so that a write no call explains
 * (a background job; every write of a session whose client switched its
 * hooks off) is noticed when it happens, not at some session's next call.
 * Never while a call runs (that call judges what it writes); never keeps
 * the process alive.
 */
function watchBetweenCalls(root: string | null, payload: string): void {
  const session = SESSION.exec(payload)?.[1];
  if (!root || !session) return;
  last = { root, session };
  if (ticker) return;
  ticker = setInterval(() => void look(), LOOK_EVERY_MS);
  ticker.unref();
}

async function look(): Promise<void> {
  if (!last || looking || calls > 0) return;
  const events = liveEvents();
  if (events === seenEvents && Date.now() - lookedAt < LOOK_ANYWAY_MS) return;
  looking = true;
  seenEvents = events;
  lookedAt = Date.now();
  try {
    await lookNow(last.root, last.session);
  } catch {
    /* the next call compares anyway */
  } finally {
    looking = false;
  }
}
