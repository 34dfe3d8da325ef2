import { closeSync, fstatSync, openSync, readFileSync, readSync, writeSync } from "node:fs";
import {
  buildStamps,
  checkedHook,
  failureKind,
  CORE_FILE,
  REPAIR,
  shownName,
  stampOf,
  type InProcessHook,
} from "./build-check.js";
import { IN_PROCESS_MARK } from "./in-process-mark.js";
import { codeCacheFile, readCodeCache, writeCodeCache } from "./code-cache.js";
import { previewHook, type HookPreview } from "./fast-path.js";
import type { Out } from "../hosts/dialect.js";
import { fileUrlOf, type LoaderHandoff } from "./loader-handoff.js";
import { isHost } from "@cohent/protocol/hosts";
import { hostFlag } from "../hosts/detect.js";
import { DEADLINE_MS } from "../transports/deadline-ms.js";
import { forwardWarm, freeName, routeOf, startWarm, type Route } from "./warm-forward.js";
import { warmWanted, type Caller } from "./warm-route.js";
import { serveWarm } from "./warm-serve.js";

/**
 * cohent.cjs itself: a small CommonJS module that reads the adapter (main.ts,
 * bundled as one function expression) from cohent-core.js beside it, and
 * compiles it with vm.Script against the V8 code cache kept in the user's
 * cache folder, so that a cold hook deserializes its code instead of parsing
 * and compiling 340 KB: 10.8 ms of an edit's CPU (docs/decisions/0010-one-start-up-path.md).
 * Without a usable cache the bundle compiles as usual, and the cache is
 * written when the process exits, with every function the run compiled.
 *
 * The bundle is a file of its own, not a string literal in this one: Node
 * compiles this module on every hook call, a call that needs no decision
 * included, and a 160 KB literal (the bundle then) cost that compile ~1 ms to scan (node
 * --cpu-prof; callgrind: 4 M of a Read's 98 M instructions).
 *
 * CommonJS because Node's ES module loader costs a process about 8 ms
 * before the first line runs (bench/adapter-coldstart.ts), a fifth of a
 * hook's whole budget. The hooks run this file; cohent.mjs, the name that
 * people and agents type, is a two-line ES module that requires it.
 *
 * A hook call that needs a decision goes first to the warm guard
 * (warm-forward.ts): a process of the same user, checkout, build and agent
 * that has the adapter loaded already (`cohent.cjs warm`, warm-serve.ts).
 * Only when none answers does the bundle load here (the cold path: the first
 * call of a session, Windows, an unusable temporary folder), and the call
 * then starts one for the next.
 */

declare const COHENT_BUNDLE_HEAD: string;
declare const COHENT_BUNDLE_LENGTH: number;
declare const COHENT_BUNDLE_HASH: string;
type Require = (id: string) => unknown;

/**
 * The adapter's code from cohent-core.js, or why it cannot run: missing,
 * unreadable, or not of this build (its first line names the build's hash,
 * and its length is this build's: the code cache is keyed by that hash, and
 * V8 checks of a source only its length). The build writes it in ASCII
 * (adapter/build.mjs checks), so its length in bytes is its length in
 * characters: it is read whole into one buffer and decoded as latin1.
 */
function readCode(): { source: string } | { reason: string } {
  const name = shownName(__dirname, CORE_FILE);
  const repair = REPAIR;
  const head = COHENT_BUNDLE_HEAD.length;
  let fd: number;
  try {
    fd = openSync(`${__dirname}/${CORE_FILE}`, "r");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return {
      reason: `Cohent: ${name} ${code === "ENOENT" ? "is missing" : `cannot be read (${code})`}: it holds the adapter's code. ${repair}`,
    };
  }
  let ours: boolean;
  let source: string;
  try {
    ours = fstatSync(fd).size === COHENT_BUNDLE_LENGTH;
    const text = readAt(fd, COHENT_BUNDLE_LENGTH);
    ours &&= text.startsWith(COHENT_BUNDLE_HEAD);
    source = text.slice(head);
  } catch (err) {
    return { reason: `Cohent: ${name} cannot be read (${(err as NodeJS.ErrnoException).code}). ${repair}` };
  } finally {
    closeSync(fd);
  }
  if (!ours)
    return { reason: `Cohent: ${name} is not from the same build as the cohent.cjs beside it. ${repair}` };
  return { source };
}

/** The first `length` bytes of a file (fewer only at its end), as latin1. */
function readAt(fd: number, length: number): string {
  const buf = Buffer.allocUnsafe(length);
  let n = 0;
  for (let r = -1; r !== 0 && n < length; n += r) r = readSync(fd, buf, n, length - n, n);
  return buf.toString("latin1", 0, n);
}

