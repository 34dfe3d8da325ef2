#!/usr/bin/env node
// The published `cohent`: compiled JavaScript only (scripts/pack.mjs builds lib/ and adapter/).
// CommonJS, because Node's ES module loader alone costs a fresh process ~6 ms, and `--version`
// and `--help` load nothing else: the version comes from the manifest, the help from lib/help.txt,
// which the pack renders with the compiled CLI itself. Commander renders it again (as it would
// for any other command) when the file is missing or the terminal is narrower than the 80 columns
// the text was laid out for.
// `init` belongs to the client side: the adapter bundle that init copies into a checkout is the
// one that runs it, so the committed adapter and the code that wrote it are the same version.
const { readFileSync, writeSync } = require("node:fs");
const { join } = require("node:path");
const { isatty } = require("node:tty");

const command = process.argv[2];
const alone = process.argv.length === 3;

/** Straight to fd 1: process.stdout on a pipe would first load node's streams and net. */
const print = (text) => {
  try {
    writeSync(1, text);
  } catch {
    process.stdout.write(text);
  }
};

const helpText = () => {
  if (isatty(1) && process.stdout.columns < 80) return null;
  try {
    return readFileSync(join(__dirname, "..", "lib", "help.txt"), "utf8");
  } catch {
    return null;
  }
};

const help = alone && (command === "--help" || command === "-h") ? helpText() : null;
if (command === "--version" || command === "-V") {
  const manifest = JSON.parse(readFileSync(join(__dirname, "..", "package.json"), "utf8"));
  print(manifest.version + "\n");
} else if (help !== null) {
  print(help);
} else if (command === "init") {
  require("../adapter/cohent.cjs");
} else {
  import("../lib/cli.mjs").then(({ main }) => main());
}
