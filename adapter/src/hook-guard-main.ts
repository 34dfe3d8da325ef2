import { onPacket } from "@cohent/client";
import { restoreRequested } from "./held/restore-requested.js";
import { loaderHandoff } from "./loader/loader-handoff.js";
import { hookCommand } from "./transports/hook-main.js";
import { HANDOVER, type HookPart } from "./transports/hook.js";
import { preToolUseWith } from "./transports/hook-pre-tool.js";

/**
 * The guard's part of the adapter: the first part of cohent-core.js, which
 * the loader reads and runs alone for a PreToolUse edit or shell call (about
 * two thirds of the whole adapter's size: a hook reads, deserializes and
 * initializes less). It holds what such a decision needs: the hosts'
 * dialects, the guard, the session state and the service client. Any other
 * call it hands over before it saves anything (hook.ts's HANDOVER), the
 * adapter's own exempt command too, whose relay needs the operation layer:
 * the loader then runs the whole adapter on the same payload.
 */

const GUARD: HookPart = { whole: false, handlers: { PreToolUse: preToolUseWith(async () => HANDOVER) } };

onPacket(restoreRequested);
hookCommand(process.argv.slice(3), GUARD, import.meta.url).then(
  (code) => {
    if (code !== null) process.exitCode = code;
    else loaderHandoff()!.whole!();
  },
  (err) => {
    process.stderr.write(`cohent: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
