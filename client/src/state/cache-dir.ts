import { isAbsolute, join } from "node:path";

/** The user's cache folder for Cohent: $XDG_CACHE_HOME/cohent (absolute only, as the XDG spec says), else ~/.cache/cohent. */
export function cohentCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  const home = env.HOME ?? env.USERPROFILE ?? "";
  return join(xdg && isAbsolute(xdg) ? xdg : join(home, ".cache"), "cohent");
}
