import { createHash } from "node:crypto";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * Another build of the adapter in a checkout's `.cohent/`, as an upgrade leaves it: cohent-core.js
 * with `edits` applied (each text the same length as what it replaces, so that the loader's length
 * check holds) and the build's hash changed in both files, so that the loader and the code caches
 * take it for what it is, another build. Written as `cohent init --upgrade` writes a file: a new
 * file renamed into place. Its reasons are the edited ones: a call answered with one was decided
 * by this build, not by one a process kept from before.
 */
export function writeVariantBuild(dotCohent: string, edits: [from: string, to: string][]): void {
  const cjsFile = path.join(dotCohent, "cohent.cjs");
  const coreFile = path.join(dotCohent, "cohent-core.js");
  let cjs = readFileSync(cjsFile, "latin1");
  let core = readFileSync(coreFile, "latin1");
  for (const [from, to] of edits) {
    if (from.length !== to.length) throw new Error(`variant edit changes the length: ${from} -> ${to}`);
    if (!core.includes(from)) throw new Error(`variant edit: ${from} is not in cohent-core.js`);
    core = core.split(from).join(to);
  }
  const hashes = new Set([
    ...[...cjs.matchAll(/sha256:([0-9a-f]{64})/g)].map((m) => m[1]!),
    ...[...core.slice(0, core.indexOf("\n")).matchAll(/sha256:([0-9a-f]{64})/g)].map((m) => m[1]!),
  ]);
  if (hashes.size < 1) throw new Error("expected the build's hash, found none");
  for (const h of hashes) {
    const other = createHash("sha256")
      .update(`${h} variant ${JSON.stringify(edits)}`)
      .digest("hex");
    cjs = cjs.split(h).join(other);
    core = core.split(h).join(other);
  }
  for (const [file, text] of [
    [coreFile, core],
    [cjsFile, cjs],
  ] as const) {
    writeFileSync(`${file}.variant`, text, "latin1");
    renameSync(`${file}.variant`, file);
  }
}
