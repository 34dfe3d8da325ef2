// Two bundles, split by entry point: adapter/src/main.ts into one dependency-free CommonJS file,
// dist/adapter/cohent-core.js (the hook and the CLI, run by cohent.cjs), and mcp-server/src/entry.ts into the lazily
// loaded second file next to it, cohent-mcp.mjs (the MCP server and the JSON agent CLI: SDK and zod).
// Beside them, cohent.mjs: the two-line ES module entry that people and agents run, which requires
// cohent.cjs. The hooks run cohent.cjs itself: Node's ES module loader costs a process ~8 ms.
//
// cohent.cjs is a small loader (adapter/src/loader/loader.ts) that reads main.ts's bundle from
// cohent-core.js beside it and compiles it through vm.Script with a V8 code cache in the user's
// cache folder, keyed by the bundle's sha256 (adapter/src/loader/code-cache.ts). Node 20 has no
// module compile cache of its own. main.ts's bundle also exports the hook as a function for
// OpenCode's plugin and the warm guard (loader/in-process-main.ts). A separate guard's part of it,
// read alone for an edit or a shell call, bought under 2 ms on a cold call and was removed
// (docs/decisions/0010-one-start-up-path.md).
import { build } from "esbuild";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { brotliCompressSync, constants } from "node:zlib";

const here = dirname(fileURLToPath(import.meta.url));
export const OUTFILE = join(here, "..", "dist", "adapter", "cohent.mjs");
/** The adapter itself, next to cohent.mjs: what the hooks run and what cohent.mjs requires. */
export const ADAPTER_FILE = "cohent.cjs";
/** main.ts's bundle, next to cohent.cjs, which reads it as text and compiles it (adapter/src/loader/loader.ts). */
export const CORE_FILE = "cohent-core.js";
/** The second file, next to cohent.mjs: MCP server and agent CLI (SDK and zod), never parsed by a hook. */
export const MCP_FILE = "cohent-mcp.mjs";
/** The adapter's version, written into both files' headers: the product version (protocol/src/version.ts, also in project.json). */
export const VERSION = /COHENT_VERSION = "([^"]+)"/.exec(
  readFileSync(join(here, "..", "protocol", "src", "version.ts"), "utf8"),
)[1];
/** The line in cohent.cjs's head that says it serves the in-process API (src/loader/in-process-mark.ts). */
export const IN_PROCESS_MARK = /IN_PROCESS_MARK = "([^"]+)"/.exec(
  readFileSync(join(here, "src", "loader", "in-process-mark.ts"), "utf8"),
)[1];
/** How a user regenerates both files in a checkout. */
export const REGENERATE = "npx cohent init --upgrade";

/** The first lines of a generated file: what it is, its version, how to regenerate it. */
export function header(file, what, extra = []) {
  return [
    `// ${file} ${VERSION}: ${what}`,
    `// Generated; do not edit. Regenerate: ${REGENERATE}`,
    ...extra.map((l) => `// ${l}`),
  ].join("\n");
}

/**
 * What the MCP bundle leaves out (measured with esbuild's metafile: zod's locales were 264 KB of
 * 700 KB, ajv with its formats and fast-uri 133 KB):
 * - zod's locales but English, the default: `z.locales` is never used, but `export * as locales`
 *   keeps all 40+ of them;
 * - zod's opt-in schema compiler (z.compile, 29 KB) and z.fromJSONSchema (12 KB): parsing never
 *   uses either (the compiler is installed only by `import "zod/compile"`); the stand-ins throw;
 * - the SDK's default JSON Schema validator (ajv): the server constructs it but uses it only to
 *   check a client's elicitation answer, and Cohent's server never elicits. The stand-in throws.
 * - zod's JSON Schema generator (22 KB): Cohent's schemas are generated at build time
 *   (generatedSchemas), and the SDK's own conversion (toJsonSchemaCompat) serves only McpServer's
 *   tools, which the low-level Server does not use. See jsonSchemaStub.
 * test/mcp and the inspector test run the trimmed file.
 */