/**
 * The hook payload, read whole here so that a call that needs no decision
 * ends before the bundle loads; null when stdin is not a readable pipe or
 * file (EAGAIN: main.ts reads the stream).
 */
function readHookStdin(): string | null {
  try {
    return readFileSync(0, "utf8");
  } catch {
    return null;
  }
}

function run(source: string, stdin: string | null, path: string, stamps: readonly string[] | null): void {
  const selfUrl = fileUrlOf(__filename);
  const handoff: LoaderHandoff = {
    import: (url) => import(url),
    ...(stdin !== null ? { stdin } : {}),
    ...(stamps ? { stamps } : {}),
  };
  (globalThis as { cohentLoader?: LoaderHandoff }).cohentLoader = handoff;
  const hash = COHENT_BUNDLE_HASH;
  const file = codeCacheFile(hash, path);
  const cachedData = file ? readCodeCache(file, hash) : undefined;
  // node:vm is not among the modules Node has loaded at start: a call that needs no decision never loads it.
  const { Script } = process.getBuiltinModule("node:vm") as typeof import("node:vm");
  const script = new Script(source, { filename: selfUrl, cachedData });
  if (file && (!cachedData || script.cachedDataRejected)) {
    process.once("exit", () => {
      try {
        writeCodeCache(file, hash, script.createCachedData());
      } catch {
        /* no cache this time */
      }
    });
  }
  // The bundle's require, for Node built-ins only.
  (script.runInThisContext() as (require: Require, module: { exports: unknown }, url: string) => void)(
    require as Require,
    { exports: {} },
    selfUrl,
  );
}

/** Writes to a descriptor whole; EAGAIN on a non-blocking pipe hands the rest to the stream, which retries. */
function put(fd: 1 | 2, text: string): void {
  try {
    writeSync(fd, text);
  } catch {
    (fd === 1 ? process.stdout : process.stderr).write(text);
  }
}

/** Reads and runs cohent-core.js; when it cannot, refuses in the host's dialect (a hook) or fails (a command). */
function load(stdin: string | null, path: string): void {
  // The MCP server outlives its start: it checks the build it runs against the checkout's on every
  // call (build-check.ts). Stamped before the read: a change while it reads is a change seen.
  const built = process.argv[2] === "mcp" ? buildStamps(__dirname) : null;
  let code = readCode();
  if ("source" in code)
    try {
      return run(code.source, stdin, path, built && "stamps" in built ? built.stamps : null);
    } catch (err) {
      // A build that does not compile or throws as it starts: refused as the long-lived guards refuse it.
      code = {
        reason: `Cohent: ${shownName(__dirname, CORE_FILE)} failed to load (${failureKind(err)}). ${REPAIR}`,
      };
    }
  if (process.argv[2] === "hook") {
    // Refused in the host's own dialect: a hook that only failed would let the tool run in some hosts.
    const out: Out = preview ? preview.unloadable(code.reason) : { stderr: code.reason, exitCode: 2 };
    if (out.stdout) put(1, out.stdout + "\n");
    if (out.stderr) put(2, out.stderr + "\n");
    process.exitCode = out.exitCode;
  } else {
    put(2, code.reason + "\n");
    process.exitCode = 1;
  }
}

// IN_PROCESS_MARK on globalThis (OpenCode's plugin, while it requires this file): only export `hook`.
// Every other require (cohent.mjs, a test's wrapper) runs the program, as it always did.
export { IN_PROCESS_MARK };

/**
 * One hook call in the caller's process (OpenCode's plugin, the warm guard): the whole adapter's
 * decision (hook-in-process.ts), its answer as the spawned hook would print it. The rule of every
 * long-lived guard (build-check.ts): cohent-core.js is stat'ed on every call and compiled again
 * when it changed (an upgrade, a repair); missing, of another build, failing to load or throwing,
 * the call is refused in the host's dialect with the repair, as the spawned loader refuses it. No
 * code cache: it compiles once per build, and Bun (OpenCode) rejects V8's.
 */
export const hook: InProcessHook = checkedHook({
  stamp: () => {
    const stamp = coreStamp();
    if (stamp) return { stamp };
    return {
      reason: `Cohent: ${shownName(__dirname, CORE_FILE)} is missing: it holds the adapter's code. ${REPAIR}`,
    };
  },
  load: compileWhole,
  name: shownName(__dirname, CORE_FILE),
});

