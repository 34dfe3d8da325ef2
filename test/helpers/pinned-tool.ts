import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/**
 * A test tool that cannot be a workspace devDependency (its engines field asks
 * for a newer Node than the one we support, so a plain `npm install` would warn),
 * installed once at a pinned version into a cache outside node_modules, the way
 * test/clients installs the real clients. Default ~/.cache/cohent-tools,
 * override COHENT_TOOLS_CACHE. Returns the path of its bin.
 */
export function pinnedTool(pkg: string, version: string, bin: string): string {
  const dir = join(
    process.env.COHENT_TOOLS_CACHE || join(homedir(), ".cache", "cohent-tools"),
    `${pkg.replace(/^@[^/]+\//, "")}@${version}`,
  );
  const binPath = join(dir, "node_modules", ".bin", bin);
  if (existsSync(join(dir, ".cohent-installed")) && existsSync(binPath)) return binPath;
  mkdirSync(dir, { recursive: true });
  // A package.json of its own keeps npm from walking up into the workspace.
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: "cohent-tool-cache", private: true }) + "\n",
  );
  const r = spawnSync(
    "npm",
    [
      "install",
      "--prefix",
      dir,
      "--no-save",
      "--no-audit",
      "--no-fund",
      "--engine-strict=false",
      "--loglevel",
      "error",
      `${pkg}@${version}`,
    ],
    {
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...process.env, npm_config_update_notifier: "false" },
    },
  );
  if (r.status !== 0 || !existsSync(binPath))
    throw new Error(`npm install ${pkg}@${version} into ${dir} failed (exit ${r.status})`);
  writeFileSync(join(dir, ".cohent-installed"), `${pkg}@${version}\n`);
  return binPath;
}
