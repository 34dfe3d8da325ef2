import { defineConfig } from "vitest/config";

// The official MCP conformance suite against /mcp and the stdio server: `npm run test:mcp-conformance`.
// Its file ends in .conformance.ts, so the root config (test/**/*.test.ts, `npm test`) does not run it.
export default defineConfig({
  test: {
    include: ["test/mcp/**/*.conformance.ts"],
    testTimeout: 300_000,
    hookTimeout: 300_000,
    fileParallelism: false,
  },
});
