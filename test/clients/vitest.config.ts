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
    // One retry of a whole scenario, fresh workspace: in one of the last CI runs every hook call of
    // one Codex 0.171.0 scenario exited non-zero (the wrapper refused each; the scenario passes alone
    // and in the other runs). Not yet explained; a retry that passes is still printed as a failure.
    retry: 1,
  },
});
