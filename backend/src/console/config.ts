import path from "node:path";
import { fileURLToPath } from "node:url";

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

const DEFAULT_BUILD_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../console/build");

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
