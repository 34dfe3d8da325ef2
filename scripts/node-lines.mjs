#!/usr/bin/env node
// The Node.js lines Cohent supports, read from the one place they are stated: the root package.json's
// `engines.node`, one caret range per line (`^20.19.0 || ^22.12.0 || ...`). scripts/pack.mjs copies it
// into the published package, README.md says it in the words describeLines() renders (a unit test
// compares them), and .ci/run tests the package on every line this prints.
// Usage: node scripts/node-lines.mjs             -> one major a line: 20, 22, ...
//        node scripts/node-lines.mjs --describe  -> "Node.js 20.19+, 22.12+, 24 or 26"
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const manifest = new URL("../package.json", import.meta.url);

/** The lines in `engines.node`, oldest first: the major and the lowest release of it that is supported. */
export function supportedLines(range = JSON.parse(readFileSync(manifest, "utf8")).engines.node) {
  return range.split("||").map((part) => {
    const m = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(part.trim());
    if (!m)
      throw new Error(
        `engines.node: "${part.trim()}" is not one line's caret range (^<major>.<minor>.<patch>)`,
      );
    return { major: Number(m[1]), floor: `${m[1]}.${m[2]}.${m[3]}` };
  });
}

/** The lines in words, as README.md states them: a line supported from its first release is its major alone. */
export function describeLines(lines = supportedLines()) {
  const words = lines.map(({ major, floor }) =>
    floor === `${major}.0.0` ? String(major) : `${floor.replace(/\.0$/, "")}+`,
  );
  return `Node.js ${words.length > 1 ? `${words.slice(0, -1).join(", ")} or ${words.at(-1)}` : words[0]}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.stdout.write(
    process.argv.includes("--describe")
      ? `${describeLines()}\n`
      : supportedLines()
          .map((l) => `${l.major}\n`)
          .join(""),
  );
}
