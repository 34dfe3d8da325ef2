import { readdirSync } from "node:fs";
import { defineConfig } from "vitest/config";

/**
 * Two projects, one run (docs/testing.md). `npm test` runs both; `npm run test:unit` runs `unit`
 * alone, in seconds.
 *
 * unit: pure tables. No server, no database, no child process, no network, no built bundle; a file
 * under the run's temporary folder is allowed. test/helpers/pure.ts makes a process or a socket
 * fail the test, so the layer stays fast.
 * integration: everything else — real servers on loopback over SQLite and PostgreSQL, the built
 * hook and MCP server as child processes, the Control Room in chromium.
 */

/** In test/unit/ but not pure: they run with the integration project. */
const IMPURE_IN_UNIT = [
  "test/unit/store-operations.test.ts", // the operations on a real store, SQLite and PostgreSQL
  "test/unit/postgres-setup.test.ts", // probes a loopback port and the local PostgreSQL
  "test/unit/stale-write.test.ts", // its touch corpus runs `sh -c` (touch, cp -p, …)
];
/** Pure tables outside test/unit/ (besides the *-unit.test.ts files). */
const PURE_ELSEWHERE = [
  "test/adapter/unit.test.ts", // tool classifier, exemption parser, patch targets, redaction
  "test/adapter/exemption-names.test.ts",
  "test/adapter/restore-requested.test.ts",
  "test/clients/retry.test.ts",
];

const UNIT = [
  ...readdirSync(new URL("test/unit/", import.meta.url))
    .filter((f) => f.endsWith(".test.ts"))
    .map((f) => `test/unit/${f}`)
    .filter((f) => !IMPURE_IN_UNIT.includes(f)),
  "test/**/*-unit.test.ts",
  ...PURE_ELSEWHERE,
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Suites start real servers and child processes; two cores run two files at once.
    maxWorkers: 2,
    fileParallelism: true,
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: UNIT,
          // The run's own temporary folder, removed at its end (some tables write a file or two).
          globalSetup: ["test/helpers/tmpdir-setup.ts"],
          setupFiles: ["test/helpers/pure.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["test/**/*.test.ts"],
          exclude: ["**/node_modules/**", ...UNIT],
          // The run's own temporary folder, removed at its end; finds the PostgreSQL half's server
          // (or says loudly, at the start and the end, that it did not run).
          globalSetup: ["test/helpers/tmpdir-setup.ts", "test/helpers/postgres-setup.ts"],
        },
      },
    ],
  },
});
