#!/usr/bin/env node
// The published `cohent`: compiled JavaScript only (scripts/pack.mjs builds lib/ and adapter/).
// `init` belongs to the client side: the adapter bundle that init copies into a checkout is the
// one that runs it, so the committed adapter and the code that wrote it are the same version.
// `--version` reads the manifest and loads nothing else.
import { readFileSync } from "node:fs";

const command = process.argv[2];
if (command === "--version" || command === "-V") {
  process.stdout.write(
    JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version + "\n",
  );
} else if (command === "init") {
  await import("../adapter/cohent.mjs");
} else {
  const { main } = await import("../lib/cli.mjs");
  await main();
}
