import { readFileSync, writeSync } from "node:fs";
import { codeCacheFile, readCodeCache, writeCodeCache } from "./code-cache.js";
import { previewHook, type HookPreview } from "./fast-path.js";
import { fileUrlOf, type LoaderHandoff } from "./loader-handoff.js";

/**
 * cohent.cjs itself: a small CommonJS module that carries the adapter
 * (main.ts, bundled as one function expression) as a string, and compiles it
 * with vm.Script against the V8 code cache kept in the user's cache folder,
 * so that a hook deserializes its code instead of parsing and compiling
 * 150 KB. The bundle, its hash and this loader travel together. Without a
 * usable cache the bundle compiles as usual, and the cache is written when
 * the process exits, with every function the run compiled.
 *
 * CommonJS because Node's ES module loader costs a process about 8 ms
 * before the first line runs (bench/adapter-coldstart.ts), a fifth of a
 * hook's whole budget. The hooks run this file; cohent.mjs, the name that
 * people and agents type, is a two-line ES module that requires it.
 */

declare const COHENT_BUNDLE: string;
declare const COHENT_BUNDLE_HASH: string;

type Require = (id: string) => unknown;

/**
 * The bundle, named at the top level: V8 compiles this module's top level
 * eagerly and each function lazily, when first called, from its source. A
 * 160 KB literal inside run() was scanned twice, in the top level's preparse
 * and again when run() compiled (~1 ms a hook call, node --cpu-prof); here
 * it is scanned once.
 */
const BUNDLE: string = COHENT_BUNDLE;

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

function run(stdin: string | null, path: string): void {
  const selfUrl = fileUrlOf(__filename);
  const handoff: LoaderHandoff = { import: (url) => import(url), ...(stdin !== null ? { stdin } : {}) };
  (globalThis as { cohentLoader?: LoaderHandoff }).cohentLoader = handoff;
  const file = codeCacheFile(COHENT_BUNDLE_HASH, path);
  const cachedData = file ? readCodeCache(file, COHENT_BUNDLE_HASH) : undefined;
  // node:vm is not among the modules Node has loaded at start: a call that needs no decision never loads it.
  const { Script } = process.getBuiltinModule("node:vm") as typeof import("node:vm");
  const script = new Script(BUNDLE, { filename: selfUrl, cachedData });
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

const stdin = process.argv[2] === "hook" ? readHookStdin() : null;
const preview: HookPreview | null = stdin === null ? null : previewHook(stdin, process.argv.slice(3));
if (!preview?.needsNoDecision)
  run(stdin, preview?.path ?? (process.argv[2] === "hook" ? "hook-other" : "cli"));
else if (preview.stdout) {
  try {
    writeSync(1, preview.stdout + "\n");
  } catch {
    process.stdout.write(preview.stdout + "\n"); // EAGAIN on a non-blocking pipe: the stream retries
  }
}
