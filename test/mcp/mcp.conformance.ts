import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { pinnedTool } from "../helpers/pinned-tool.js";
import { startBackend, type TestBackend } from "../helpers/backend.js";
import { childEnv, makeRepo, type Repo } from "./helpers.js";
import { authProxy, stdioShim, type Listening } from "./conformance/shims.js";

/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`,
 * pinned; it wants Node 22, installed from the npm registry by
 * scripts/node-line.mjs) runs its whole active server suite against the
 * backend's /mcp (through a proxy that adds the agent token: the suite's
 * client sends none) and against the stdio server (through the thin HTTP
 * shim of conformance/shims.ts). Every scenario that applies must pass; the
 * ones that cannot apply to Cohent are in conformance/not-applicable.yml,
 * each with its reason, and one of them passing fails the run too.
 */

const CONFORMANCE = { pkg: "@modelcontextprotocol/conformance", version: "0.1.16" };
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, "..", "..");
const baseline = path.join(here, "conformance", "not-applicable.yml");

let backend: TestBackend, repo: Repo, node22: string, bin: string;
let http: Listening, stdio: Listening;

beforeAll(async () => {
  node22 = execFileSync(process.execPath, [path.join(root, "scripts", "node-line.mjs"), "22"], {
    encoding: "utf8",
  }).trim();
  bin = path.join(
    path.dirname(pinnedTool(CONFORMANCE.pkg, CONFORMANCE.version, "conformance")),
    "..",
    "@modelcontextprotocol",
    "conformance",
    "dist",
    "index.js",
  );
  backend = await startBackend({ kind: "sqlite" });
  await backend.addRepo("acme/conformance");
  const token = await backend.issueToken("acme/conformance", "conformance");
  http = await authProxy(`${backend.url}/mcp`, token);
  repo = await makeRepo(backend.url, "acme/conformance");
  const stdioToken = await backend.issueToken("acme/conformance", "conformance-stdio");
  stdio = await stdioShim(() => ({
    command: process.execPath,
    args: [repo.script, "mcp"],
    cwd: repo.root,
    env: childEnv(repo, { COHENT_AGENT_TOKEN: stdioToken }),
  }));
});

afterAll(async () => {
  await http?.close();
  await stdio?.close();
  await backend?.stop();
});

/** One run of the suite: its exit code, and each scenario's checks by status. */
async function conformance(url: string) {
  const out = mkdtempSync(path.join(os.tmpdir(), "cohent-conformance-"));
  const args = [bin, "server", "--url", url, "--expected-failures", baseline, "-o", out];
  const child = spawn(node22, args, { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stdout.on("data", (c) => (log += c));
  child.stderr.on("data", (c) => (log += c));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  const results = new Map<string, string[]>();
  for (const dir of readdirSync(out)) {
    // <mode>-<scenario>-<time>: server-tools-list-2026-12-01T15-35-58-931Z.
    const scenario = dir.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
    const checks = JSON.parse(readFileSync(path.join(out, dir, "checks.json"), "utf8")) as {
      status: string;
    }[];
    results.set(
      scenario,
      checks.map((c) => c.status),
    );
  }
  rmSync(out, { recursive: true, force: true });
  return { code, log, results };
}

/**
 * tools-call-simple-text and tools-call-error call fixture tools Cohent does not have; they pass
 * because an unknown tool is answered as the suite asks of a tool error (isError, text content).
 */
const APPLIES = [
  "tools-call-simple-text",
  "tools-call-error",
  "server-initialize",
  "ping",
  "tools-list",
  "dns-rebinding-protection",
  "server-sse-multiple-streams",
];

it.each([
  ["/mcp", () => http.url],
  ["stdio (HTTP shim)", () => stdio.url],
])("passes every scenario that applies against %s", async (name, url) => {
  const t0 = Date.now();
  const run = await conformance(url());
  // INFO is a pass that notes a choice (server-sse-multiple-streams: /mcp answers JSON, SSE being optional).
  const passed = APPLIES.filter((s) => run.results.get(s)?.every((st) => st === "SUCCESS" || st === "INFO"));
  console.log(
    `mcp conformance ${CONFORMANCE.version} against ${name}: ${passed.length}/${APPLIES.length} applicable scenarios pass (${APPLIES.join(", ")}); ${run.results.size - APPLIES.length} not applicable; ${Date.now() - t0} ms`,
  );
  expect(run.code, run.log.slice(-4000)).toBe(0);
  expect(passed).toEqual(APPLIES);
});
