// Installs the pinned real clients, each into its own folder under the cache
// (default ~/.cache/cohent-clients, override COHENT_CLIENTS_CACHE), outside the
// root node_modules so a plain `npm ci` stays light. Already-installed ones are
// skipped. Installs run one after another (Codex and Claude about 400 MB each,
// Copilot 190 MB, Gemini CLI and OpenCode about 350 MB).
//
//   npx tsx test/clients/install.ts            # all of them
//   COHENT_CLIENTS=codex@0.169.0 npx tsx test/clients/install.ts
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { npmInstallInto } from "../helpers/npm-install.ts";
import { binPath, installDir, isInstalled, selectedClients, type ClientSpec } from "./clients.ts";

/**
 * OpenCode installs `@opencode-ai/plugin` (its version) into every config folder it loads, from the
 * registry, at start-up; offline it waits about 70 s for that to fail. The probes seed those folders
 * with this install (package.json, package-lock.json, node_modules), which OpenCode then accepts offline.
 */
function installOpencodePluginDeps(c: ClientSpec, log: (s: string) => void): void {
  const dir = join(installDir(c), "plugin-deps");
  if (
    existsSync(join(dir, "package-lock.json")) &&
    existsSync(join(dir, "node_modules", "@opencode-ai", "plugin"))
  )
    return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ dependencies: { "@opencode-ai/plugin": c.version } }, null, 2) + "\n",
  );
  log(`[clients] ${c.label}: npm install @opencode-ai/plugin@${c.version} into ${dir}`);
  const r = spawnSync("npm", ["install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel", "error"], {
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, npm_config_update_notifier: "false" },
  });
  if (r.status !== 0)
    throw new Error(`npm install @opencode-ai/plugin@${c.version} failed (exit ${r.status})`);
}

export function installClient(
  c: ClientSpec,
  log: (s: string) => void = (s) => process.stderr.write(s + "\n"),
): void {
  if (c.kind === "opencode") installOpencodePluginDeps(c, log);
  if (isInstalled(c)) {
    log(`[clients] ${c.label}: already installed in ${installDir(c)}`);
    return;
  }
  const dir = installDir(c);
  log(`[clients] ${c.label}: npm install into ${dir}`);
  const t0 = Date.now();
  const status = npmInstallInto(dir, `${c.pkg}@${c.version}`, {
    name: "cohent-client-cache",
    stdout: "inherit",
  });
  if (status !== 0) throw new Error(`npm install ${c.pkg}@${c.version} failed (exit ${status})`);
  const v = spawnSync(binPath(c), ["--version"], { encoding: "utf8", timeout: 60_000 });
  if (v.status !== 0) throw new Error(`${binPath(c)} --version failed: ${v.stderr}`);
  writeFileSync(join(dir, ".cohent-installed"), `${c.pkg}@${c.version}\n${v.stdout.trim()}\n`);
  log(`[clients] ${c.label}: installed in ${((Date.now() - t0) / 1000).toFixed(0)} s (${v.stdout.trim()})`);
}

export function installAll(): void {
  for (const c of selectedClients()) installClient(c);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) installAll();
