import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentClient, startBackend, type TestBackend } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";
import { ConsoleClient, signedInAdmin } from "../console/helpers.js";

/**
 * A person restores a caught shell write from the Control Room, over plain
 * HTTP on each database: Bo's adapter reported a catch of Ana's src/peer.ts;
 * the admin's request puts a `restore-requested` notice in Bo's next packet
 * (his adapter carries it out: test/adapter/shell-guard), is recorded and
 * counted as a human command, and marks the catch. Asked again, nothing new
 * happens. Refused with stable codes: signed out, without the CSRF token, a
 * catch of another repository, one with no intent to carry it, one whose
 * bytes were not kept.
 */

describe.each(DATABASE_KINDS)("restore requested from the Control Room (%s)", (kind) => {
  let backend: TestBackend;
  let admin: ConsoleClient;
  let ana: ReturnType<typeof agentClient>;
  let bo: ReturnType<typeof agentClient>;
  let anaIntent: string;
  let boIntent: string;

  beforeAll(async () => {
    backend = await startBackend({ kind });
    await backend.addRepo("acme/shop");
    await backend.addRepo("acme/other");
    ana = agentClient(backend.url, await backend.issueToken("acme/shop", "ana", "Claude Code"), "ana-1");
    bo = agentClient(backend.url, await backend.issueToken("acme/shop", "bo", "Codex"), "bo-1");
    admin = await signedInAdmin(backend);
    anaIntent = (await ana.post({ type: "publish", prompt: "Rework the peer module" })).body.data.intentId;
    await ana.post({ type: "scope", intentId: anaIntent, paths: ["src/peer.ts", "src/lib/**"] });
    boIntent = (await bo.post({ type: "publish", prompt: "Regenerate the fixtures" })).body.data.intentId;
  });
  afterAll(() => backend?.stop());

  /** Bo reports a catch; answers its id, as the overview lists it (newest first). */
  const caught = async (over: Record<string, unknown> = {}, agent = bo): Promise<string> => {
    const r = await agent.post({
      type: "guard",
      intentId: boIntent,
      kind: "shell-write",
      tool: "Bash",
      paths: ["src/peer.ts", "src/lib/a.ts"],
      command: "sh docs/w.sh",
      peers: [{ intentId: anaIntent, paths: ["src/peer.ts", "src/lib/a.ts"] }],
      restorable: true,
      ...over,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return (await overview()).shellWrites[0].id;
  };
  const overview = async () => (await admin.get("/api/console/repos/acme/shop")).body.data;
  const humanCommands = async () =>
    (await admin.get("/api/console/repos/acme/shop/metrics?since=24h")).body.data.totals.humanCommands;
  const restore = (id: string, client = admin, repo = "acme/shop", opts = {}) =>
    client.post(`/api/console/repos/${repo}/shell-writes/${encodeURIComponent(id)}/restore`, {}, opts);
  const notices = async (agent: typeof bo, intentId: string) =>
    (await agent.poll(intentId)).body.data.packet?.notices ?? [];

  it("puts a restore-requested notice in the writer's next packet, records the command and marks the catch", async () => {
    const id = await caught();
    await notices(bo, boIntent);
    const before = await humanCommands();

    const r = await restore(id);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data).toMatchObject({
      id,
      intentId: boIntent,
      paths: ["src/peer.ts", "src/lib/a.ts"],
      requestedBy: "admin",
      already: false,
    });

    const told = await notices(bo, boIntent);
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({
      kind: "restore-requested",
      paths: ["src/peer.ts", "src/lib/a.ts"],
      peer: { intentId: null, person: "admin", client: null, model: null },
    });
    expect(told[0].text).toContain("[cohent notice] admin asks from the Control Room that your checkout put");
    expect(told[0].text).toContain("node .cohent/cohent.mjs restore src/peer.ts");
    // Only the writer is told: Ana's packet has her shell-write notice, no restore request.
    expect((await notices(ana, anaIntent)).map((n: any) => n.kind)).not.toContain("restore-requested");

    const o = await overview();
    expect(o.shellWrites.find((w: any) => w.id === id).restoreRequested).toEqual({
      at: r.body.data.requestedAt,
      by: "admin",
    });
    expect(o.commands[0]).toMatchObject({ kind: "restore", actor: "admin", person: "bo" });
    expect(await humanCommands()).toBe(before + 1);

    // Idempotent: asked again, the first request answers, and nothing new is told, recorded or counted.
    const again = await restore(id);
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({ id, already: true, requestedAt: r.body.data.requestedAt });
    expect(await notices(bo, boIntent)).toEqual([]);
    expect(await humanCommands()).toBe(before + 1);
  });

  it("refuses a person signed out or without the CSRF token, and a catch of another repository or none", async () => {
    const id = await caught();
    const signedOut = await restore(id, new ConsoleClient(backend.url));
    expect([signedOut.status, signedOut.body.error.code]).toEqual([401, "UNAUTHENTICATED"]);
    for (const opts of [{ csrf: null }, { csrf: "guess" }, { origin: "http://evil.example" }]) {
      const r = await restore(id, admin, "acme/shop", opts);
      expect([r.status, r.body.error.code]).toEqual([403, "CSRF_REJECTED"]);
    }
    for (const [catchId, repo] of [
      [id, "acme/other"],
      ["gc_nosuchcatch", "acme/shop"],
    ] as const) {
      const r = await restore(catchId, admin, repo);
      expect([r.status, r.body.error.code]).toEqual([404, "CATCH_NOT_FOUND"]);
    }
    const nobody = await restore(id, admin, "acme/nobody");
    expect([nobody.status, nobody.body.error.code]).toEqual([404, "REPOSITORY_NOT_FOUND"]);
    // None of it asked anything.
    expect((await overview()).shellWrites.find((w: any) => w.id === id).restoreRequested).toBeNull();
    expect((await notices(bo, boIntent)).map((n: any) => n.kind)).not.toContain("restore-requested");
  });

  it("refuses a catch with no intent to carry it, or whose bytes were not kept", async () => {
    const early = await caught({ intentId: undefined });
    const r = await restore(early);
    expect([r.status, r.body.error.code]).toEqual([409, "NO_WRITER_INTENT"]);
    const lost = await caught({ restorable: false });
    const s = await restore(lost);
    expect([s.status, s.body.error.code]).toEqual([409, "NOT_RESTORABLE"]);
    const listed = (await overview()).shellWrites.filter((w: any) => [early, lost].includes(w.id));
    expect(listed.map((w: any) => w.restoreRequested)).toEqual([null, null]);
  });

  it("tells the session's open intent when the catch's has closed; refuses when the session has none", async () => {
    const cy = agentClient(backend.url, await backend.issueToken("acme/shop", "cy"), "cy-1");
    const first = (await cy.post({ type: "publish", prompt: "First task" })).body.data.intentId;
    const id = await caught({ intentId: first }, cy);
    // A new prompt supersedes the first intent: the second carries the request.
    const second = (await cy.post({ type: "publish", prompt: "Second task" })).body.data.intentId;
    await notices(cy, second);
    const r = await restore(id);
    expect(r.body.data).toMatchObject({ intentId: second, already: false });
    expect((await notices(cy, second)).map((n: any) => n.kind)).toEqual(["restore-requested"]);

    const again = await caught({ intentId: second }, cy);
    await cy.post({ type: "checkpoint", intentId: second, status: "completed", summary: "done" });
    const closed = await restore(again);
    expect([closed.status, closed.body.error.code]).toEqual([409, "NO_WRITER_INTENT"]);
  });
});
