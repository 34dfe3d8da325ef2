import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consoleOps } from "@cohent/backend";
import { agentClient, startBackend, type TestBackend } from "../helpers/backend.js";
import { ConsoleClient, pairingRequest, pairingToken, signedInAdmin } from "./helpers.js";

const REQUEST = { repo: "acme/shop", machine: "laptop-7", user: "alice", client: "Codex" };

let backend: TestBackend;
let admin: ConsoleClient;

beforeAll(async () => {
  backend = await startBackend();
  admin = await signedInAdmin(backend);
});
afterAll(async () => backend?.stop());

describe("pairing (device grant)", () => {
  it("issues a repository-scoped agent token once, after approval, and registers the unknown repository", async () => {
    const start = await pairingRequest(backend.url, REQUEST);
    expect(start.status).toBe(200);
    const { userCode, deviceCode, verificationUri, interval, expiresAt, pairingId } = start.body.data;
    expect(userCode).toMatch(/^[B-DF-HJ-NP-TV-XZ]{4}-[B-DF-HJ-NP-TV-XZ]{4}$/);
    expect(verificationUri).toBe(`${backend.url}/pair?code=${userCode}`);
    expect(interval).toBeGreaterThan(0);
    expect(pairingId).toMatch(/^pai_/);
    expect(Date.parse(expiresAt)).toBeGreaterThan(Date.now());

    const pending = await pairingToken(backend.url, deviceCode);
    expect(pending.status).toBe(428);
    expect(pending.body.error.code).toBe("PAIRING_PENDING");

    // The person sees the request, then approves it.
    const shown = await admin.get(`/api/console/pairings/${userCode.toLowerCase()}`);
    expect(shown.body.data).toMatchObject({
      repo: "acme/shop",
      repoKnown: false,
      machine: "laptop-7",
      user: "alice",
      client: "Codex",
      status: "pending",
      mayApprove: true,
    });
    const approved = await admin.post(`/api/console/pairings/${userCode}/approve`);
    expect(approved.status).toBe(200);
    expect(approved.body.data.status).toBe("approved");

    backend.advance(interval * 1000);
    const got = await pairingToken(backend.url, deviceCode);
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual({
      token: expect.stringMatching(/^coh_/),
      repo: "acme/shop",
      person: "alice",
    });

    // An ordinary agent token for that repository, stored hashed.
    const agent = agentClient(backend.url, got.body.data.token, "s-pair");
    const published = await agent.post({ type: "publish", prompt: "hello" });
    expect(published.status).toBe(200);
    const rows = await backend.deps.db.prisma.agentToken.findMany({ where: { person: "alice" } });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.tokenHash).not.toContain(got.body.data.token);
    expect(JSON.stringify(await backend.deps.db.prisma.pairing.findMany())).not.toContain(
      got.body.data.token,
    );

    // Single use: the device code never yields a second token.
    backend.advance(interval * 1000);
    const again = await pairingToken(backend.url, deviceCode);
    expect(again.body.error.code).toBe("PAIRING_EXPIRED");
    expect(await backend.deps.db.prisma.agentToken.count({ where: { person: "alice" } })).toBe(1);
    // And the code cannot be approved twice.
    expect((await admin.post(`/api/console/pairings/${userCode}/approve`)).status).toBe(403);
  });

  it("slows a client that polls faster than its interval, without failing the request", async () => {
    const { deviceCode, interval, userCode } = (await pairingRequest(backend.url, REQUEST)).body.data;
    expect((await pairingToken(backend.url, deviceCode)).body.error.code).toBe("PAIRING_PENDING");
    const fast = await pairingToken(backend.url, deviceCode);
    expect(fast.status).toBe(429);
    expect(fast.body.error).toMatchObject({ code: "PAIRING_SLOW_DOWN", retryable: true });
    expect(fast.body.error.details.interval).toBeGreaterThan(interval);
    // Waiting the new interval: still alive, and it resolves after approval.
    backend.advance(fast.body.error.details.interval * 1000);
    expect((await pairingToken(backend.url, deviceCode)).body.error.code).toBe("PAIRING_PENDING");
    await admin.post(`/api/console/pairings/${userCode}/approve`);
    backend.advance(fast.body.error.details.interval * 1000);
    expect((await pairingToken(backend.url, deviceCode)).status).toBe(200);
  });

  it("answers denial and expiry with their own codes", async () => {
    const denied = (await pairingRequest(backend.url, REQUEST)).body.data;
    await admin.post(`/api/console/pairings/${denied.userCode}/deny`);
    backend.advance(10_000);
    const d = await pairingToken(backend.url, denied.deviceCode);
    expect(d.status).toBe(403);
    expect(d.body.error.code).toBe("PAIRING_DENIED");

    const late = (await pairingRequest(backend.url, REQUEST)).body.data;
    backend.advance(Date.parse(late.expiresAt) - Date.now() + 1_000);
    const e = await pairingToken(backend.url, late.deviceCode);
    expect(e.status).toBe(410);
    expect(e.body.error.code).toBe("PAIRING_EXPIRED");
    expect((await admin.post(`/api/console/pairings/${late.userCode}/approve`)).body.error.code).toBe(
      "PAIRING_EXPIRED",
    );
    expect((await pairingToken(backend.url, "cohd_never-issued")).body.error.code).toBe("PAIRING_EXPIRED");
  });

  it("rejects malformed requests with INVALID_INPUT", async () => {
    const bad = await pairingRequest(backend.url, { ...REQUEST, repo: "not a repo" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("INVALID_INPUT");
    const extra = await pairingRequest(backend.url, { ...REQUEST, admin: true });
    expect(extra.body.error.code).toBe("INVALID_INPUT");
  });
});

describe("sign-in and console sessions", () => {
  it("takes a local admin link once", async () => {
    const token = await consoleOps.createLoginLink(backend.deps);
    const first = new ConsoleClient(backend.url);
    const res = await first.signInWith(`/auth/local?token=${token}&next=/pair?code=X`);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/pair?code=X");
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith("cohent_console="))!;
    expect(cookie).toMatch(/httponly/i);
    expect(cookie).toMatch(/samesite=lax/i);
    expect(first.csrf).not.toBe("");

    const second = new ConsoleClient(backend.url);
    const reused = await second.signInWith(`/auth/local?token=${token}`);
    expect(reused.headers.get("location")).toBe("/signin?error=link");
    expect((await second.get("/api/console/me")).body.data.signedIn).toBe(false);
    expect((await second.get("/api/console/repos")).status).toBe(401);
  });

  it("never redirects off-site after sign-in", async () => {
    const token = await consoleOps.createLoginLink(backend.deps);
    const res = await new ConsoleClient(backend.url).signInWith(
      `/auth/local?token=${token}&next=//evil.example/`,
    );
    expect(res.headers.get("location")).toBe("/");
  });

  it("refuses state changes without the CSRF token or from another origin", async () => {
    await backend.addRepo("acme/csrf");
    const noToken = await admin.post("/api/console/repos/acme/csrf/goal", { goal: "x" }, { csrf: null });
    expect(noToken.status).toBe(403);
    expect(noToken.body.error.code).toBe("CSRF_REJECTED");
    const wrong = await admin.post("/api/console/repos/acme/csrf/goal", { goal: "x" }, { csrf: "guess" });
    expect(wrong.body.error.code).toBe("CSRF_REJECTED");
    const foreign = await admin.post(
      "/api/console/repos/acme/csrf/goal",
      { goal: "x" },
      { origin: "http://evil.example" },
    );
    expect(foreign.body.error.code).toBe("CSRF_REJECTED");
    const ok = await admin.post(
      "/api/console/repos/acme/csrf/goal",
      { goal: "Ship checkout v2" },
      { origin: backend.url },
    );
    expect(ok.status).toBe(200);
    // The publish packet hands the new goal to agents.
    const agent = agentClient(backend.url, await backend.issueToken("acme/csrf", "bob"), "s-goal");
    expect((await agent.post({ type: "publish", prompt: "go" })).body.data.packet.goal).toBe(
      "Ship checkout v2",
    );
  });

  it("keeps agent tokens and console sessions apart", async () => {
    await backend.addRepo("acme/apart");
    const token = await backend.issueToken("acme/apart", "carol");
    const asAgent = await fetch(`${backend.url}/api/console/repos/acme/apart`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(asAgent.status).toBe(401);
    expect(((await asAgent.json()) as any).error.code).toBe("UNAUTHENTICATED");

    const withCookie = await fetch(`${backend.url}/api/agent`, {
      method: "POST",
      headers: {
        cookie: admin.cookieHeader(),
        "x-cohent-session": "s1",
        "content-type": "application/json",
        "x-cohent-csrf": admin.csrf,
      },
      body: JSON.stringify({ type: "publish", prompt: "hi" }),
    });
    expect(withCookie.status).toBe(401);
    expect(((await withCookie.json()) as any).error.code).toBe("UNAUTHENTICATED");
  });

  it("signs out", async () => {
    const token = await consoleOps.createLoginLink(backend.deps);
    const c = new ConsoleClient(backend.url);
    await c.signInWith(`/auth/local?token=${token}`);
    expect((await c.post("/api/console/logout")).status).toBe(200);
    expect((await c.get("/api/console/repos")).status).toBe(401);
  });
});

describe("control room API", () => {
  it("revokes a token immediately and pauses a session for its next call", async () => {
    await backend.addRepo("acme/ops");
    const secret = await backend.issueToken("acme/ops", "dave", "Claude Code");
    const agent = agentClient(backend.url, secret, "s-ops");
    const { intentId } = (await agent.post({ type: "publish", prompt: "fix the cart" })).body.data;

    const overview = (await admin.get("/api/console/repos/acme/ops")).body.data;
    expect(overview.work).toHaveLength(1);
    expect(overview.work[0]).toMatchObject({
      intentId,
      person: "dave",
      client: "Claude Code",
      guard: "calling-in",
      control: "active",
    });

    const paused = await admin.post(`/api/console/sessions/${overview.work[0].sessionId}/control`, {
      kind: "pause",
    });
    expect(paused.body.data.control).toBe("paused");
    const next = await agent.poll(intentId);
    expect(next.body.meta.session.control).toBe("paused");
    const after = (await admin.get("/api/console/repos/acme/ops")).body.data;
    expect(after.commands[0]).toMatchObject({ kind: "pause", actor: "admin", person: "dave" });

    const tokenId = after.tokens[0].id;
    expect((await admin.post(`/api/console/tokens/${tokenId}/revoke`)).status).toBe(200);
    const refused = await agent.post({ type: "publish", prompt: "again" });
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe("UNAUTHENTICATED");
    expect((await admin.get("/api/console/repos/acme/ops")).body.data.tokens[0].revokedAt).not.toBeNull();
  });

  it("streams a change within about a second", async () => {
    await backend.addRepo("acme/live");
    const agent = agentClient(backend.url, await backend.issueToken("acme/live", "erin"), "s-live");
    const ac = new AbortController();
    const res = await fetch(`${backend.url}/api/console/events`, {
      headers: { cookie: admin.cookieHeader() },
      signal: ac.signal,
    });
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    const nextChange = async () => {
      const start = text.split("event: change").length;
      while (text.split("event: change").length <= start) text += decoder.decode((await reader.read()).value);
    };
    await nextChange(); // the current version on connect
    const t0 = Date.now();
    await agent.post({ type: "publish", prompt: "live change" });
    await nextChange();
    // A promised deadline: at once by a wake-up, at the latest at the stream's 1 s backstop
    // (http/live BACKSTOP_MS); 5 s is five times the promise.
    expect(Date.now() - t0).toBeLessThan(5_000);
    ac.abort();
  });
});
