import { existsSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { npmInstallInto } from "./npm-install.js";

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
  const status = npmInstallInto(dir, `${pkg}@${version}`, {
    name: "cohent-tool-cache",
    stdout: "ignore",
    extraArgs: ["--engine-strict=false"],
  });
  if (status !== 0 || !existsSync(binPath))
    throw new Error(`npm install ${pkg}@${version} into ${dir} failed (exit ${status})`);
  writeFileSync(join(dir, ".cohent-installed"), `${pkg}@${version}\n`);
  return binPath;
}
