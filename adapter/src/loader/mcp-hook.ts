import { dirname } from "node:path";
import { hookInProcess } from "../transports/hook-in-process.js";
import { adapterBuild, type Answer, type HookOptions } from "./build-check.js";
import { loaderHandoff, pathOfFileUrl } from "./loader-handoff.js";

/**
 * The guard's runner for the MCP server (Claude Code's mcp_tool handler, mcp-server/src/hook-tool.ts):
 * the hook's code this process loaded at start while the checkout's build is still that one, and the
 * checkout's build otherwise (build-check.ts): changed, it is loaded before deciding; missing,
 * unloadable or throwing, the call is refused with the repair. Run from the sources (no loader, no
 * build beside them) there is nothing to check: its own code decides.
 */
export function mcpHook(
  scriptUrl: string,
): (payload: string, root: string, hostVersion: string | null) => Promise<Answer> {
  const own = (payload: string, o: HookOptions) =>
    hookInProcess(payload, {
      host: o.host,
      root: o.dir,
      scriptUrl,
      via: o.via ?? { wiring: "mcp-tool", hostVersion: null },
    });
  const stamps = loaderHandoff()?.stamps;
  const run = stamps ? adapterBuild(dirname(pathOfFileUrl(scriptUrl)), { stamps, hook: own }) : own;
  return (payload, root, hostVersion) =>
    run(payload, { host: "claude", dir: root, via: { wiring: "mcp-tool", hostVersion } });
}
