import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnforcementView, Metrics, Overview, SessionView } from "@cohent/protocol";
import { admin as adminOps } from "@cohent/backend";
import * as client from "../../client/src/service/client.js";
import { SessionFile } from "../../client/src/state/runtime.js";
import { startBackend, type TestBackend } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";
import { signedInAdmin, type ConsoleClient } from "../console/helpers.js";

/**
 * Who is really guarded, over real HTTP on each database: sessions publish
 * and read their kill switch as various hosts and wirings (`x-cohent-host`,
 * as the hook sends it), and the Control Room's API marks each guarded or
 * advisory with its reason, client and version; the metrics count both.
 * The report is written when it changes, never on an unchanged call; a call
 * without it erases nothing; a malformed one is INVALID_INPUT.
 */

const CHECKOUT = "00112233445566778899aabbccddeeff";
/** The header's name as the wire spells it (protocol/src/hosts.ts HOST_HEADER). */
const HOST_HEADER = "x-cohent-host";

describe.each(DATABASE_KINDS)("guarded and advisory sessions (%s)", (kind) => {
  let backend: TestBackend;
  let admin: ConsoleClient;
  let token: string;
  beforeAll(async () => {
    backend = await startBackend({ kind });
    await backend.addRepo("acme/guard");
    token = await backend.issueToken("acme/guard", "dora", "Claude Code");
    admin = await signedInAdmin(backend);
  });
  afterAll(() => backend?.stop());

  /** An agent session over HTTP; `host` is the x-cohent-host value its hook would send, or none. */
  const agent = (session: string, host?: string) => {
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      "x-cohent-session": session,
      "content-type": "application/json",
      ...(host ? { [HOST_HEADER]: host } : {}),
    };
    return {
      post: async (body: unknown, extra: Record<string, string> = {}) => {
        const res = await fetch(`${backend.url}/api/agent`, {
          method: "POST",
          headers: { ...headers, ...extra },
          body: JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json()) as any };
      },
      /** The kill-switch read, as the guard makes it before an edit or shell call. */
      killSwitch: async (extra: Record<string, string> = {}) => {
        const res = await fetch(`${backend.url}/api/agent/session`, { headers: { ...headers, ...extra } });
        return { status: res.status, body: (await res.json()) as any };
      },
      poll: async (intentId: string) => {
        const res = await fetch(`${backend.url}/api/agent`, {
          headers: { ...headers, "x-cohent-intent": intentId },
        });
        return { status: res.status, body: (await res.json()) as any };
      },
    };
  };
  const overview = async () => (await admin.get("/api/console/repos/acme/guard")).body.data as Overview;
  const sessionOf = async (key: string): Promise<SessionView> =>
    (await overview()).sessions.find((s) => s.key === key)!;
  const enforcementOf = async (key: string): Promise<EnforcementView> => (await sessionOf(key)).enforcement;
  /** The session's row as stored. */
  const stored = async (key: string) => {
    const repo = (await backend.deps.store.repos.byName("acme/guard"))!;
    return (await backend.deps.store.sessions.ofRepo(repo.id)).find((x) => x.key === key)!;
  };

  it("a fail-closed Claude Code session is advisory until its first guarded call, then guarded", async () => {
    const claude = agent("claude-1", "host=claude; version=2.1.332; wiring=fail-closed");
    const published = await claude.post({ type: "publish", prompt: "Add a coupon field" });
    expect(published.status).toBe(200);
    expect(await enforcementOf("claude-1")).toMatchObject({
      level: "advisory",
      why: "no-guard-call",
      host: "claude",
      hostName: "Claude Code",
      hostVersion: "2.1.332",
      wiring: "fail-closed",
      guardSeenAt: null,
    });
    expect((await claude.killSwitch()).status).toBe(200);
    const e = await enforcementOf("claude-1");
    expect(e).toMatchObject({ level: "guarded", why: "fail-closed", hostName: "Claude Code" });
    expect(e.reason).toMatch(/Claude Code's own wiring, as cohent init wrote it, fails closed/);
    expect(e.guardSeenAt).not.toBeNull();
    // The work card carries the same mark.
    const work = (await overview()).work.find((w) => w.intentId === published.body.data.intentId)!;
    expect(work.enforcement).toEqual(e);
  });

  it("a poll counts as a guarded call too (the guard polls before an edit)", async () => {
    const codex = agent("codex-1", "host=codex; version=0.171.0; wiring=fail-closed");
    const intentId = (await codex.post({ type: "publish", prompt: "Split the auth module" })).body.data
      .intentId;
    expect((await enforcementOf("codex-1")).why).toBe("no-guard-call");
    expect((await codex.poll(intentId)).status).toBe(200);
    expect(await enforcementOf("codex-1")).toMatchObject({
      level: "guarded",
      why: "fail-closed",
      hostName: "Codex",
      hostVersion: "0.171.0",
    });
  });

  it("foreign wirings: Copilot CLI through Claude Code's settings is guarded, Cursor's is not", async () => {
    const copilot = agent("copilot-1", "host=copilot; version=1.0.102; wiring=foreign");
    await copilot.post({ type: "publish", prompt: "Fix the footer" });
    await copilot.killSwitch();
    expect(await enforcementOf("copilot-1")).toMatchObject({
      level: "guarded",
      why: "foreign-measured",
      hostName: "Copilot CLI",
      hostVersion: "1.0.102",
      wiring: "foreign",
    });
    const cursor = agent("cursor-1", "host=cursor; version=1.7.2; wiring=foreign");
    await cursor.post({ type: "publish", prompt: "Rename the cart" });
    await cursor.killSwitch();
    const e = await enforcementOf("cursor-1");
    expect(e).toMatchObject({ level: "advisory", why: "foreign-unproven", hostName: "Cursor" });
    expect(e.reason).toMatch(/without failClosed/);
  });

  it("a Copilot CLI version reported to ignore a deny is advisory, whatever its wiring", async () => {
    const old = agent("copilot-old", "host=copilot; version=1.0.70; wiring=fail-closed");
    await old.killSwitch();
    const e = await enforcementOf("copilot-old");
    expect(e).toMatchObject({ level: "advisory", why: "host-version", hostVersion: "1.0.70" });
    expect(e.reason).toMatch(/upgrade to 1\.0\.85 or later/);
  });

  it("a plain HTTP integration is advisory: not reported, whatever it calls", async () => {
    const plain = agent("plain-1");
    await plain.post({ type: "publish", prompt: "Anything", clientName: "my-bot" });
    await plain.killSwitch();
    const s = await sessionOf("plain-1");
    expect(s.client).toBe("my-bot");
    expect(s.enforcement).toMatchObject({
      level: "advisory",
      why: "not-reported",
      host: null,
      hostName: "unknown client",
      hostVersion: null,
      wiring: null,
    });
    expect(s.enforcement.reason).toMatch(/custom integration over HTTP or MCP/);
  });

  it("a modified wiring is advisory: reported by its hook, or by its checkout's wiring report until repaired", async () => {
    const hookSaid = agent("gemini-1", "host=gemini; version=0.61.0; wiring=modified");
    await hookSaid.post({ type: "publish", prompt: "Edit the docs" });
    await hookSaid.killSwitch();
    expect(await enforcementOf("gemini-1")).toMatchObject({
      level: "advisory",
      why: "wiring-modified",
      hostName: "Gemini CLI",
    });

    const oc = agent("opencode-1", "host=opencode; version=1.18.33; wiring=fail-closed");
    const wiring = (changes: { file: string; change: string }[]) => ({
      type: "guard",
      kind: "wiring",
      tool: "session.created",
      wiring: { checkout: CHECKOUT, changes },
    });
    await oc.post(wiring([{ file: ".opencode/plugin/cohent.js", change: "plugin replaced" }]));
    await oc.killSwitch();
    const e = await enforcementOf("opencode-1");
    expect(e).toMatchObject({ level: "advisory", why: "wiring-modified", hostName: "OpenCode" });
    expect(e.reason).toContain(".opencode/plugin/cohent.js");
    // Another session of the same token and checkout, started before the alarm, is advisory too.
    const sibling = agent("opencode-2", "host=opencode; version=1.18.33; wiring=fail-closed");
    await sibling.post(wiring([{ file: ".opencode/plugin/cohent.js", change: "plugin replaced" }]));
    await sibling.killSwitch();
    expect((await enforcementOf("opencode-2")).why).toBe("wiring-modified");
    // The repair: a session start finds the wiring intact; both sessions are guarded again.
    await agent("opencode-3", "host=opencode; wiring=fail-closed").post(wiring([]));
    expect(await enforcementOf("opencode-1")).toMatchObject({ level: "guarded", why: "fail-closed" });
    expect((await enforcementOf("opencode-2")).level).toBe("guarded");
  });

  it("an unknown host is advisory", async () => {
    const unknown = agent("unknown-1", "host=unknown; wiring=fail-closed");
    await unknown.killSwitch();
    expect(await enforcementOf("unknown-1")).toMatchObject({
      level: "advisory",
      why: "unknown-host",
      host: "unknown",
      hostName: "unknown client",
    });
  });

  it("writes the report when it changes only; a call without it erases nothing", async () => {
    const claude = agent("claude-2", "host=claude; version=2.1.332; wiring=fail-closed");
    await claude.killSwitch();
    const first = await stored("claude-2");
    expect(first.hostReportedAt).not.toBeNull();
    expect(first.guardSeenAt).toEqual(first.hostReportedAt);
    // The same report again, later: nothing is written (the renewal is, every 15 s at most).
    backend.advance(60_000);
    for (let i = 0; i < 3; i++) expect((await claude.killSwitch()).status).toBe(200);
    await claude.post({ type: "publish", prompt: "More" });
    const same = await stored("claude-2");
    expect(same.hostReportedAt).toEqual(first.hostReportedAt);
    expect(same.lastSeenAt.getTime()).toBeGreaterThan(first.lastSeenAt.getTime());
    // A call of the same session without the header (its CLI, MCP) leaves the report as it was.
    await agent("claude-2").killSwitch();
    expect((await stored("claude-2")).host).toBe("claude");
    // A new version is written, and the first guarded call's time stays.
    backend.advance(1_000);
    await claude.killSwitch({ [HOST_HEADER]: "host=claude; version=2.1.400; wiring=fail-closed" });
    const moved = await stored("claude-2");
    expect(moved.hostVersion).toBe("2.1.400");
    expect(moved.hostReportedAt!.getTime()).toBeGreaterThan(first.hostReportedAt!.getTime());
    expect(moved.guardSeenAt).toEqual(first.guardSeenAt);
  });

  it("refuses a malformed x-cohent-host with INVALID_INPUT, on every route, and records nothing", async () => {
    for (const bad of [
      "claude",
      "host=vscode; wiring=fail-closed",
      "host=claude; wiring=fail-open",
      "host=claude; version=1 2; wiring=fail-closed",
      `host=claude; version=${"9".repeat(65)}; wiring=fail-closed`,
    ]) {
      const a = agent("bad-1", bad);
      for (const r of [await a.killSwitch(), await a.post({ type: "publish", prompt: "x" })]) {
        expect(r.status, bad).toBe(400);
        expect(r.body.error.code).toBe("INVALID_INPUT");
        expect(r.body.error.message).toMatch(/^x-cohent-host: /);
      }
    }
    expect((await overview()).sessions.some((s) => s.key === "bad-1")).toBe(false);
  });

  it("the adapter's client layer sends the report on every call once the hook gives it", async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "cohent-host-"));
    try {
      const checkout: client.Checkout = {
        root,
        project: { version: 1, service: backend.url, repository: "acme/guard" },
        token,
      };
      const s = new SessionFile(root, "copilot-cli-2");
      const before = await client.session(checkout, s);
      expect(before.ok).toBe(true);
      expect((await enforcementOf("copilot-cli-2")).why).toBe("not-reported");
      client.reportHost({ host: "copilot", hostVersion: "1.0.85 (linux-x64)", wiring: "fail-closed" });
      try {
        expect((await client.session(checkout, s)).ok).toBe(true);
      } finally {
        client.reportHost(null);
      }
      expect(await enforcementOf("copilot-cli-2")).toMatchObject({
        level: "guarded",
        hostName: "Copilot CLI",
        hostVersion: "1.0.85_linux-x64",
      });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("the metrics count guarded and advisory sessions, in the console API and the admin operation alike", async () => {
    const by = (level: string) =>
      overview().then((o) =>
        o.sessions
          .filter((s) => s.enforcement.level === level)
          .map((s) => s.key)
          .sort(),
      );
    expect(await by("guarded")).toEqual([
      "claude-1",
      "claude-2",
      "codex-1",
      "copilot-1",
      "copilot-cli-2",
      "opencode-1",
      "opencode-2",
    ]);
    expect(await by("advisory")).toEqual([
      "copilot-old",
      "cursor-1",
      "gemini-1",
      "opencode-3",
      "plain-1",
      "unknown-1",
    ]);
    const m = (await admin.get("/api/console/repos/acme/guard/metrics?since=24h")).body.data
      .totals as Metrics;
    expect([m.guardedSessions, m.advisorySessions]).toEqual([7, 6]);
    const op = await adminOps.metrics(backend.deps, "acme/guard");
    expect([op.guardedSessions, op.advisorySessions]).toEqual([7, 6]);
    // A window that holds no call counts none.
    backend.advance(3 * 3_600_000);
    const later = (await admin.get("/api/console/repos/acme/guard/metrics?since=1h")).body.data
      .totals as Metrics;
    expect([later.guardedSessions, later.advisorySessions]).toEqual([0, 0]);
  });
});
