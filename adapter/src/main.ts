import type { Envelope } from "@cohent/protocol";
import { exitCodeOf, HUMAN_COMMANDS, parseHuman, positionals, renderHuman } from "./transports/cli.js";
import {
  findRoot,
  fail,
  failFrom,
  perform,
  queuedUnwaited,
  cliSessionId,
  selectSession,
  onPacket,
} from "@cohent/client";
import { hookCommand } from "./transports/hook-main.js";
import { loaderHandoff } from "./loader/loader-handoff.js";
import { mcpHook } from "./loader/mcp-hook.js";
import { WHOLE } from "./transports/hook-events.js";
import { claimRelay, loadSecond } from "./transports/relay.js";
import { restoreCommand, restoreText } from "./transports/restore.js";
import { whyEnvelope, whyText } from "./transports/why.js";
import { restoreRequested } from "./held/restore-requested.js";

/**
 * cohent.mjs: the adapter in a user's checkout. Hand-parsed argv and no
 * dependencies: `hook` starts on every tool call. doctor, init and
 * bootstrap are modules of the bundle that run only when called.
 */

const USAGE = `usage: node .cohent/cohent.mjs <command> [--json]
  hook [--host <client>]                 read a hook payload on stdin (codex, claude, copilot, gemini, cursor, opencode)
  intent '<json>'                        publish the compact structured intent (exits 2 on wait, duplicate, handoff)
  scope <path…>                          claim a write scope; replaces the previous claim
  scope --queue <path…>                  on a peer's scope, queue for it (a later packet says "granted")
  scope --wait <seconds> <path…>         queue and block until granted, at most 120 s
  request-release <path…> [--note T]     ask the holders of those paths to let go
  checkpoint <status> <summary>          working | blocked | completed | abandoned
  context                                the current brief, decisions and peer changes
  restore <path…> [--catch ID] | --list  put back what a caught shell write changed under a peer's paths
  why                                    this session's last refusals: the rule, the facts it read, what to do
  commit -m <message> [--path P…]        commit only your scope's changes (a peer's stay as they are), recorded on your intent
  doctor                                 project, endpoint, pairing, Codex hook trust, Claude hooks
  bootstrap --approve [--token T]        pair this machine with the repository
  init --server URL [--repo owner/name]  write the project and client files (also: npx cohent init)
  mcp [--repo DIR]                       the stdio MCP server (tools publish, intent, scope, checkpoint, context, commit, request-release)
  agent <op> --input <file|-> [--repo DIR]  one JSON request in, one protocol-v1 envelope out; agent schema --task <op>
  doctor --cost [--json] | --clear | --usage on|off   the local usage ledger`;

function write(out: string | undefined, stream: NodeJS.WriteStream) {
  if (out) stream.write(out.endsWith("\n") ? out : out + "\n");
}

function emit(name: string, envelope: Envelope<any>, json: boolean): number {
  if (json) write(JSON.stringify(envelope), process.stdout);
  else
    write(
      renderHuman(name, envelope),
      envelope.ok || envelope.error.code === "SCOPE_CONFLICT" ? process.stdout : process.stderr,
    );
  return exitCodeOf(name, envelope);
}

/** intent, scope, checkpoint, context: the human CLI transport over the operation layer. */
async function humanCommand(name: string, argv: string[], json: boolean): Promise<number> {
  const root = findRoot(process.cwd(), import.meta.url);
  if (!root)
    return emit(
      name,
      fail(
        name,
        "NOT_CONFIGURED",
        "No .cohent/project.json here or above; run npx cohent init --server URL.",
      ),
      json,
    );
  const relay = claimRelay(root, argv);
  const relayed = relay?.result?.envelope;
  // The hook queued a `scope --wait` without waiting (its budget): this process waits, if it can reach the service.
  const resume = queuedUnwaited(relayed) ? relayed : undefined;
  if (relayed && !resume && (relayed.ok || relayed.error.code !== "CONTROL_PLANE_UNREACHABLE"))
    return emit(name, relayed, json);
  let envelope: Envelope<any>;
  try {
    const sessionId =
      relay?.sessionId ?? selectSession(root, { own: cliSessionId(), onAmbiguity: "refuse" }).sessionId;
    const { op, input } = parseHuman(name, argv.slice(1));
    envelope = await perform(op, resume ? { ...input, queuedByRelay: resume } : input, {
      root,
      sessionId,
      surface: "cli",
    });
  } catch (err) {
    envelope = failFrom(name, err);
  }
  if (!envelope.ok && envelope.error.code === "CONTROL_PLANE_UNREACHABLE" && !relay) {
    envelope.error.message +=
      " If this runs inside a sandbox without network (Codex workspace-write), run it through the agent's shell tool with Cohent's hooks trusted: the PreToolUse hook performs it outside the sandbox.";
  }
  return emit(name, envelope, json);
}

