import { readdirSync, readFileSync, realpathSync } from "node:fs";
import { folderState, MAX_SOCKET_PATH, socketFits, warmDir, warmWanted } from "../loader/warm-route.js";
import type { Check } from "./doctor-hosts.js";

/**
 * doctor's line on the warm guard (loader/warm-*.ts): whether the hooks may
 * be answered by it, and when not, why every call runs cold (its folder
 * shared with other users or too deep for a socket, COHENT_WARM=0, Windows). The guards running for
 * this checkout are counted where /proc tells (Linux).
 */

export interface WarmFacts {
  wanted: boolean;
  dir: string;
  folder: "missing" | "private" | "shared";
  /** Whether a guard's socket path fits in that folder (warm-route.ts socketFits). */
  fits?: boolean;
  /** Guards whose working folder is in this checkout; null where that cannot be read. */
  running: number | null;
}

export function warmFacts(root: string, env: NodeJS.ProcessEnv, platform: string): WarmFacts {
  const uid = typeof process.getuid === "function" ? process.getuid() : -1;
  const dir = warmDir(env, uid);
  return {
    wanted: warmWanted(env, platform),
    dir,
    folder: folderState(dir, uid),
    fits: socketFits(dir, "0123456789abcdef.sock"),
    running: platform === "linux" ? running(root) : null,
  };
}

function running(root: string): number | null {
  let real: string;
  try {
    real = realpathSync(root);
  } catch {
    return null;
  }
  let n = 0;
  try {
    for (const pid of readdirSync("/proc")) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        const at = argv.indexOf("warm");
        if (at < 1 || !argv[at - 1]!.endsWith("cohent.cjs")) continue;
        const cwd = realpathSync(`/proc/${pid}/cwd`);
        if (cwd === real || cwd.startsWith(`${real}/`)) n++;
      } catch {
        /* gone, or not ours to read */
      }
    }
  } catch {
    return null;
  }
  return n;
}

export function warmCheck(f: WarmFacts): Check {
  const name = "warm guard";
  if (!f.wanted)
    return {
      name,
      status: "ok",
      detail: "off (COHENT_WARM=0, or Windows): every hook call loads the adapter in its own process.",
    };
  if (f.folder === "shared")
    return {
      name,
      status: "warn",
      detail: `${f.dir} is not a folder only you can use, so the hooks never use it and every call runs cold. Remove it (or chmod 700 it) and the next hook call starts a guard.`,
    };
  if (f.fits === false)
    return {
      name,
      status: "warn",
      detail: `${f.dir} is too deep for a Unix socket's path (${MAX_SOCKET_PATH} bytes), so every hook call runs cold. Set TMPDIR to a shorter folder for the agent.`,
    };
  const count =
    f.running === null
      ? ""
      : f.running === 1
        ? " 1 running for this checkout."
        : ` ${f.running} running for this checkout.`;
  return {
    name,
    status: "ok",
    detail: `on: a hook call that finds none starts one (${f.dir}), and the next calls of the same agent are answered by it; it ends after 10 minutes idle.${count}`,
  };
}
