import { compareVersions, COHENT_VERSION } from "@cohent/protocol/version";

/**
 * The committed adapter against the server it talks to. Every envelope's meta
 * names the server's version and the oldest adapter it accepts; this adapter
 * knows its own version (it was bundled with it). The answer says what to run.
 */

export interface VersionVerdict {
  status: "ok" | "warn" | "fail";
  detail: string;
}

export function adapterVersionVerdict(
  meta: { serverVersion?: unknown; minAdapterVersion?: unknown } | undefined,
  adapterVersion: string = COHENT_VERSION,
): VersionVerdict | null {
  const server = typeof meta?.serverVersion === "string" ? meta.serverVersion : null;
  const min = typeof meta?.minAdapterVersion === "string" ? meta.minAdapterVersion : null;
  if (!server) return null; // a server older than version reporting: nothing to compare
  if (min && compareVersions(adapterVersion, min) < 0) {
    return {
      status: "fail",
      detail: `the committed adapter (.cohent/cohent.mjs ${adapterVersion}) is older than the server accepts (${min} or later; the server is ${server}). Upgrade it: npm install -g --allow-scripts=better-sqlite3 cohent@${server}, then cohent init --upgrade in this checkout, and commit the changed files.`,
    };
  }
  if (compareVersions(adapterVersion, server) > 0) {
    return {
      status: "warn",
      detail: `the committed adapter (.cohent/cohent.mjs ${adapterVersion}) is newer than the server (${server}), which may not understand it. Upgrade the server (npm install -g --allow-scripts=better-sqlite3 cohent@${adapterVersion}, then restart cohent serve), or rewrite the adapter with the server's version: npm install -g --allow-scripts=better-sqlite3 cohent@${server} && cohent init --upgrade.`,
    };
  }
  return {
    status: "ok",
    detail: `adapter ${adapterVersion}, server ${server} (accepts adapters from ${min ?? server}).`,
  };
}

/** project.json's record against the file that is actually committed. */
export function recordedVersionVerdict(
  recorded: unknown,
  adapterVersion: string = COHENT_VERSION,
): VersionVerdict | null {
  if (recorded === undefined) return null; // written before versions were recorded; the server check above still applies
  if (recorded !== adapterVersion)
    return {
      status: "warn",
      detail: `.cohent/project.json records adapterVersion ${String(recorded)} but .cohent/cohent.mjs is ${adapterVersion}: run cohent init --upgrade and commit both.`,
    };
  return null;
}
