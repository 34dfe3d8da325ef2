import { afterAll, beforeAll, expect, it } from "vitest";
import { startBackend, type TestBackend } from "../helpers/backend.js";
import { connect, makeRepo } from "./helpers.js";
import { connectHttp } from "./http-helpers.js";

/**
 * The same answers over both transports: one script of tool calls, run by
 * the stdio server (the built .cohent/cohent.mjs, as a child process) in
 * one repository and over /mcp in an identical one, gives the same
 * envelopes, once ids, times and the repository's name are masked. (An
 * absolute path is INVALID_PATH on both, but only stdio has a checkout to
 * place it in, so the two messages differ: http-hostile covers /mcp's.
 * And after the intent closes, stdio still remembers it in runtime.json,
 * while /mcp reads the session's open intent from the database: its
 * context then says "No open work intent" where stdio's says "Your intent
 * is completed"; a store read of a session's latest intent, open or not,
 * would close that gap.)
 */

let backend: TestBackend;
beforeAll(async () => {
  backend = await startBackend({ kind: "sqlite" });
});
afterAll(() => backend?.stop());

const SCRIPT: [string, Record<string, unknown>][] = [
  ["context", {}],
  ["checkpoint", { status: "working" }],
  ["intent", { intent: { objective: "Cart page", outputs: ["cart-page"], components: ["web"] } }],
  ["publish", { prompt: "Add a cart page", paths: ["src/cart"] }],
  ["intent", { intent: { objective: "Cart page", outputs: ["cart-page"], components: ["web"] } }],
  ["scope", { paths: ["src/cart/**", "./src/cart.css"] }],
  [
    "checkpoint",
    { status: "working", summary: "skeleton", source: { kind: "paths", paths: ["src/cart/a.ts"] } },
  ],
  ["request-release", { paths: ["src/other/**"], note: "please" }],
  ["context", {}],
  ["publish", { prompt: 7 }],
  ["checkpoint", { status: "completed", summary: "done" }],
];

/** Masks what differs between two runs by nature: ids, times, cursors, the repository, the session's key. */
function masked(v: unknown, repo: string): unknown {
  return JSON.parse(
    JSON.stringify(v)
      .replaceAll(repo, "<repo>")
      .replace(/\b[a-z]{3}_[A-Za-z0-9_-]{6,}/g, "<id>")
      .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, "<time>")
      // The change log's sequence is the database's, shared by both repositories' calls.
      .replace(/"cursor":"\d+"/g, '"cursor":"<n>"')
      .replace(/mcp-[a-z0-9-]+-[A-Za-z0-9_-]+/g, "<session>"),
  );
}

it("gives the same envelopes over stdio and over /mcp for one script of calls", async () => {
  await backend.addRepo("acme/stdio", "Ship the shop.");
  await backend.addRepo("acme/http", "Ship the shop.");
  const stdioToken = await backend.issueToken("acme/stdio", "erin");
  const httpToken = await backend.issueToken("acme/http", "erin");

  const repo = await makeRepo(backend.url, "acme/stdio");
  const stdio = await connect(repo, { env: { COHENT_AGENT_TOKEN: stdioToken }, name: "same-agent" });
  const http = await connectHttp(backend.url, httpToken, { name: "same-agent" });
  try {
    for (const [name, args] of SCRIPT) {
      const a = (await stdio.client.callTool({ name, arguments: args })) as any;
      const b = (await http.client.callTool({ name, arguments: args })) as any;
      expect(a.isError ?? false, `${name} ${JSON.stringify(args)}`).toBe(b.isError ?? false);
      expect(masked(b.structuredContent, "acme/http"), `${name} ${JSON.stringify(args)}`).toEqual(
        masked(a.structuredContent, "acme/stdio"),
      );
    }
  } finally {
    await stdio.close();
    await http.close();
  }
});
