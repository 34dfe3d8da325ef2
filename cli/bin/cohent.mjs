#!/usr/bin/env node
// The workspace's bin: the admin CLI runs the TypeScript sources through tsx, no build step between `npm install`
// and `npx cohent`. The published package's bin (package/bin/cohent.mjs) runs compiled JavaScript instead.
// It lives in its own package so that neither side imports the other: `init` goes to the adapter, the rest to
// the server's admin CLI.
import { parseArgs } from "node:util";
import { register } from "tsx/esm/api";

register();
if (process.argv[2] === "init") {
  const options = {
    server: { type: "string" },
    repo: { type: "string" },
    "mcp-write": { type: "boolean" },
    json: { type: "boolean" },
    upgrade: { type: "boolean" },
  };
  let values;
  try {
    ({ values } = parseArgs({ args: process.argv.slice(3), options }));
    if (!values.server && !values.upgrade) throw new Error("required option '--server <url>' not specified");
  } catch (err) {
    process.stderr.write(
      `cohent init: ${err.message}\nusage: cohent init --server <url> [--repo owner/name] [--mcp-write] [--json] | cohent init --upgrade [--json]\n`,
    );
    process.exit(1);
  }
  const { initFromWorkspace } = await import("@cohent/adapter/init");
  process.exitCode = await initFromWorkspace({
    server: values.server,
    repo: values.repo,
    json: values.json,
    mcpWrite: values["mcp-write"],
    upgrade: values.upgrade,
  });
} else if (process.argv[2] === "torture") {
  // The torture (cli/src/torture/): agents and faults against a deployment, then its history checked.
  const { main } = await import("../src/torture/main.ts");
  const code = await main(process.argv.slice(3), new URL(import.meta.url).pathname);
  if (code >= 0) process.exit(code);
} else {
  const { main } = await import("@cohent/backend/cli");
  await main();
}
