import { closeSync, openSync, readFileSync, readSync, writeSync } from "node:fs";
import { codeCacheFile, readCodeCache, writeCodeCache } from "./code-cache.js";
import { previewHook, type HookPreview } from "./fast-path.js";
import type { Out } from "../hosts/dialect.js";
import { fileUrlOf, type LoaderHandoff } from "./loader-handoff.js";

/**
 * cohent.cjs itself: a small CommonJS module that reads the adapter (main.ts,
 * bundled as one function expression) from cohent-core.js beside it, and
 * compiles it with vm.Script against the V8 code cache kept in the user's
 * cache folder, so that a hook deserializes its code instead of parsing and
 * compiling 160 KB. Without a usable cache the bundle compiles as usual, and
 * the cache is written when the process exits, with every function the run
 * compiled.
 *
 * The bundle is a file of its own, not a string literal in this one: Node
 * compiles this module on every hook call, a call that needs no decision
 * included, and a 160 KB literal cost that compile ~1 ms to scan (node
 * --cpu-prof; callgrind: 4 M of a Read's 98 M instructions).
 *
 * CommonJS because Node's ES module loader costs a process about 8 ms
 * before the first line runs (bench/adapter-coldstart.ts), a fifth of a
 * hook's whole budget. The hooks run this file; cohent.mjs, the name that
 * people and agents type, is a two-line ES module that requires it.
 */

declare const COHENT_BUNDLE_HEAD: string;
declare const COHENT_BUNDLE_LENGTH: number;
declare const COHENT_BUNDLE_HASH: string;

type Require = (id: string) => unknown;

const CORE_FILE = "cohent-core.js";

/**
 * cohent-core.js, or why it cannot run: missing, unreadable, or not of this
 * build (its first line names the build's hash, and its length is this
 * build's: the code cache is keyed by that hash, and V8 checks of a source
 * only its length). The build writes it in ASCII (adapter/build.mjs checks),
 * so its length in bytes is its length in characters: one read of that many
 * bytes and one more (a longer file is another build's) into one buffer, and
 * a latin1 decode, where readFileSync(…, "utf8") reads in 8 KiB steps (20
 * reads for this file, strace). With the process.exit below: an in-scope
 * edit 1.274 → 1.257× of `node -e 0`, medians of 50 interleaved rounds on a
 * quiet machine; about a millisecond, within one bench run's noise.
 */
function readCore(): { source: string } | { reason: string } {
  const name = /[\\/]\.cohent$/.test(__dirname) ? `.cohent/${CORE_FILE}` : `${__dirname}/${CORE_FILE}`;
  const repair = `Repair: npx cohent init --upgrade (it rewrites the adapter's files in .cohent/).`;
  let source: string;
  try {
    source = readExactly(`${__dirname}/${CORE_FILE}`, COHENT_BUNDLE_LENGTH + 1);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return {
      reason: `Cohent: ${name} ${code === "ENOENT" ? "is missing" : `cannot be read (${code})`}: it holds the adapter's code. ${repair}`,
    };
  }
  if (source.length !== COHENT_BUNDLE_LENGTH || !source.startsWith(COHENT_BUNDLE_HEAD))
    return { reason: `Cohent: ${name} is not from the same build as the cohent.cjs beside it. ${repair}` };
  return { source };
}

/** Up to `max` bytes of a file (fewer only at its end), as latin1. */
function readExactly(file: string, max: number): string {
  const buf = Buffer.allocUnsafe(max);
  const fd = openSync(file, "r");
  try {
    let n = 0;
    for (let r = -1; r !== 0 && n < max; n += r) r = readSync(fd, buf, n, max - n, null);
    return buf.toString("latin1", 0, n);
  } finally {
    closeSync(fd);
  }
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

function run(source: string, stdin: string | null, path: string): void {
  const selfUrl = fileUrlOf(__filename);
  const handoff: LoaderHandoff = { import: (url) => import(url), ...(stdin !== null ? { stdin } : {}) };
  (globalThis as { cohentLoader?: LoaderHandoff }).cohentLoader = handoff;
  const file = codeCacheFile(COHENT_BUNDLE_HASH, path);
  const cachedData = file ? readCodeCache(file, COHENT_BUNDLE_HASH) : undefined;
  // node:vm is not among the modules Node has loaded at start: a call that needs no decision never loads it.
  const { Script } = process.getBuiltinModule("node:vm") as typeof import("node:vm");
  const script = new Script(source, { filename: selfUrl, cachedData });
  if (file && (!cachedData || script.cachedDataRejected)) {
    process.once("exit", () => {
      try {
        writeCodeCache(file, COHENT_BUNDLE_HASH, script.createCachedData());
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

// At a hook call's natural end (the loop empty, the answer written): process.exit skips Node's
// teardown of the V8 heap, a munmap per page (an edit: 30 munmap calls where it made 57, strace;
// readCore says what both changes measured). The 'exit' listeners, the code cache's write, still run.
if (process.argv[2] === "hook") process.once("beforeExit", () => process.exit());

const stdin = process.argv[2] === "hook" ? readHookStdin() : null;
const preview: HookPreview | null = stdin === null ? null : previewHook(stdin, process.argv.slice(3));
if (!preview?.needsNoDecision) {
  const core = readCore();
  if ("source" in core)
    run(core.source, stdin, preview?.path ?? (process.argv[2] === "hook" ? "hook-other" : "cli"));
  else if (process.argv[2] === "hook") {
    // Refused in the host's own dialect: a hook that only failed would let the tool run in some hosts.
    const out: Out = preview ? preview.unloadable(core.reason) : { stderr: core.reason, exitCode: 2 };
    if (out.stdout) put(1, out.stdout + "\n");
    if (out.stderr) put(2, out.stderr + "\n");
    process.exitCode = out.exitCode;
  } else {
    put(2, core.reason + "\n");
    process.exitCode = 1;
  }
} else if (preview.stdout) put(1, preview.stdout + "\n");
