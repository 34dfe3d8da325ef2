import { createHash } from "node:crypto";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * Another build of the adapter in a checkout's `.cohent/`, as an upgrade leaves it: cohent-core.js
 * with `edits` applied (each text the same length as what it replaces; "last": only its last
 * occurrence, in the whole adapter's part, the guard's part left as it was, so that the loader's offsets hold) and every hash of the build changed in both files, so that the loader and the code caches
 * take it for what it is, another build. Written as `cohent init --upgrade` writes a file: a new
 * file renamed into place. Its reasons are the edited ones: a call answered with one was decided
 * by this build, not by one a process kept from before.
 */
export function writeVariantBuild(
  dotCohent: string,
  edits: [from: string, to: string, where?: "last"][],
): void {
  const cjsFile = path.join(dotCohent, "cohent.cjs");
  const coreFile = path.join(dotCohent, "cohent-core.js");
  let cjs = readFileSync(cjsFile, "latin1");
  let core = readFileSync(coreFile, "latin1");
  for (const [from, to, where] of edits) {
    if (from.length !== to.length) throw new Error(`variant edit changes the length: ${from} -> ${to}`);
    const at = core.lastIndexOf(from);
    if (at < 0) throw new Error(`variant edit: ${from} is not in cohent-core.js`);
    // "last": only the last one, in main.ts's part (the whole adapter, after the guard's part).
    core =
      where === "last" ? core.slice(0, at) + to + core.slice(at + from.length) : core.split(from).join(to);
  }
  const hashes = new Set([
    ...[...cjs.matchAll(/sha256:([0-9a-f]{64})/g)].map((m) => m[1]!),
    ...[...core.slice(0, core.indexOf("\n")).matchAll(/sha256:([0-9a-f]{64})/g)].map((m) => m[1]!),
  ]);
  if (hashes.size < 3) throw new Error(`expected the build's three hashes, found ${hashes.size}`);
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
