// Installs the pinned real clients, each into its own folder under the cache
// (default ~/.cache/cohent-clients, override COHENT_CLIENTS_CACHE), outside the
// root node_modules so a plain `npm ci` stays light. Already-installed ones are
// skipped. Installs run one after another (each is about 400 MB).
//
//   npx tsx test/clients/install.ts            # all four
//   COHENT_CLIENTS=codex@0.169.0 npx tsx test/clients/install.ts
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { npmInstallInto } from "../helpers/npm-install.ts";
import { binPath, installDir, isInstalled, selectedClients, type ClientSpec } from "./clients.ts";

export function installClient(
  c: ClientSpec,
  log: (s: string) => void = (s) => process.stderr.write(s + "\n"),
): void {
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
