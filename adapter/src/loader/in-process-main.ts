import { findRoot, onPacket } from "@cohent/client";
import { restoreRequested } from "../held/restore-requested.js";
import { DEADLINE_MS } from "../transports/deadline.js";
import { hookInProcess } from "../transports/hook-in-process.js";
import type { HookResult } from "../transports/hook.js";

/**
 * The whole adapter's hook as a function, for a host that runs Cohent in its
 * own process (OpenCode's plugin, through loader.ts's in-process API):
 * main.ts exports it, and runs no CLI when the loader says it is in-process.
 */

// As main.ts: a restore request riding on a packet is acted on in whichever process receives it.
onPacket(restoreRequested);

/**
 * One hook call: `dir` is the folder the spawned hook would have run in (the checkout's root);
 * `via`, the MCP server's mcp_tool handler when it calls this (a build newer than its own);
 * `within`, the caller's own timeout: the adapter's deadline answers a second before it, so that
 * a late call is refused with the adapter's reason and its session saved.
 */
export async function hook(
  payload: string,
  o: { host: string; dir: string; within?: number; via?: { wiring: "mcp-tool"; hostVersion: string | null } },
): Promise<HookResult> {
  const within = typeof o.within === "number" && o.within > 2000 ? o.within - 1000 : DEADLINE_MS;
  return hookInProcess(payload, {
    host: o.host,
    root: findRoot(o.dir, import.meta.url),
    scriptUrl: import.meta.url,
    deadlineMs: Math.min(DEADLINE_MS, within),
    // The MCP server's call, when it runs an upgraded build through this API (build-check.ts).
    ...(o.via ? { via: o.via } : {}),
  });
}