/** main.ts's bundle compiled in this process, for its exported hook (in-process-main.ts), or why it cannot be. */
function compileWhole(): InProcessHook | { reason: string } {
  const code = readCode();
  if (!("source" in code)) return code;
  const selfUrl = fileUrlOf(__filename);
  // The relay's import() of cohent-mcp.mjs: code compiled by vm.Script has none of its own.
  // inProcess: main.ts then exports its hook and runs no CLI on the host's argv.
  (globalThis as { cohentLoader?: LoaderHandoff }).cohentLoader = {
    ...(globalThis as { cohentLoader?: LoaderHandoff }).cohentLoader,
    import: (url) => import(url),
    inProcess: true,
  };
  const { Script } = process.getBuiltinModule("node:vm") as typeof import("node:vm");
  const mod = { exports: {} as { hook?: InProcessHook } };
  (
    new Script(code.source, { filename: selfUrl }).runInThisContext() as (
      require: Require,
      module: { exports: unknown },
      url: string,
    ) => void
  )(require as Require, mod, selfUrl);
  if (typeof mod.exports.hook !== "function")
    return { reason: `Cohent: ${shownName(__dirname, CORE_FILE)} has no in-process hook. ${REPAIR}` };
  return mod.exports.hook;
}

const coreStamp = () => stampOf(`${__dirname}/${CORE_FILE}`);

/** This process as the warm guard tells its callers apart (warm-route.ts); null when it cannot tell. */
function callerNow(): Caller | null {
  const self = stampOf(__filename);
  const core = coreStamp();
  if (!self || !core || typeof process.getuid !== "function") return null;
  try {
    return {
      uid: process.getuid(),
      cwd: process.cwd(),
      dir: __dirname,
      stamps: [self, core],
      env: process.env,
    };
  } catch {
    return null; // the working folder is gone
  }
}

let preview: HookPreview | null = null;
if ((globalThis as { cohentInProcess?: unknown }).cohentInProcess !== IN_PROCESS_MARK) {
  // At a hook call's natural end (the loop empty, the answer written): process.exit skips Node's
  // teardown of the V8 heap, a munmap per page (an edit: 30 munmap calls where it made 57, strace;
  // readCore says what both changes measured). The 'exit' listeners, the code cache's write, still run.
  if (process.argv[2] === "hook") process.once("beforeExit", () => process.exit());
  const stdin = process.argv[2] === "hook" ? readHookStdin() : null;
  preview = stdin === null ? null : previewHook(stdin, process.argv.slice(3));
  if (process.argv[2] === "warm") serveWarm(process.argv[3] ?? "", callerNow, hook);
  else if (!preview?.needsNoDecision) {
    const path = preview?.path ?? (process.argv[2] === "hook" ? "hook-other" : "cli");
    const route = stdin !== null && preview ? warmRoute() : null;
    if (route) void warmThenCold(route, stdin!, path, preview!);
    else load(stdin, path);
  } else if (preview.stdout) put(1, preview.stdout + "\n");
}

/** Where this hook call may be answered warm (warm-forward.ts), or null: the adapter loads here. */
function warmRoute(): Route | null {
  if (!warmWanted(process.env, process.platform)) return null;
  const host = hostFlag(process.argv.slice(3));
  if (host === null || !isHost(host)) return null;
  const caller = callerNow();
  return caller ? routeOf(caller) : null;
}

/**
 * The call handed to the warm guard; when none answers, the adapter loads
 * here as before (cold), and a guard is started for the next call as this
 * process exits, its answer written. A guard that stays silent past the
 * hook's deadline gets the refusal the adapter's own deadline writes, and
 * loses its name.
 */
async function warmThenCold(route: Route, stdin: string, path: string, p: HookPreview): Promise<void> {
  const r = await forwardWarm(route, { argv: process.argv.slice(3), stdin }, DEADLINE_MS + 1_000);
  if (typeof r === "object") {
    if (r.stdout) put(1, r.stdout.endsWith("\n") ? r.stdout : r.stdout + "\n");
    if (r.stderr) put(2, r.stderr.endsWith("\n") ? r.stderr : r.stderr + "\n");
    process.exitCode = r.exitCode;
    return;
  }
  if (r === "late") {
    // A guard that hangs answers nobody again: its name is freed, so the next call runs cold and starts another.
    freeName(route);
    const out = p.unloadable(
      `Cohent: the warm guard did not answer within ${DEADLINE_MS / 1000} s, so this call is refused. Try again; if it persists run node .cohent/cohent.mjs doctor`,
    );
    if (out.stdout) put(1, out.stdout + "\n");
    if (out.stderr) put(2, out.stderr + "\n");
    process.exitCode = out.exitCode;
    return;
  }
  if (r === "absent") process.once("exit", () => startWarm(route, __filename));
  load(stdin, path);
}
