import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Suites start real servers and child processes; two cores run two files at once.
    maxWorkers: 2,
    fileParallelism: true,
  },
});
