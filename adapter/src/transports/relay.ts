import { tryParseHuman, exitCodeOf, HUMAN_COMMANDS } from "./cli.js";
import { loaderHandoff } from "../loader/loader-handoff.js";
import { isOperation, perform, relayKey, updateRuntime, type Relay, type SessionFile } from "@cohent/client";
import { restoreRequested } from "../held/restore-requested.js";
import { restoreCommand } from "./restore.js";

/**
 * The sandbox relay. The agent's own shell may have no network (Codex's
 * workspace-write sandbox), but the PreToolUse hook runs outside it and
 * sees the exempt command just before it runs. So the hook performs the
 * operation for the session that announced the call and leaves the answer
 * in runtime.json under the command's relay key; the command claims it,
 * prints it and exits with its code. `restore` is relayed too: the stash it
 * reads and journals lives in .git, which the sandbox mounts read-only.
 * Other adapter commands get only the session binding.
 */

/** The second file, next to cohent.mjs: the MCP server and the JSON agent CLI (zod, the SDK). Never parsed by a plain hook call. */
export const loadSecond = async () => {
  const url = new URL("./cohent-mcp.mjs", import.meta.url).href;
  const second = (await (loaderHandoff()?.import(url) ??
    import(url))) as typeof import("../../../mcp-server/src/entry.js");
  // The second file bundles its own copy of the client: its packets restore caught writes too.
  second.onPacket(restoreRequested);
  return second;
};

/** An agent operation whose request the hook can see: from a file, or none ({}); never stdin. */
function relayableAgent(args: readonly string[]): boolean {
  const [op, ...rest] = args;
  if (!isOperation(op)) return false;
  const i = rest.findIndex((a) => a === "--input" || a.startsWith("--input="));
  if (i === -1) return true;
  const value = rest[i]!.startsWith("--input=") ? rest[i]!.slice("--input=".length) : rest[i + 1];
  return value !== undefined && value !== "-";
}

/** In the hook: runs the exempt command for the session, and leaves its answer for the command (saved with the session). */
export async function relay(s: SessionFile, argv: string[], cwd: string, scriptUrl: string): Promise<void> {
  const [name, ...args] = argv;
  let result: Relay["result"];
  if (name === "agent" && relayableAgent(args)) {
    // The JSON agent CLI validates with zod: its parse step lives in the second file, loaded for this relay only.
    const second = await loadSecond();
    result = await second.agentOutcome(args, { scriptUrl, session: s, cwd });
  } else if (name === "restore") {
    // Outside Codex's sandbox, where .git (the stash, its journals) is read-only to the command.
    const { envelope } = restoreCommand(args, cwd);
    result = { envelope, exitCode: envelope.ok ? 0 : 1 };
    // A catch still waiting to be told (a host that reads no PostToolUse answer) is moot once undone.
    if (envelope.ok && !args.includes("--list")) s.set({ caught: undefined });
  } else if (name && HUMAN_COMMANDS.has(name)) {
    const parsed = tryParseHuman(name, args);
    const envelope =
      "op" in parsed
        ? await perform(parsed.op, parsed.input, {
            root: s.root,
            sessionId: s.id,
            surface: "cli",
            session: s,
            relayed: true,
          })
        : parsed;
    result = { envelope, exitCode: exitCodeOf(name, envelope) };
  }
  s.leaveRelay({
    key: relayKey(argv),
    sessionId: s.id,
    at: new Date().toISOString(),
    ...(result ? { result } : {}),
  });
}

/** In the command: takes the oldest relay the hook left for exactly these arguments. */
export function claimRelay(root: string, argv: readonly string[]): Relay | null {
  const key = relayKey(argv);
  try {
    return updateRuntime(root, (rt) => {
      const i = rt.relays.findIndex((r) => r.key === key);
      return i === -1 ? null : rt.relays.splice(i, 1)[0]!;
    });
  } catch {
    return null;
  }
}
