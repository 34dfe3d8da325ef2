import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BOUNDS } from "@cohent/protocol";
import { agentClient, startBackend, type TestBackend } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";
import { signedInAdmin, type ConsoleClient } from "../console/helpers.js";

/**
 * A call that changed the guard's own files (`guard`, kind `guard-files`;
 * issue 49 item 1), over plain HTTP on each database: the agent's adapter
 * caught that one of its calls set `disableAllHooks` in the checkout's
 * local settings and in the user's, put them back, and reported it. The
 * server records the catch and pauses the session with the reason: its next
 * kill-switch read says paused and why, its next claim is refused with that
 * reason, and the Control Room shows it on the work card and the sessions
 * table, until a person resumes it. Bad reports are refused with a stable
 * code and pause nothing.
 */

const SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

describe.each(DATABASE_KINDS)("a call that changed the guard's files pauses its session (%s)", (kind) => {
  let backend: TestBackend;
  let admin: ConsoleClient;
  let token: string;

  beforeAll(async () => {
    backend = await startBackend({ kind });
    await backend.addRepo("acme/shop");
    token = await backend.issueToken("acme/shop", "ana", "Claude Code");
    admin = await signedInAdmin(backend);
  });
  afterAll(() => backend?.stop());

  /** A session of ana's with a published intent. */
  const started = async (key: string) => {
    const agent = agentClient(backend.url, token, key);
    const intentId: string = (await agent.post({ type: "publish", prompt: `Work of ${key}` })).body.data
      .intentId;
    return { agent, intentId };
  };
  /** The kill-switch read, as the hook makes it. */
  const sessionRead = async (key: string) => {
    const res = await fetch(`${backend.url}/api/agent/session`, {
      headers: { authorization: `Bearer ${token}`, "x-cohent-session": key },
    });
    return (await res.json()) as any;
  };
  const report = (intentId: string, over: Record<string, unknown> = {}) => ({
    type: "guard",
    intentId,
    kind: "guard-files",
    tool: "Bash",
    command: `TOKEN=${SECRET} sh docs/setup.sh`,
    files: [
      { path: ".claude/settings.local.json", change: "disableAllHooks set" },
      { path: "/home/ana/.claude/settings.json", change: "disableAllHooks set" },
    ],
    undone: true,
    ...over,
  });
  const overview = async () => (await admin.get("/api/console/repos/acme/shop")).body.data;

  it("records the catch and pauses the session with the reason; its next read and claim say so; a person resumes it", async () => {
    const { agent, intentId } = await started("ana-1");
    const humanBefore = (await admin.get("/api/console/repos/acme/shop/metrics?since=24h")).body.data.totals
      .humanCommands;
    expect((await sessionRead("ana-1")).data).toMatchObject({ control: "active", controlReason: null });

    const r = await agent.post(report(intentId));
    expect(r.body).toMatchObject({ ok: true, data: { recorded: true } });

    // The kill-switch read: paused, and why.
    const read = (await sessionRead("ana-1")).data;
    expect(read.control).toBe("paused");
    const reason: string = read.controlReason;
    expect(reason).toContain("changed Cohent's guard files");
    expect(reason).toContain(".claude/settings.local.json: disableAllHooks set");
    expect(reason).toContain("/home/ana/.claude/settings.json: disableAllHooks set");
    expect(reason).toContain("undone");
    expect(reason).toMatch(/a person must resume it/);
    expect(reason.length).toBeLessThanOrEqual(500);

    // The next claim is refused with that reason.
    const claim = await agent.post({ type: "scope", intentId, paths: ["src/app.ts"] });
    expect([claim.status, claim.body.error.code, claim.body.error.message]).toEqual([
      423,
      "SESSION_PAUSED",
      reason,
    ]);

    // The Control Room: the work card and the sessions table.
    const o = await overview();
    expect(o.work.find((w: any) => w.intentId === intentId)).toMatchObject({
      control: "paused",
      controlReason: reason,
    });
    expect(o.sessions.find((s: any) => s.key === "ana-1")).toMatchObject({
      control: "paused",
      controlReason: reason,
    });

    // The catch, with the command redacted; not a person's command in the metrics.
    const rows = await backend.deps.db.prisma.guardCatch.findMany({
      where: { intentId, kind: "guard-files" },
    });
    expect(rows).toHaveLength(1);
    expect(JSON.parse(rows[0]!.paths)).toEqual([
      ".claude/settings.local.json",
      "/home/ana/.claude/settings.json",
    ]);
    const detail = JSON.parse(rows[0]!.detail!);
    expect(detail).toMatchObject({ undone: true, person: "ana", client: "Claude Code" });
    expect(detail.command).toContain("sh docs/setup.sh");
    expect(detail.command).not.toContain(SECRET);
    const totals = (await admin.get("/api/console/repos/acme/shop/metrics?since=24h")).body.data.totals;
    expect(totals.humanCommands).toBe(humanBefore);

    // A person resumes it from the Control Room.
    const sessionId = o.sessions.find((s: any) => s.key === "ana-1").id;
    const resumed = await admin.post(`/api/console/sessions/${sessionId}/control`, { kind: "resume" });
    expect(resumed.status).toBe(200);
    expect((await sessionRead("ana-1")).data).toMatchObject({ control: "active", controlReason: null });
    expect((await agent.post({ type: "scope", intentId, paths: ["src/app.ts"] })).status).toBe(200);
  });

  it("says when the files were not put back; a cancelled session stays cancelled", async () => {
    const { agent, intentId } = await started("ana-2");
    await agent.post(report(intentId, { undone: false, files: [{ path: "~/.copilot/hooks/off.json" }] }));
    const paused = (await sessionRead("ana-2")).data;
    expect(paused.control).toBe("paused");
    expect(paused.controlReason).toContain("(~/.copilot/hooks/off.json) — NOT undone");

    const sessionId = (await overview()).sessions.find((s: any) => s.key === "ana-2").id;
    await admin.post(`/api/console/sessions/${sessionId}/control`, { kind: "cancel", reason: "enough" });
    expect((await agent.post(report(intentId))).body.ok).toBe(true);
    expect((await sessionRead("ana-2")).data).toMatchObject({
      control: "cancelled",
      controlReason: "enough",
    });
  });

  it("a session without an intent is paused too, and many reports still pause", async () => {
    const agent = agentClient(backend.url, token, "ana-3");
    for (let i = 0; i < BOUNDS.shellWriteReportsPerMinute + 2; i++) {
      const r = await agent.post(report("", { intentId: undefined }));
      expect(r.body.ok).toBe(true);
    }
    expect((await sessionRead("ana-3")).data.control).toBe("paused");
    // Past the rate the catch is not recorded again.
    const sessionId = (await overview()).sessions.find((s: any) => s.key === "ana-3").id;
    expect(sessionId).toBeTruthy();
    const rows = await backend.deps.db.prisma.guardCatch.count({
      where: { kind: "guard-files", intentId: "" },
    });
    expect(rows).toBe(BOUNDS.shellWriteReportsPerMinute);
  });

  it("bad reports are refused with INVALID_INPUT and pause nothing", async () => {
    const { agent, intentId } = await started("ana-4");
    const file = { path: ".claude/settings.json" };
    const bad: [what: string, body: Record<string, unknown>][] = [
      ["no files", report(intentId, { files: undefined })],
      ["an empty list of files", report(intentId, { files: [] })],
      ["no undone", report(intentId, { undone: undefined })],
      ["paths beside files", report(intentId, { paths: ["src/a.ts"] })],
      ["an unknown field in a file", report(intentId, { files: [{ ...file, mode: "0644" }] })],
      ["an unknown field", report(intentId, { severity: "high" })],
      ["a path with a line break", report(intentId, { files: [{ path: ".claude/settings.json\nx" }] })],
      ["a path with markup", report(intentId, { files: [{ path: "<b>x</b>" }] })],
      ["a path with ..", report(intentId, { files: [{ path: "../.claude/settings.json" }] })],
      ["a change with markup", report(intentId, { files: [{ ...file, change: "<script>" }] })],
      ["too many files", report(intentId, { files: Array(BOUNDS.wiringChanges + 1).fill(file) })],
      ["restorable on guard-files", report(intentId, { restorable: true })],
      ["files on another kind", { ...report(intentId), kind: "outside-scope", undone: undefined }],
      ["a command on another kind", { type: "guard", kind: "outside-scope", tool: "Bash", command: "x" }],
    ];
    for (const [what, body] of bad) {
      const r = await agent.post(body);
      expect([what, r.status, r.body.error?.code]).toEqual([what, 400, "INVALID_INPUT"]);
    }
    expect((await sessionRead("ana-4")).data.control).toBe("active");
    expect(await backend.deps.db.prisma.guardCatch.count({ where: { intentId } })).toBe(0);
  });
});
