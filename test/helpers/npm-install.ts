import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * `npm install pkg@version` into a folder of its own, outside the workspace's
 * node_modules: the one installer behind the pinned test tools and the real
 * clients. A package.json of its own keeps npm from walking up into a parent
 * project. Returns npm's exit status.
 */
export function npmInstallInto(
  dir: string,
  spec: string,
  opts: { name: string; stdout: "inherit" | "ignore"; extraArgs?: string[] },
): number | null {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: opts.name, private: true }) + "\n");
  const args = ["install", "--prefix", dir, "--no-save", "--no-audit", "--no-fund"];
  const r = spawnSync("npm", [...args, ...(opts.extraArgs ?? []), "--loglevel", "error", spec], {
    stdio: ["ignore", opts.stdout, "inherit"],
    env: { ...process.env, npm_config_update_notifier: "false" },
  });
  return r.status;
}
