import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The run's own temporary folder, removed at its end; finds the PostgreSQL half's server (or
    // says loudly, at the start and the end, that it did not run).
    globalSetup: ["test/helpers/tmpdir-setup.ts", "test/helpers/postgres-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Suites start real servers and child processes; two cores run two files at once.
    maxWorkers: 2,
    fileParallelism: true,
  },
});
