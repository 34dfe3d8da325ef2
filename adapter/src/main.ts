import { readFileSync } from "node:fs";
import { findRoot, readProject } from "./config.js";
import { fail, type Envelope } from "./envelope.js";
import { execute, pickSession, positionals, RELAYED, renderHuman, shownPacket, type Outcome } from "./commands.js";
import { clientOf, type HookResult } from "./hook.js";
import { armDeadline, runGuardedHook } from "./failsafe.js";
import { recordUsage, usageTarget } from "./usage.js";
import { relayKey, updateRuntime, type Relay } from "./runtime.js";

/**
 * cohent.mjs: the adapter in a user's checkout. Hand-parsed argv and no
 * dependencies: `hook` starts on every tool call. doctor, init and
 * bootstrap load on demand.
 */

const USAGE = `usage: node .cohent/cohent.mjs <command> [--json]
  hook                                   read a Codex or Claude Code hook payload on stdin
  intent '<json>'                        publish the compact structured intent (exits 2 on wait, duplicate, handoff)
  scope <path…>                          claim a write scope; replaces the previous claim
  checkpoint <status> <summary>          working | blocked | completed | abandoned
  context                                the current brief, decisions and peer changes
  doctor                                 project, endpoint, pairing, Codex hook trust, Claude hooks
  bootstrap --approve [--token T]        pair this machine with the repository
  init --server URL [--repo owner/name]  write the project and client files (also: npx cohent init)
  mcp [--repo DIR]                       the stdio MCP server (tools publish, intent, scope, checkpoint, context)
  agent <op> --input <file|-> [--repo DIR]  one JSON request in, one protocol-v1 envelope out; agent schema --task <op>
  doctor --cost [--json] | --clear | --usage on|off   the local usage ledger`;

/**
 * The hook payload. Clients hand it over on a pipe, which a synchronous read
 * takes whole without creating process.stdin (a net.Socket and its stream
 * machinery: measurable on every tool call). A non-blocking descriptor
 * (EAGAIN) falls back to the stream.
 */
function readStdin(): Promise<string> {
  try {
    return Promise.resolve(readFileSync(0, "utf8"));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EAGAIN") return Promise.reject(err);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    process.stdin.on("data", (c: Buffer) => chunks.push(c));
    process.stdin.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    process.stdin.on("error", reject);
  });
}

function write(out: string | undefined, stream: NodeJS.WriteStream) {
  if (out) stream.write(out.endsWith("\n") ? out : out + "\n");
}

function emit(name: string, outcome: Outcome, json: boolean): number {
  if (json) write(JSON.stringify(outcome.envelope), process.stdout);
  else if (outcome.envelope.ok || outcome.envelope.error?.code === "SCOPE_CONFLICT") write(renderHuman(name, outcome.envelope), process.stdout);
  else write(renderHuman(name, outcome.envelope), process.stderr);
  return outcome.exitCode;
}

