// `npm run pack`: builds the one publishable package, `cohent`, into dist/package and packs it
// into ./cohent-<version>.tgz. The workspace stays private; this is what a team installs.
//
//   bin/cohent.cjs        the bin (package/bin/cohent.cjs)
//   lib/*.mjs             the server and admin CLI, compiled by esbuild (no tsx, no TypeScript at run time),
//                         split so that each command imports what it uses
//   lib/help.txt          `cohent --help`, rendered here by the compiled CLI, so the bin prints it unloaded
//   adapter/*.mjs         the adapter bundles `cohent init` copies into a checkout (adapter/build.mjs)
//   console/build         the built Control Room (scripts/prepare.mjs builds it)
//   prisma/*/migrations   both migration folders; the server applies them at start
//
// Runtime dependencies are only what esbuild cannot inline: the native SQLite driver and the
// PostgreSQL driver. The generated Prisma clients, the driver adapters and the two query compilers
// Prisma's runtime loads (SQLite, PostgreSQL) are bundled, in chunks loaded only by the commands that
// open a database: @prisma/client itself would add 74 MB (every provider's engine) and a postinstall,
// and the adapter's own better-sqlite3 range would compile a second copy.
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";
import { buildAdapter } from "../adapter/build.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const defaultOut = join(root, "dist", "package");
const quiet = process.argv.includes("--quiet");
const log = (line) => quiet || process.stderr.write(line + "\n");

/** The one version (protocol/src/version.ts), read without loading TypeScript. */
export function cohentVersion() {
  const m = /COHENT_VERSION = "([^"]+)"/.exec(
    readFileSync(join(root, "protocol", "src", "version.ts"), "utf8"),
  );
  if (!m) throw new Error("protocol/src/version.ts: COHENT_VERSION not found");
  return m[1];
}

/** The exact versions the workspace was tested with, from the lock file. */
function lockedVersion(name) {
  const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8"));
  const v = lock.packages[`node_modules/${name}`]?.version;
  if (!v) throw new Error(`package-lock.json: ${name} is not installed`);
  return v;
}

/** Packages the bundle leaves to npm: native code, and pg (pure JS, but the PostgreSQL users' to patch). */
const RUNTIME_DEPENDENCIES = ["better-sqlite3", "pg"];

/** Builds the package tree into `out` (default dist/package; tests and the bench pass their own folder). */
export async function buildPackage(out = defaultOut) {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const version = cohentVersion();

  await buildAdapter({ quiet: true, outfile: join(out, "adapter", "cohent.mjs") });

  const consoleBuild = join(root, "console", "build");
  if (!existsSync(join(consoleBuild, "handler.js"))) {
    log("console/build is missing: building the Control Room");
    execFileSync(process.execPath, [join(root, "scripts", "prepare.mjs")], { stdio: "inherit", cwd: root });
  }
  cpSync(consoleBuild, join(out, "console", "build"), {
    recursive: true,
    filter: (src) => !src.endsWith(".map"),
  });

  for (const provider of ["sqlite", "postgres"]) {
    cpSync(join(root, "prisma", provider, "migrations"), join(out, "prisma", provider, "migrations"), {
      recursive: true,
    });
  }

  await build({
    entryPoints: { cli: join(root, "backend", "src", "cli.ts") },
    outdir: join(out, "lib"),
    outExtension: { ".js": ".mjs" },
    bundle: true,
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
    platform: "node",
    target: "node20",
    format: "esm",
    minify: true,
    keepNames: true,
    legalComments: "none",
    logLevel: "warning",
    external: RUNTIME_DEPENDENCIES.flatMap((name) => [name, `${name}/*`]),
    // koa, pino and commander are CommonJS: give the ESM chunks a require().
    banner: {
      js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
    },
  });

  writeFileSync(join(out, "lib", "help.txt"), renderHelp(join(out, "lib", "cli.mjs")));
  cpSync(join(root, "package", "bin"), join(out, "bin"), { recursive: true });
  chmodSync(join(out, "bin", "cohent.cjs"), 0o755);
  cpSync(join(root, "README.md"), join(out, "README.md"));

  const manifest = JSON.parse(readFileSync(join(root, "package", "package.json"), "utf8"));
  manifest.version = version;
  // The supported Node.js lines are stated once, in the workspace's engines (scripts/node-lines.mjs).
  manifest.engines = { node: JSON.parse(readFileSync(join(root, "package.json"), "utf8")).engines.node };
  manifest.dependencies = Object.fromEntries(RUNTIME_DEPENDENCIES.map((name) => [name, lockedVersion(name)]));
  writeFileSync(join(out, "package.json"), JSON.stringify(manifest, null, 2) + "\n");
  return { dir: out, version };
}

/**
 * The top-level help as the compiled CLI renders it at 80 columns. Commander wraps a description
 * to the terminal's width; the text is the same at any width from 80 up only if nothing wraps at
 * 80, which is checked here (the bin asks commander itself below 80 columns).
 */
function renderHelp(cli) {
  const at = (width) =>
    execFileSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const { buildCli } = await import(${JSON.stringify(pathToFileURL(cli).href)});
         let text = "";
         const program = buildCli().configureOutput({ getOutHelpWidth: () => ${width}, writeOut: (s) => (text += s) });
         program.outputHelp();
         process.stdout.write(text);`,
      ],
      { encoding: "utf8", env: { PATH: process.env.PATH } },
    );
  const text = at(80);
  if (!/^Usage: cohent/.test(text)) throw new Error(`cohent --help rendered no usage:\n${text}`);
  if (text !== at(200))
    throw new Error(`cohent --help wraps at 80 columns; shorten the description:\n${text}`);
  return text;
}

/** Packs dist/package into ./cohent-<version>.tgz; returns its path. */
export function packTarball(dir = defaultOut, destination = root) {
  const [info] = JSON.parse(
    execFileSync("npm", ["pack", dir, "--json", "--pack-destination", destination], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    }),
  );
  return join(destination, info.filename);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { dir, version } = await buildPackage();
  const tarball = packTarball(dir);
  log(`packed cohent ${version}: ${tarball} (${(statSync(tarball).size / 1024).toFixed(0)} KiB)`);
}
