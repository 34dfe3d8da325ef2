import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The third adapter file, next to cohent.cjs: doctor, init and bootstrap,
 * with what only they import. No hook runs them, so they do not ride in the
 * bundle cohent.cjs carries, which every hook process compiles
 * (bench/adapter-coldstart.ts: a hook's start grows with that bundle's size).
 *
 * adapter/build.mjs points the bundle's dynamic import() of those modules
 * here; the sources, run unbundled, import them as they are. A plain
 * CommonJS require, with no code cache: these run once a session or when a
 * person asks.
 */
export const SETUP_FILE = "cohent-setup.cjs";

/** The build's id of the setup file, written into both files (build.mjs): a setup file from another build is refused. */
declare const __cohent_setup_id: string;

/** What a missing, broken or mismatched setup file answers: what is wrong, and the one command that repairs it. */
export const SETUP_UNAVAILABLE = "cohent-setup-unavailable";

function unavailable(what: string): Error {
  return Object.assign(
    new Error(
      `${what}: it holds doctor, init and bootstrap. Repair: npx cohent init --upgrade (it rewrites the adapter's files in .cohent/).`,
    ),
    { code: SETUP_UNAVAILABLE },
  );
}

/** The setup file's exports, through the bundle's require (the loader's own, a real CommonJS require). */
export function loadSetup(scriptUrl: string, load: (id: string) => unknown): unknown {
  const dir = dirname(fileURLToPath(scriptUrl));
  const file = join(dir, SETUP_FILE);
  const name = /[\\/]\.cohent$/.test(dir) ? `.cohent/${SETUP_FILE}` : file;
  let m: { cohentSetupId?: unknown } | null;
  try {
    m = load(file) as { cohentSetupId?: unknown } | null;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw unavailable(
      e?.code === "MODULE_NOT_FOUND" || e?.code === "ENOENT"
        ? `${name} is missing`
        : `${name} is broken (${String(e?.message ?? err).split("\n")[0]})`,
    );
  }
  if (!m || m.cohentSetupId !== __cohent_setup_id)
    throw unavailable(`${name} is not from the same build as the cohent.cjs beside it`);
  return m;
}