export const trimMcp = {
  name: "trim-mcp",
  setup(b) {
    b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({
      contents: 'export { default as en } from "./en.js";',
      loader: "js",
    }));
    const absent = (what) => `() => { throw new Error("${what} is not bundled in Cohent's MCP file."); }`;
    b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]core[\\/]compile\.js$/ }, () => ({
      contents: [
        'export const INVALID = Symbol.for("zod.compile.invalid");',
        "export class ZodCompileAsyncError extends Error {}",
        "export class ZodCompileUnsupportedError extends Error {}",
        `export const compile = ${absent("z.compile")}, withParser = compile, compileFn = compile;`,
      ].join("\n"),
      loader: "js",
    }));
    b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]classic[\\/]from-json-schema\.js$/ }, () => ({
      contents: `export const fromJSONSchema = ${absent("z.fromJSONSchema")};`,
      loader: "js",
    }));
    b.onLoad(
      {
        filter:
          /[\\/]zod[\\/]v4[\\/]core[\\/](json-schema-processors|to-json-schema|json-schema-generator)\.js$/,
      },
      jsonSchemaStub,
    );
    b.onLoad(
      { filter: /[\\/]@modelcontextprotocol[\\/]sdk[\\/]dist[\\/]esm[\\/]validation[\\/]ajv-provider\.js$/ },
      () => ({
        contents:
          'export class AjvJsonSchemaValidator { getValidator() { throw new Error("Cohent\'s MCP server bundles no JSON Schema validator: it never asks the client for input."); } }',
        loader: "js",
      }),
    );
  },
};

/**
 * The stand-in for one of zod's JSON Schema modules, with the real module's export names: each
 * throws when called or constructed, save two. zod calls createStandardJSONSchemaMethod whenever
 * a schema's `~standard` is read (Standard Schema validation), so it and createToJSONSchemaMethod
 * return the throwing function. aggregateChecks is the real one (the module again as `?real`, of
 * which the bundle keeps only it): zod's string, number and date schemas read their bounds
 * through it (.minLength, .maxValue).
 */
async function jsonSchemaStub(args) {
  if (args.suffix === "?real") return undefined;
  const real = ["aggregateChecks"];
  const names = Object.keys(await import(pathToFileURL(args.path).href));
  const file = `./${args.path.split(/[\\/]/).pop()}?real`;
  return {
    contents: [
      `const absent = function () { throw new Error("zod's JSON Schema generator is not bundled in Cohent's MCP file."); };`,
      "const method = () => absent;",
      ...names.map((n) =>
        real.includes(n)
          ? `export { ${n} } from ${JSON.stringify(file)};`
          : `export { ${/^create\w*Method$/.test(n) ? "method" : "absent"} as ${n} };`,
      ),
    ].join("\n"),
    loader: "js",
    resolveDir: dirname(args.path),
  };
}

const common = { bundle: true, platform: "node", target: "node20", minify: true, legalComments: "none" };

/**
 * doctor, init and bootstrap are in main.ts's bundle, reached by a dynamic import() that esbuild
 * turns into a lazily run module. They had a third file of their own, kept out of the bundle that
 * every cold hook deserializes: it bought a cold call 0.5-1.2 ms of CPU, under the 2 ms a layer
 * must buy to stay (docs/decisions/0010-one-start-up-path.md). `init --upgrade` removes that file
 * from a checkout (RETIRED_ADAPTER_FILES in init.ts).
 */

/**
 * One entry as the source of one function expression `(require, module, url) => …`: CommonJS
 * output, with import.meta.url handed in by the loader, and the sha256 of it with the version,
 * which keys its code cache.
 */
async function bundleSource(logLevel, entry) {
  const r = await build({
    ...common,
    logLevel,
    format: "cjs",
    write: false,
    entryPoints: [join(here, "src", entry)],
    define: { "import.meta.url": "__cohent_url" },
  });
  const body = `(function(require,module,__cohent_url){"use strict";${r.outputFiles[0].text}\n})\n`;
  return { body, hash: createHash("sha256").update(`${VERSION}\n${body}`).digest("hex") };
}

/**
 * cohent-core.js: a first line naming the file, the version and the bundle's hash, which the
 * loader checks, then main.ts's bundle.
 */
async function adapterSource(logLevel) {
  const { body, hash } = await bundleSource(logLevel, "main.ts");
  const source = `${coreHead(hash)}${body}`;
  // The loader reads lengths in bytes as lengths in characters (esbuild escapes non-ASCII by default).
  if (/[^\x00-\x7f]/.test(source))
    throw new Error(`${CORE_FILE} is not ASCII: the loader reads it as latin1`);
  return { source, head: coreHead(hash), hash };
}

