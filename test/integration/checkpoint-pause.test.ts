import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentClient, startBackend, type TestBackend } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";
import { signedInAdmin, type ConsoleClient } from "../console/helpers.js";

/**
 * A paused or cancelled session claims nothing, whichever call asks: a checkpoint that carries paths
 * is a claim change as scope is, and is refused as scope is (cohent torture found it granted). Its
 * progress without paths, and its completion, which releases, still run.
 */
describe.each(DATABASE_KINDS)("a paused session's checkpoint with paths (%s)", (kind) => {
  let backend: TestBackend;
  let admin: ConsoleClient;
  let token: string;

  beforeAll(async () => {
    backend = await startBackend({ kind });
    await backend.addRepo("acme/shop");
    token = await backend.issueToken("acme/shop", "ana", "Codex");
    admin = await signedInAdmin(backend);
  });
  afterAll(() => backend?.stop());

  async function sessionIdOf(key: string): Promise<string> {
    const o = (await admin.get("/api/console/repos/acme/shop")).body.data;
    return o.sessions.find((s: { key: string }) => s.key === key).id;
  }

  it.each(["pause", "cancel"] as const)(
    "%s: refused like scope; progress and completion run",
    async (kindOf) => {
      const key = `ana-${kindOf}`;
      const agent = agentClient(backend.url, token, key);
      const intentId: string = (await agent.post({ type: "publish", prompt: "Work" })).body.data.intentId;
      expect((await agent.post({ type: "scope", intentId, paths: ["src/a.ts"] })).status).toBe(200);

      const control = await admin.post(`/api/console/sessions/${await sessionIdOf(key)}/control`, {
        kind: kindOf,
      });
      expect(control.status).toBe(200);
      const code = kindOf === "pause" ? "SESSION_PAUSED" : "SESSION_CANCELLED";

      const scope = await agent.post({ type: "scope", intentId, paths: ["src/b.ts"] });
      expect(scope.body.error?.code).toBe(code);
      const claim = await agent.post({
        type: "checkpoint",
        intentId,
        status: "working",
        summary: "more",
        paths: ["src/b.ts"],
      });
      expect(claim.status).toBe(423);
      expect(claim.body.error?.code).toBe(code);
      // Nothing was claimed: the scope is still src/a.ts.
      const scopes = (await agent.post({ type: "scopes" })).body.data;
      expect(JSON.stringify(scopes)).not.toContain("src/b.ts");

      if (kindOf === "pause") {
        const progress = await agent.post({
          type: "checkpoint",
          intentId,
          status: "working",
          summary: "note",
        });
        expect(progress.status).toBe(200);
      }
      const done = await agent.post({ type: "checkpoint", intentId, status: "completed", summary: "done" });
      expect(done.status, JSON.stringify(done.body)).toBe(200);
    },
  );
});
