import os from "node:os";
import path from "node:path";
import { shipped } from "./shipped.js";

export const DEFAULT_PORT = 4317;

/** Server data lives outside any repository by default: $XDG_DATA_HOME/cohent. */
export function defaultDataDir(env = process.env): string {
  const base = env.XDG_DATA_HOME || path.join(os.homedir(), ".local", "share");
  return path.join(base, "cohent");
}

/** The embedded database of a data directory. (Here, not in store/db.ts: the CLI reads it without loading Prisma.) */
export function sqliteUrl(dataDir: string): string {
  return `file:${path.resolve(dataDir, "cohent.sqlite")}`;
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

/** How the Control Room signs people in, and where its built UI lives. */
export interface ConsoleConfig {
  /** GitHub OAuth; absent means local admin mode (one-time links printed by `cohent serve`). */
  github?: {
    clientId: string;
    clientSecret: string;
    /** https://github.com, or a stand-in (tests) or an Enterprise host. */
    webUrl: string;
    /** https://api.github.com */
    apiUrl: string;
  };
  /** The URL people open; pairing links are built from it. Default: the origin the request came to. */
  publicUrl?: string;
  /** adapter-node's output directory (holds handler.js). */
  buildDir: string;
}

const DEFAULT_BUILD_DIR = shipped("console/build");

export function consoleConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ConsoleConfig {
  const config: ConsoleConfig = { buildDir: env.COHENT_CONSOLE_BUILD ?? DEFAULT_BUILD_DIR };
  if (env.GITHUB_CLIENT_ID && env.GITHUB_CLIENT_SECRET) {
    config.github = {
      clientId: env.GITHUB_CLIENT_ID,
      clientSecret: env.GITHUB_CLIENT_SECRET,
      webUrl: (env.GITHUB_WEB_URL ?? "https://github.com").replace(/\/$/, ""),
      apiUrl: (env.GITHUB_API_URL ?? "https://api.github.com").replace(/\/$/, ""),
    };
  }
  if (env.COHENT_PUBLIC_URL) config.publicUrl = env.COHENT_PUBLIC_URL.replace(/\/$/, "");
  return config;
}
