import { join } from "node:path";

/**
 * The user's config folder for Cohent (credentials, preferences):
 * $XDG_CONFIG_HOME/cohent when absolute, else ~/.config/cohent. A module of
 * its own because the loader reads the usage preference from it on every
 * hook call, and config.ts would bring the protocol's code table along.
 */
export function configDir(): string {
  const xdg = process.env.XDG_CONFIG_HOME;
  const home = process.env.HOME ?? process.env.USERPROFILE ?? "";
  return join(xdg && xdg.startsWith("/") ? xdg : join(home, ".config"), "cohent");
}
