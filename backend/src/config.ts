import os from "node:os";
import path from "node:path";
import { sqliteUrl } from "./store/db.js";

export const DEFAULT_PORT = 4317;

/** Server data lives outside any repository by default: $XDG_DATA_HOME/cohent. */
export function defaultDataDir(env = process.env): string {
  const base = env.XDG_DATA_HOME || path.join(os.homedir(), ".local", "share");
  return path.join(base, "cohent");
}

/** DATABASE_URL wins; otherwise an embedded SQLite file in the data directory. */
export function resolveDatabaseUrl(opts: { dataDir?: string | undefined }, env = process.env): string {
  if (env.DATABASE_URL) return env.DATABASE_URL;
  return sqliteUrl(opts.dataDir ?? env.COHENT_DATA_DIR ?? defaultDataDir(env));
}

export function resolvePort(flag: string | undefined, env = process.env): number {
  const raw = flag ?? env.COHENT_PORT ?? String(DEFAULT_PORT);
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid port: ${raw}`);
  return port;
}
