import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolSchemas, type Operation } from "../../mcp-server/src/schemas.js";
import type { TestBackend } from "../helpers/backend.js";
import { claude, hook } from "../adapter/helpers.js";
import { connect, git, hangingService, makeRepo, startFixture, TOOL_NAMES, type Repo } from "./helpers.js";

/**
 * The stdio MCP server as a client sees it: the SDK's Client over
 * StdioClientTransport spawning the built .cohent/cohent.mjs, against a real
 * backend. The SDK client validates every structuredContent against the
 * published output schema, failures included.
 */

let backend: TestBackend, repo: Repo, token: string;
beforeAll(async () => {
  ({ backend, repo, token } = await startFixture("alice", "Ship the shop."));
});
afterAll(() => backend?.stop());

const envelope = (r: any) => {
  // structuredContent is exactly the envelope, and the text content is the same JSON.
  expect(JSON.parse(r.content[0].text)).toEqual(r.structuredContent);
  return r.structuredContent as any;
};

describe("MCP server", () => {
  it("lists seven tools with strict input schemas, the envelope output schema and truthful annotations, within 1,500 tokens", async () => {
    const c = await connect(repo, { env: { COHENT_AGENT_TOKEN: token } });
    try {
      const list = await c.client.listTools();
      expect(list.tools.map((t) => t.name)).toEqual(TOOL_NAMES);
      for (const t of list.tools) {
        expect(t.inputSchema.additionalProperties).toBe(false);
        expect(t.outputSchema?.required).toEqual(["version", "ok", "operation", "warnings", "meta"]);
        expect(t.annotations?.openWorldHint).toBe(true);
        expect(t.annotations?.destructiveHint ?? false).toBe(false);
        // Generated at build time into the bundle; the same as the source generates here.
        expect({ inputSchema: t.inputSchema, outputSchema: t.outputSchema }).toEqual(
          toolSchemas(t.name as Operation),
        );
      }
      const ctx = list.tools.find((t) => t.name === "context")!;
      expect(ctx.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
      expect(list.tools.find((t) => t.name === "publish")!.annotations?.readOnlyHint ?? false).toBe(false);
      expect(
        (list.tools.find((t) => t.name === "intent")!.inputSchema.properties as any).intent
          .additionalProperties,
      ).toBe(false);
      // scope can queue; its wait is the CLIs' alone (a tool call does not block for minutes).
      const scope = list.tools.find((t) => t.name === "scope")!.inputSchema.properties as any;
      expect(Object.keys(scope)).toEqual(["repo", "paths", "queue"]);
      const release = list.tools.find((t) => t.name === "request-release")!.inputSchema as any;
      expect(release.required).toEqual(["paths"]);
      expect(Object.keys(release.properties)).toEqual(["repo", "paths", "note"]);
      const tokens = Math.ceil(JSON.stringify(list).length / 4);
      expect(tokens).toBeLessThanOrEqual(1500);
      expect(c.stderr()).toContain(`bound to ${repo.root}`);
    } finally {
      await c.close();
    }
  });

  it("publishes, declares an intent, claims a scope, checkpoints the staged paths and reads the context", async () => {
    const c = await connect(repo, {
      env: { COHENT_AGENT_TOKEN: token, COHENT_SESSION: "mcp-flow" },
      name: "claude-code",
    });
    try {
      const pub = envelope(
        await c.client.callTool({
          name: "publish",
          arguments: { prompt: "Add a cart page", paths: ["src/cart"] },
        }),
      );
      expect(pub).toMatchObject({ version: 1, ok: true, operation: "publish", data: { action: "plan" } });
      expect(pub.data.intentId).toMatch(/^wki_/);

      const intent = envelope(
        await c.client.callTool({
          name: "intent",
          arguments: { intent: { objective: "Cart page", outputs: ["cart-page"], components: ["web"] } },
        }),
      );
      expect(intent).toMatchObject({
        ok: true,
        operation: "intent",
        data: { intentId: pub.data.intentId, action: "proceed" },
      });

      const scope = envelope(
        await c.client.callTool({
          name: "scope",
          arguments: { paths: ["src/cart/**", path.join(repo.root, "src/cart.css")] },
        }),
      );
      expect(scope).toMatchObject({ ok: true, data: { paths: ["src/cart/**", "src/cart.css"] } });

      mkdirSync(path.join(repo.root, "src/cart"), { recursive: true });
      writeFileSync(path.join(repo.root, "src/cart/page.ts"), "export {};\n");
      writeFileSync(path.join(repo.root, "src/cart/unstaged.ts"), "export {};\n");
      git(repo.root, "add", "src/cart/page.ts");
      const cp = envelope(
        await c.client.callTool({
          name: "checkpoint",
          arguments: { status: "working", summary: "page skeleton", source: { kind: "staged" } },
        }),
      );
      expect(cp).toMatchObject({ ok: true, data: { status: "working", paths: ["src/cart/page.ts"] } });
      const rows: any[] = await backend.deps.db.prisma.$transaction((tx: any) =>
        tx.checkpoint.findMany({ where: { intentId: pub.data.intentId } }),
      );
      expect(rows.map((r: any) => r.source)).toEqual(["repository-derived"]);

      const cp2 = envelope(
        await c.client.callTool({
          name: "checkpoint",
          arguments: { status: "working", source: { kind: "paths", paths: ["src/cart/**"] } },
        }),
      );
      expect(cp2.ok).toBe(true);
      const rows2: any[] = await backend.deps.db.prisma.$transaction((tx: any) =>
        tx.checkpoint.findMany({ where: { intentId: pub.data.intentId }, orderBy: { createdAt: "asc" } }),
      );
      expect(rows2.map((r: any) => r.source)).toEqual(["repository-derived", "provided-unverified"]);

      const ctx = envelope(await c.client.callTool({ name: "context", arguments: {} }));
      expect(ctx).toMatchObject({
        ok: true,
        operation: "context",
        data: { intentId: pub.data.intentId, goal: "Ship the shop." },
      });
      expect(typeof ctx.data.packet.text).toBe("string");

      // commit: the scope's changes only (staged or not); .cohent/ is nobody's and stays out.
      git(repo.root, "config", "user.name", "T");
      git(repo.root, "config", "user.email", "t@example.com");
      const commit = envelope(
        await c.client.callTool({ name: "commit", arguments: { message: "Cart page skeleton" } }),
      );
      expect(commit).toMatchObject({
        ok: true,
        operation: "commit",
        data: {
          intentId: pub.data.intentId,
          paths: ["src/cart/page.ts", "src/cart/unstaged.ts"],
          recorded: true,
        },
      });
      expect(git(repo.root, "rev-parse", "HEAD").trim()).toBe(commit.data.hash);
      expect(git(repo.root, "log", "-1", "--format=%B")).toContain(`Cohent-Intent: ${pub.data.intentId}`);
      expect(git(repo.root, "show", "--name-only", "--format=", "HEAD").trim().split("\n")).toEqual([
        "src/cart/page.ts",
        "src/cart/unstaged.ts",
      ]);
      const commitRows: any[] = await backend.deps.db.prisma.$transaction((tx: any) =>
        tx.checkpoint.findMany({
          where: { intentId: pub.data.intentId, source: `commit:${commit.data.hash}` },
        }),
      );
      expect(commitRows).toHaveLength(1);
      const empty = await c.client.callTool({ name: "commit", arguments: { message: "nothing left" } });
      expect(empty.isError).toBe(true);
      expect(envelope(empty).error.code).toBe("NOTHING_TO_COMMIT");

      // The runtime state is the one the hooks read.
      const rt = JSON.parse(readFileSync(path.join(repo.root, ".cohent/runtime.json"), "utf8"));
      expect(rt.sessions["mcp-flow"]).toMatchObject({
        intentId: pub.data.intentId,
        client: "claude-code",
        scope: ["src/cart/**"],
      });
    } finally {
      await c.close();
    }
  });

  it("answers failures with isError and the v1 failure envelope: unknown fields, unknown tool, scope conflict, no credential", async () => {
    const a = await connect(repo, { env: { COHENT_AGENT_TOKEN: token, COHENT_SESSION: "mcp-a" } });
    const b = await connect(repo, { env: { COHENT_AGENT_TOKEN: token, COHENT_SESSION: "mcp-b" } });
    const unpaired = await connect(repo, { env: { COHENT_SESSION: "mcp-c" } });
    try {
      const bad = await a.client.callTool({ name: "scope", arguments: { paths: ["x"], force: true } });
      expect(bad.isError).toBe(true);
      expect(envelope(bad)).toMatchObject({
        version: 1,
        ok: false,
        operation: "scope",
        error: { code: "INVALID_INPUT", retryable: false },
      });
      expect(JSON.stringify((bad.structuredContent as any).error.details)).toContain("force");

      const nested = await a.client.callTool({
        name: "intent",
        arguments: { intent: { objective: "x", extra: 1 } },
      });
      expect(envelope(nested).error.code).toBe("INVALID_INPUT");

      const unknown = await a.client.callTool({ name: "delete_everything", arguments: {} });
      expect(unknown.isError).toBe(true);
      expect(envelope(unknown).error.code).toBe("INVALID_INPUT");

      for (const [c, objective] of [
        [a, "Checkout flow"],
        [b, "Payments"],
      ] as const) {
        expect(
          envelope(await c.client.callTool({ name: "publish", arguments: { prompt: objective } })).ok,
        ).toBe(true);
        expect(
          envelope(
            await c.client.callTool({
              name: "intent",
              arguments: { intent: { objective, outputs: [objective.replace(/\s/g, "-")] } },
            }),
          ).ok,
        ).toBe(true);
      }
      expect(
        envelope(await a.client.callTool({ name: "scope", arguments: { paths: ["src/pay/**"] } })).ok,
      ).toBe(true);
      const conflict = await b.client.callTool({ name: "scope", arguments: { paths: ["src/pay/api.ts"] } });
      expect(conflict.isError).toBe(true);
      expect(envelope(conflict)).toMatchObject({
        ok: false,
        error: { code: "SCOPE_CONFLICT", retryable: true, details: { previousScope: [] } },
      });
      // With queue, the refusal carries the place as data; wait is not a tool argument.
      const queued = envelope(
        await b.client.callTool({ name: "scope", arguments: { paths: ["src/pay/api.ts"], queue: true } }),
      );
      expect(queued.error.details.queued).toMatchObject({ paths: ["src/pay/api.ts"], place: 1 });
      expect(queued.error.details.queued.behind[0]).toMatchObject({
        intentId: expect.any(String),
        holds: true,
      });
      const waitArg = await b.client.callTool({ name: "scope", arguments: { paths: ["x"], wait: 5 } });
      expect(envelope(waitArg).error.code).toBe("INVALID_INPUT");
      // Over the path bounds: refused by the adapter with the server's code, before anything is matched.
      const bomb = await b.client.callTool({
        name: "scope",
        arguments: { paths: Array.from({ length: 64 }, (_, i) => `src/b${i}/` + "{a,b}".repeat(95)) },
      });
      expect(bomb.isError).toBe(true);
      expect(envelope(bomb)).toMatchObject({
        ok: false,
        operation: "scope",
        error: { code: "PATHS_TOO_COMPLEX", retryable: false },
      });
      // Ask the holder through the tool: whom it asked.
      const asked = envelope(
        await b.client.callTool({
          name: "request-release",
          arguments: { paths: ["src/pay/api.ts"], note: "need the API file" },
        }),
      );
      expect(asked.ok).toBe(true);
      expect(asked.data.asked).toHaveLength(1);
      expect(asked.data.asked[0].paths).toEqual(["src/pay/api.ts"]);

      const noCred = await unpaired.client.callTool({ name: "context", arguments: {} });
      expect(noCred.isError).toBe(true);
      expect(envelope(noCred).error).toMatchObject({ code: "NOT_PAIRED", retryable: false });
    } finally {
      await Promise.all([a.close(), b.close(), unpaired.close()]);
    }
  });

  it("refuses a repo that is not the bound one, and accepts the bound one named again", async () => {
    const other = await makeRepo(backend.url);
    const c = await connect(repo, { env: { COHENT_AGENT_TOKEN: token, COHENT_SESSION: "mcp-repo" } });
    try {
      const mismatch = await c.client.callTool({ name: "context", arguments: { repo: other.root } });
      expect(mismatch.isError).toBe(true);
      expect(envelope(mismatch).error).toMatchObject({ code: "REPOSITORY_MISMATCH", retryable: false });
      const notGit = await c.client.callTool({ name: "context", arguments: { repo: other.home } });
      expect(envelope(notGit).error.code).toBe("REPOSITORY_MISMATCH");
      mkdirSync(path.join(repo.root, "docs"), { recursive: true });
      const same = await c.client.callTool({
        name: "context",
        arguments: { repo: path.join(repo.root, "docs", "..", "docs") },
      });
      expect(envelope(same).ok).toBe(true);
    } finally {
      await c.close();
    }
  });

  it("enforces the client's roots and re-checks them when they change", async () => {
    const elsewhere = await makeRepo(backend.url);
    const c = await connect(repo, {
      env: { COHENT_AGENT_TOKEN: token, COHENT_SESSION: "mcp-roots" },
      roots: [pathToFileURL(elsewhere.root).href],
    });
    try {
      const outside = await c.client.callTool({ name: "context", arguments: {} });
      expect(outside.isError).toBe(true);
      expect(envelope(outside).error).toMatchObject({ code: "REPOSITORY_OUTSIDE_ROOT", retryable: false });

      await c.setRoots([pathToFileURL(elsewhere.root).href, pathToFileURL(path.dirname(repo.root)).href]);
      await expect
        .poll(async () => envelope(await c.client.callTool({ name: "context", arguments: {} })).ok, {
          timeout: 5_000,
        })
        .toBe(true);

      await c.setRoots([]);
      await expect
        .poll(async () => envelope(await c.client.callTool({ name: "context", arguments: {} })).error?.code, {
          timeout: 5_000,
        })
        .toBe("REPOSITORY_OUTSIDE_ROOT");
    } finally {
      await c.close();
    }
  });

  it("a client's cancellation aborts the backend request it is waiting on", async () => {
    const hang = await hangingService();
    const held = await makeRepo(hang.url);
    const c = await connect(held, {
      env: { COHENT_AGENT_TOKEN: "t", COHENT_SESSION: "mcp-cancel", COHENT_TIMEOUT_MS: "60000" },
    });
    try {
      const controller = new AbortController();
      const call = c.client.callTool({ name: "publish", arguments: { prompt: "held open" } }, undefined, {
        signal: controller.signal,
        timeout: 60_000,
      });
      await hang.waitForRequest();
      expect(hang.closedSockets()).toBe(0);
      const started = performance.now();
      controller.abort("user cancelled");
      await expect(call).rejects.toThrow();
      await hang.waitForClose();
      // The server dropped the backend request on the cancellation, not on its 60 s timeout: half of
      // it tells them apart.
      expect(performance.now() - started).toBeLessThan(30_000);
      // And it still serves the next call.
      const after = await c.client.listTools();
      expect(after.tools).toHaveLength(TOOL_NAMES.length);
    } finally {
      await c.close();
      await hang.stop();
    }
  });

  it("the MCP tools and the hooks of the same session see one intent", async () => {
    const shared = await makeRepo(backend.url);
    const env = { COHENT_AGENT_TOKEN: token };
    const session = "claude-session-1";
    await hook(shared, claude.sessionStart(session, shared.root), { ...claude.env, ...env });
    const prompted = await hook(shared, claude.prompt(session, shared.root, "Add a wishlist"), {
      ...claude.env,
      ...env,
    });
    expect(prompted.context).toContain("wki_");
    const before = JSON.parse(readFileSync(path.join(shared.root, ".cohent/runtime.json"), "utf8")).sessions[
      session
    ];

    // Claude Code announces itself as claude-code: the server joins the live Claude Code hook session.
    const c = await connect(shared, { env, name: "claude-code" });
    try {
      const intent = envelope(
        await c.client.callTool({
          name: "intent",
          arguments: { intent: { objective: "Wishlist", outputs: ["wishlist"] } },
        }),
      );
      expect(intent).toMatchObject({ ok: true, data: { intentId: before.intentId, action: "proceed" } });
      // The hook now lets the edit through: it sees the intent declared over MCP.
      const write = await hook(
        shared,
        claude.write(session, shared.root, path.join(shared.root, "src/wishlist.ts")),
        { ...claude.env, ...env },
      );
      expect(write.denied).toBeNull();
      const ctx = envelope(await c.client.callTool({ name: "context", arguments: {} }));
      expect(ctx.data.intentId).toBe(before.intentId);
      const rt = JSON.parse(readFileSync(path.join(shared.root, ".cohent/runtime.json"), "utf8"));
      expect(Object.keys(rt.sessions)).toEqual([session]);
      expect(rt.sessions[session]).toMatchObject({ intentId: before.intentId, action: "proceed" });
    } finally {
      await c.close();
    }
  });
});