/** The core file's first line: what it is and its hash. The loader refuses a file that does not start with the line of its own build. */
function coreHead(hash) {
  return `// ${CORE_FILE} ${VERSION} sha256:${hash}: the Cohent adapter's code, run by ${ADAPTER_FILE} beside it. Generated; do not edit. Regenerate: ${REGENERATE}\n`;
}

/**
 * mcp-server/src/schemas.ts's generatedSchemas() (every operation's and tool's JSON Schemas), run
 * here from a bundle of the source with zod whole: the MCP bundle's COHENT_SCHEMAS, so that file
 * needs no JSON Schema generator. Brotli and base64: as JSON they are 70 KB (each operation's
 * output repeats the failure envelope and the packets), compressed 3 KB.
 */
async function generatedSchemas(logLevel) {
  const r = await build({
    bundle: true,
    platform: "node",
    target: "node20",
    logLevel,
    format: "esm",
    write: false,
    stdin: {
      contents: 'export { generatedSchemas } from "./schemas.ts";',
      resolveDir: join(here, "..", "mcp-server", "src"),
      loader: "ts",
    },
  });
  const dir = mkdtempSync(join(tmpdir(), "cohent-schemas-"));
  try {
    const file = join(dir, "schemas.mjs");
    writeFileSync(file, r.outputFiles[0].text);
    const json = JSON.stringify((await import(pathToFileURL(file).href)).generatedSchemas());
    return brotliCompressSync(json, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).toString("base64");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** cohent.mjs: the entry people and agents type, which runs cohent.cjs beside it (no import: no module facade to build). */
export function entrySource() {
  return [
    header("cohent.mjs", `the Cohent adapter's entry; the adapter itself is ${ADAPTER_FILE} beside it.`),
    `process.getBuiltinModule("node:module").createRequire(import.meta.url)("./${ADAPTER_FILE}");`,
    "",
  ].join("\n");
}

/**
 * Each file written whole under a temporary name, then renamed: `cohent init` from the workspace
 * builds before it copies, and another init beside it (the real-client suite runs two) must read
 * the last build or this one, never a file cut short (measured: a checkout whose cohent-core.js
 * was "not from the same build").
 */
function put(file, content) {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, content);
  renameSync(tmp, file);
}

export async function buildAdapter({ quiet = false, outfile = OUTFILE } = {}) {
  mkdirSync(dirname(outfile), { recursive: true });
  const logLevel = quiet ? "silent" : "warning";
  const { source, head, hash } = await adapterSource(logLevel);
  const adapterFile = join(dirname(outfile), ADAPTER_FILE);
  const coreFile = join(dirname(outfile), CORE_FILE);
  put(coreFile, source);
  const loader = await build({
    ...common,
    logLevel,
    format: "cjs",
    write: false,
    entryPoints: [join(here, "src", "loader", "loader.ts")],
    outfile: adapterFile,
    define: {
      COHENT_BUNDLE_HEAD: JSON.stringify(head),
      COHENT_BUNDLE_LENGTH: String(source.length),
      COHENT_BUNDLE_HASH: JSON.stringify(hash),
    },
    banner: {
      js: header(
        ADAPTER_FILE,
        `the Cohent adapter (hook and CLI): this loader, and its code in ${CORE_FILE}.`,
        [
          `bundle sha256:${hash}; Codex trust is keyed to the hook commands, not to this file.`,
          `${IN_PROCESS_MARK}: required by OpenCode's plugin, it runs the hook in OpenCode's process (main.ts's part).`,
        ],
      ),
    },
  });
  put(adapterFile, loader.outputFiles[0].contents);
  put(outfile, entrySource());
  const mcpfile = join(dirname(outfile), MCP_FILE);
  const mcp = await build({
    ...common,
    logLevel,
    format: "esm",
    write: false,
    entryPoints: [join(here, "..", "mcp-server", "src", "entry.ts")],
    outfile: mcpfile,
    plugins: [trimMcp],
    define: { COHENT_SCHEMAS: JSON.stringify(await generatedSchemas(logLevel)) },
    banner: { js: header(MCP_FILE, "the Cohent MCP server and agent CLI, loaded by cohent.mjs on demand.") },
  });
  put(mcpfile, mcp.outputFiles[0].contents);
  if (!quiet)
    process.stderr.write(
      `built ${adapterFile} (${statSync(adapterFile).size} bytes) with ${coreFile} (${statSync(coreFile).size} bytes), its entry ${outfile} and ${mcpfile} (${statSync(mcpfile).size} bytes)\n`,
    );
  return outfile;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await buildAdapter();
