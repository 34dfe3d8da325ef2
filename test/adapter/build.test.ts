import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ADAPTER_FILES } from "../../adapter/src/installer/init.js";
import { buildAdapter } from "../../adapter/build.mjs";
import { builtAdapter } from "./helpers.js";

/**
 * `cohent init` from the workspace builds the adapter and then copies it; the real-client suite runs
 * two inits at a time. A reader in another process, as that other init is, sees each file whole:
 * the last build's or this one's. Written in place, one read in ten found cohent-core.js cut short
 * (measured: 456 of 4,900 reads over 10 builds), and a client suite's checkout was "not from the
 * same build".
 */
describe("the adapter build", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "cohent-build-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("writes every file whole: a reader in another process never sees one cut short", async () => {
    const outfile = path.join(dir, "cohent.mjs");
    await buildAdapter({ quiet: true, outfile });
    const lengths = Object.fromEntries(
      ADAPTER_FILES.map((n) => [n, readFileSync(path.join(dir, n), "utf8").length]),
    );
    const reader = spawn(
      process.execPath,
      [
        "-e",
        `const fs = require("fs"), want = ${JSON.stringify(lengths)}, dir = ${JSON.stringify(dir)};
         let reads = 0, torn = 0;
         process.on("SIGTERM", () => { process.stdout.write(JSON.stringify({ reads, torn })); process.exit(0); });
         (function loop() {
           for (const [n, len] of Object.entries(want)) {
             let got = -1;
             try { got = fs.readFileSync(dir + "/" + n, "utf8").length; } catch {}
             reads++;
             if (got !== len) torn++;
           }
           setImmediate(loop);
         })();`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    reader.stdout.on("data", (d: Buffer) => (out += d));
    await new Promise((r) => setTimeout(r, 300));
    for (let i = 0; i < 4; i++) await buildAdapter({ quiet: true, outfile });
    reader.kill("SIGTERM");
    await new Promise((r) => reader.on("close", r));
    const { reads, torn } = JSON.parse(out) as { reads: number; torn: number };
    expect(reads).toBeGreaterThan(100);
    expect(torn).toBe(0);
    // No temporary file left behind.
    expect(readdirSync(dir).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  }, 120_000);
});

describe("the hook bundle", () => {
  it("keeps zod and the MCP SDK out of cohent.cjs and its code", async () => {
    const dir = path.dirname(await builtAdapter());
    const bundle = ["cohent.cjs", "cohent-core.js"]
      .map((n) => readFileSync(path.join(dir, n), "utf8"))
      .join("\n");
    expect(bundle).not.toMatch(/ZodError|\$ZodType|zod/i);
    expect(bundle).not.toMatch(/modelcontextprotocol|McpServer|StdioServerTransport/);
    // The protocol's own path matcher is in (the one the server uses, not a copy), and minimatch is not.
    expect(bundle).toContain("extglob patterns");
    expect(bundle).not.toContain("braceExpand");
  });
});
