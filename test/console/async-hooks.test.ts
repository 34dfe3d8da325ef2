import { execFileSync } from "node:child_process";
import path from "node:path";
import { expect, it } from "vitest";
import { ensureConsoleBuilt } from "./browser.js";

/**
 * The Control Room renders in the API's process without AsyncLocalStorage (console/vite.config.ts):
 * one AsyncLocalStorage.run turns on promise hooks for the whole process on Node 20, and every
 * await of the agent API then costs several times as much (with SvelteKit's own: 300,000 awaits
 * 27 -> 156 ms after two pages; without: 21 -> 30 ms). A fresh process times the same awaits
 * before and after the built handler renders its sign-in page and its home.
 */
const SCRIPT = `
const http = require("node:http");
const awaits = async () => { const t = performance.now(); for (let i = 0; i < 300000; i++) await Promise.resolve(); return performance.now() - t; };
(async () => {
  await awaits();
  const before = await awaits();
  const { handler } = await import(require("node:url").pathToFileURL(process.argv[1]).href);
  const srv = http.createServer((q, r) => handler(q, r, () => { r.statusCode = 404; r.end(); }));
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  const statuses = [];
  for (const p of ["/signin", "/"]) {
    const r = await fetch("http://127.0.0.1:" + srv.address().port + p, { redirect: "manual" });
    await r.arrayBuffer();
    statuses.push(r.status);
  }
  srv.close();
  await awaits();
  const after = await awaits();
  process.stdout.write(JSON.stringify({ before, after, statuses }));
})();`;

it("renders pages without turning on promise hooks: awaits cost the same after two pages as before", () => {
  ensureConsoleBuilt();
  const out = execFileSync(process.execPath, ["-e", SCRIPT, path.resolve("console/build/handler.js")], {
    encoding: "utf8",
    env: { ...process.env, NODE_OPTIONS: "" },
  });
  const { before, after, statuses } = JSON.parse(out) as {
    before: number;
    after: number;
    statuses: number[];
  };
  console.log(
    `300,000 awaits: ${before.toFixed(1)} ms before the pages, ${after.toFixed(1)} ms after (${statuses.join(", ")})`,
  );
  expect(statuses[0]).toBe(200);
  expect(after / before).toBeLessThan(2.5);
});