/** Takes the oldest relay the hook left for exactly these arguments. */
function claimRelay(root: string, argv: readonly string[]): Relay | null {
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

async function agentCommand(name: string, argv: string[], json: boolean): Promise<number> {
  const started = performance.now();
  const root = findRoot(process.cwd(), import.meta.url);
  if (!root) return emit(name, { envelope: fail(name, "NOT_CONFIGURED", "No .cohent/project.json here or above; run npx cohent init --server URL."), exitCode: 1 }, json);
  const relay = claimRelay(root, argv);
  if (relay?.result && relay.result.envelope.error?.code !== "CONTROL_PLANE_UNREACHABLE") return emit(name, relay.result, json);
  let sessionId = relay?.sessionId;
  if (!sessionId) {
    const picked = pickSession(root);
    if ("envelope" in picked) return emit(name, { envelope: picked.envelope, exitCode: 1 }, json);
    sessionId = picked.sessionId;
  }
  const outcome = await execute(name, argv.slice(1), root, sessionId);
  if (outcome.envelope.error?.code === "CONTROL_PLANE_UNREACHABLE" && !relay) {
    outcome.envelope.error.message += " If this runs inside a sandbox without network (Codex workspace-write), run it through the agent's shell tool with Cohent's hooks trusted: the PreToolUse hook performs it outside the sandbox.";
  }
  const shown = shownPacket(outcome.envelope);
  recordUsage({ op: name, surface: "cli", ok: outcome.envelope.ok, code: outcome.envelope.error?.code, chars: shown?.text.length ?? 0, ms: performance.now() - started, repo: repoTag(root) });
  if (shown) {
    const { ack, openCheckout } = await import("./client.js");
    try {
      await ack(openCheckout(root), sessionId, shown.id, shown.text.length);
    } catch {
      /* undercounting is the only cost */
    }
  }
  return emit(name, outcome, json);
}

function repoTag(root: string | null): string | null {
  if (!root || !usageTarget().file) return null;
  try {
    return readProject(root).repository;
  } catch {
    return null;
  }
}

/** One metadata row per hook call when the usage ledger is on: the event, the verdict, the injected characters. */
function recordHookUsage(stdin: string, root: string | null, result: HookResult, ms: number): void {
  if (!usageTarget().file) return;
  let p: { hook_event_name?: string; model?: string } = {};
  try {
    p = JSON.parse(stdin);
  } catch {
    /* recorded as unknown */
  }
  let out: { hookSpecificOutput?: { permissionDecision?: string; additionalContext?: string } } = {};
  try {
    out = result.stdout ? JSON.parse(result.stdout) : {};
  } catch {
    /* plain output */
  }
  const denied = out.hookSpecificOutput?.permissionDecision === "deny";
  recordUsage({
    op: `hook:${p.hook_event_name ?? "unknown"}`, surface: "hook", client: clientOf(p), model: typeof p.model === "string" ? p.model : null,
    ok: result.exitCode === 0 && !denied, code: denied ? "DENIED" : undefined, chars: out.hookSpecificOutput?.additionalContext?.length ?? 0, ms, repo: repoTag(root),
  });
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const json = rest.includes("--json");
  switch (command) {
    case "hook": {
      // Fail closed (failsafe.ts): a deny of our own before the client's hook timeout runs out.
      let event: string | null = null;
      const disarm = armDeadline(() => event, (s) => write(s, process.stdout));
      const started = performance.now();
      const root = findRoot(process.cwd(), import.meta.url);
      const stdin = await readStdin();
      const result = await runGuardedHook(stdin, root, (e) => void (event = e));
      write(result.stdout, process.stdout);
      write(result.stderr, process.stderr);
      recordHookUsage(stdin, root, result, performance.now() - started);
      disarm();
      return result.exitCode;
    }
    case "doctor": {
      if (rest.some((a) => a === "--cost" || a === "--clear" || a === "--usage")) {
        const mod = (await import(new URL("./cohent-mcp.mjs", import.meta.url).href)) as typeof import("./mcp/entry.js");
        return mod.usageCommand(rest, json);
      }
      const { doctor } = await import("./doctor.js");
      return doctor(positionals(rest), json, import.meta.url);
    }
    case "bootstrap": {
      const { bootstrap } = await import("./bootstrap.js");
      return bootstrap(rest, json, import.meta.url);
    }
    case "init": {
      const { initCommand } = await import("./init.js");
      return initCommand(rest, json, import.meta.url);
    }
    case "mcp":
    case "agent": {
      // The second file: the MCP SDK and zod load only here, never on the hook path.
      const mod = (await import(new URL("./cohent-mcp.mjs", import.meta.url).href)) as typeof import("./mcp/entry.js");
      if (command === "mcp") return mod.mcpMain(rest, { scriptUrl: import.meta.url });
      const root = findRoot(process.cwd(), import.meta.url);
      const relay = root ? claimRelay(root, argv) : null;
      return mod.agentMain(rest, { scriptUrl: import.meta.url, relaySession: relay?.sessionId ?? null, relayed: relay?.result ?? null });
    }
    case undefined:
    case "help":
    case "--help":
    case "-h":
      write(USAGE, command ? process.stdout : process.stderr);
      return command ? 0 : 1;
    default:
      if (RELAYED.has(command)) return agentCommand(command, argv, json);
      write(json ? JSON.stringify(fail(command, "INVALID_INPUT", `unknown command ${command}`) as Envelope) : `cohent: unknown command ${command}\n${USAGE}`, json ? process.stdout : process.stderr);
      return 1;
  }
}

process.once("SIGINT", () => {
  // agent cancels its request, prints CANCELLED and exits 130 itself.
  if (process.argv[2] === "agent") return;
  const json = process.argv.includes("--json");
  if (json) process.stdout.write(JSON.stringify(fail(process.argv[2] ?? "cohent", "CANCELLED", "Interrupted.")) + "\n");
  process.exit(130);
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`cohent: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