export async function main(argv: string[]): Promise<number> {
  // A packet a Control Room restore request rides on is acted on in whichever process receives it.
  onPacket(restoreRequested);
  const [command, ...rest] = argv;
  const json = rest.includes("--json");
  switch (command) {
    case "hook":
      return hookCommand(rest, WHOLE, import.meta.url);
    case "doctor": {
      if (rest.some((a) => a === "--cost" || a === "--clear" || a === "--usage")) {
        return (await loadSecond()).usageCommand(rest, json);
      }
      return (await import("./installer/doctor.js")).doctor(positionals(rest), json, import.meta.url);
    }
    case "bootstrap": {
      return (await import("./installer/bootstrap.js")).bootstrap(rest, json, import.meta.url);
    }
    case "init": {
      return (await import("./installer/init.js")).initCommand(rest, json, import.meta.url);
    }
    case "restore": {
      // The hook may have run it already, outside a sandbox (relay.ts): its answer is printed, not redone.
      const root = findRoot(process.cwd(), import.meta.url);
      const relayed = root ? claimRelay(root, argv)?.result?.envelope : undefined;
      const envelope = relayed ?? restoreCommand(rest).envelope;
      write(
        json ? JSON.stringify(envelope) : restoreText(envelope),
        envelope.ok ? process.stdout : process.stderr,
      );
      return envelope.ok ? 0 : 1;
    }
    case "why": {
      // The session's last refusals (act.ts keeps them): local, so no relay result, only its session.
      const envelope = whyEnvelope(argv, process.cwd(), import.meta.url);
      write(
        json ? JSON.stringify(envelope) : whyText(envelope),
        envelope.ok ? process.stdout : process.stderr,
      );
      return envelope.ok ? 0 : 1;
    }
    case "mcp":
    case "agent": {
      // The second file: the MCP SDK and zod load only here, never on the hook path.
      const second = await loadSecond();
      if (command === "mcp") {
        // The guard's hook tool runs the hook's code in this process (Claude Code's mcp_tool handler):
        // the checkout's build, checked on every call (loader/build-check.ts).
        return second.mcpMain(rest, { scriptUrl: import.meta.url, hook: mcpHook(import.meta.url) });
      }
      const root = findRoot(process.cwd(), import.meta.url);
      const relay = root ? claimRelay(root, argv) : null;
      return second.agentMain(rest, {
        scriptUrl: import.meta.url,
        relaySession: relay?.sessionId ?? null,
        relayed: relay?.result ?? null,
      });
    }
    case undefined:
    case "help":
    case "--help":
    case "-h":
      write(USAGE, command ? process.stdout : process.stderr);
      return command ? 0 : 1;
    default:
      if (HUMAN_COMMANDS.has(command)) return humanCommand(command, argv, json);
      write(
        json
          ? JSON.stringify(fail(command, "INVALID_INPUT", `unknown command ${command}`))
          : `cohent: unknown command ${command}\n${USAGE}`,
        json ? process.stdout : process.stderr,
      );
      return 1;
  }
}

// In a host's own process (OpenCode's plugin, loader.ts's in-process API) this part only exports the
// hook: its argv and signals are the host's.
export { hook } from "./loader/in-process-main.js";
const inProcess = loaderHandoff()?.inProcess === true;

// A hook is ended by its client, not by a terminal: no signal handler to install (signal_wrap) on every tool call.
if (!inProcess && process.argv[2] !== "hook")
  process.once("SIGINT", () => {
    // agent cancels its request, prints CANCELLED and exits 130 itself.
    if (process.argv[2] === "agent") return;
    const json = process.argv.includes("--json");
    if (json)
      process.stdout.write(
        JSON.stringify(fail(process.argv[2] ?? "cohent", "CANCELLED", "Interrupted.")) + "\n",
      );
    process.exit(130);
  });

if (!inProcess)
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      process.stderr.write(`cohent: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
