import { existsSync } from "node:fs";
import { benchPacketSizes, benchResolveLoaded, benchResolver } from "./backend.js";
import { printed, table } from "./lib.js";
import { replaceSection, runLine } from "./results.js";

/**
 * `npm run bench`: every figure is a ratio against a baseline measured in
 * the same run, on this machine, so runs on different machines compare.
 * Throughput is measured by `npm run bench:load` (bench/load/), with the
 * server and the load generator in separate processes: an in-process loop
 * measured its own fetch calls more than the server.
 */
table("Resolver latency", benchResolver());
table("Resolve including loading (SQLite, one transaction)", await benchResolveLoaded());
table("Packet sizes (tokens = ceil(chars / 4))", await benchPacketSizes());

// Benchmarks of other parts register themselves here as they land.
const extra: { file: string; fn: string; title: string }[] = [
  {
    file: "./adapter-coldstart.ts",
    fn: "benchAdapter",
    title: "Adapter cold start (PreToolUse hook vs node -e 0)",
  },
  {
    file: "./startup.ts",
    fn: "benchStartup",
    title: "Hook start-up: cold, first call of a session, warm (vs node -e 0)",
  },
  {
    file: "./node-lines.ts",
    fn: "benchNodeLines",
    title: "Hook cold start per Node.js line (vs that line's node -e 0)",
  },
  { file: "./mcp-budget.ts", fn: "benchMcp", title: "MCP tools/list budget" },
  {
    file: "./watch-cost.ts",
    fn: "benchWatch",
    title: "The watch's cost per call (its own code: a call with no watch spends none)",
  },
  {
    file: "./build-check.ts",
    fn: "benchBuildCheck",
    title: "The build check of a long-lived guard, per call (the checkout's build decides)",
  },
  {
    file: "./stale-check.ts",
    fn: "benchStale",
    title: "The stale-write check's cost per edit (its own code, one target)",
  },
  {
    file: "./package-start.ts",
    fn: "benchPackage",
    title: "Packaged cohent start-up (compiled, vs node -e 0)",
  },
];
for (const { file, fn, title } of extra) {
  if (!existsSync(new URL(file, import.meta.url))) continue;
  const mod = (await import(file)) as Record<string, () => Promise<Record<string, string | number>[]>>;
  if (typeof mod[fn] === "function") table(title, await mod[fn]!());
}
// The latest figures replace this bench's section of bench/RESULTS.md (results.ts).
replaceSection("npm run bench", [`## \`npm run bench\``, runLine(), ...printed].join("\n\n"));
process.exit(0);
