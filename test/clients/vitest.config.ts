import { defineConfig } from "vitest/config";

// The real-client conformance suite: `npm run test:clients`. Its files end in
// .conformance.ts, so the root config (test/**/*.test.ts, `npm test`) never picks them up.
export default defineConfig({
  test: {
    include: ["test/clients/**/*.conformance.ts"],
    globalSetup: ["test/clients/global-setup.ts"],
    testTimeout: 300_000,
    hookTimeout: 120_000,
    // Two cores: two client versions at a time, one scenario at a time in each.
    maxWorkers: 2,
    fileParallelism: true,
  },
});
