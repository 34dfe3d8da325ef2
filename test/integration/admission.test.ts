import { mkdtempSync, readFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postAgent } from "@cohent/client";
import { agentClient, startBackend, type TestBackend } from "../helpers/backend.js";

/**
 * Past capacity (backend/src/http/admission.ts), on a real server with two agent requests allowed in
 * flight: two requests held open (their headers sent, their bodies never) saturate it. Then an
 * agent's write and a new long-poll are answered at once with 503 OVERLOADED and a Retry-After of
 * 1-3 s, and the server logs that it does; the kill-switch read, a person's Control Room API and
 * the health checks are still answered. Long-polls waiting are not counted; once the held requests
 * end, writes are admitted again. The adapter's client waits the Retry-After and sends again within
 * its request's timeout, and gives the refusal back when the wait would pass it.
 */

const REPO = "acme/admission";
const logFile = path.join(mkdtempSync(path.join(os.tmpdir(), "cohent-admission-")), "server.log");
let backend: TestBackend;
let token: string;
const held: net.Socket[] = [];

/** A POST /api/agent whose headers are sent and whose body never is: in flight until the socket closes. */
function holdOne(): Promise<void> {
  const { port } = backend;
  return new Promise((resolve, reject) => {
    const s = net.connect(port, "127.0.0.1", () => {
      s.write(
        "POST /api/agent HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 64\r\n\r\n",
      );
      resolve();
    });
    s.on("error", reject);
    held.push(s);
  });
}

/** The server answers `fn`'s request with 503 within a bounded number of tries (it sees the held requests after its next turn). */
async function untilOverloaded(fn: () => Promise<Response>): Promise<Response> {
  for (let i = 0; i < 50; i++) {
    const res = await fn();
    if (res.status === 503) return res;
    await res.body?.cancel();
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("never overloaded");
}

const headers = (session: string, extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${token}`,
  "x-cohent-session": session,
  "content-type": "application/json",
  ...extra,
});
const write = (session: string) =>
  fetch(`${backend.url}/api/agent`, {
    method: "POST",
    headers: headers(session),
    body: JSON.stringify({ type: "publish", prompt: "Add a page" }),
  });

beforeAll(async () => {
  backend = await startBackend({
    admission: { maxInFlight: 2, maxLagMs: 60_000 },
    log: pino({ level: "warn" }, pino.destination({ dest: logFile, sync: true })),
  });
  await backend.addRepo(REPO, "Admission");
  token = await backend.issueToken(REPO, "ana", "Claude Code");
});

afterAll(async () => {
  for (const s of held) s.destroy();
  await backend?.stop();
});

describe("past capacity, an agent's request is answered at once with a retryable 503", () => {
  it("long-polls waiting are not counted in flight", async () => {
    const ana = agentClient(backend.url, token, "ana-polls");
    const intentId: string = (await ana.post({ type: "publish", prompt: "Wait" })).body.data.intentId;
    // A first poll takes what is there; from its cursor the long-polls have nothing to answer, and wait.
    const first = await fetch(`${backend.url}/api/agent`, {
      headers: headers("ana-polls", { "x-cohent-intent": intentId }),
    });
    const { cursor } = ((await first.json()) as { data: { cursor: string } }).data;
    let answered = 0;
    const polls = [1, 2, 3].map(() =>
      fetch(`${backend.url}/api/agent`, {
        headers: headers("ana-polls", {
          "x-cohent-intent": intentId,
          "x-cohent-cursor": cursor,
          "x-cohent-wait": "3",
        }),
      }).then((r) => (answered++, r)),
    );
    await new Promise((r) => setTimeout(r, 200));
    const res = await write("ana-during-polls");
    expect(res.status).toBe(200);
    expect(answered, "the long-polls were still waiting").toBe(0);
    for (const p of await Promise.all(polls)) expect(p.status).toBe(200);
  });

  it("refuses writes and new long-polls, answers the kill switch, people and health, then admits again", async () => {
    await holdOne();
    await holdOne();
    // A round trip after both: the server has read their headers before it answers it.
    expect((await fetch(`${backend.url}/healthz`)).status).toBe(200);
    const refused = await untilOverloaded(() => write("ana-1"));
    const body = (await refused.json()) as { ok: boolean; error: { code: string; retryable: boolean } };
    expect(body.ok).toBe(false);
    expect(body.error).toMatchObject({ code: "OVERLOADED", retryable: true });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(3);

    const poll = await fetch(`${backend.url}/api/agent`, {
      headers: headers("ana-1", { "x-cohent-intent": "wki_x", "x-cohent-wait": "5" }),
    });
    expect(poll.status).toBe(503);
    expect(((await poll.json()) as { error: { code: string } }).error.code).toBe("OVERLOADED");

    // The kill-switch read, a person's API (not signed in: its own answer), the health checks.
    const killSwitch = await fetch(`${backend.url}/api/agent/session`, { headers: headers("ana-1") });
    expect(killSwitch.status).toBe(200);
    expect(((await killSwitch.json()) as { data: { control: string } }).data.control).toBe("active");
    const person = await fetch(`${backend.url}/api/console/me`);
    expect(person.status).not.toBe(503);
    await person.body?.cancel();
    expect((await fetch(`${backend.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${backend.url}/readyz`)).status).toBe(200);

    const log = readFileSync(logFile, "utf8");
    expect(log).toMatch(/at capacity: agent requests answered 503 OVERLOADED/);
    expect(log).toMatch(/"inFlight":2/);

    for (const s of held.splice(0)) s.destroy();
    let admitted: Response | null = null;
    for (let i = 0; i < 50 && admitted?.status !== 200; i++) {
      await admitted?.body?.cancel();
      if (i) await new Promise((r) => setTimeout(r, 20));
      admitted = await write("ana-2");
    }
    expect(admitted!.status).toBe(200);
  });

  it("the adapter's client waits the Retry-After and sends again, within its timeout", async () => {
    await holdOne();
    await holdOne();
    expect((await fetch(`${backend.url}/healthz`)).status).toBe(200);
    await untilOverloaded(() => write("ana-3"));
    const c = (timeoutMs: number) => ({ service: backend.url, token, session: "ana-3", timeoutMs });

    // A timeout shorter than any Retry-After (1-3 s): the refusal comes back, with its wait.
    const short = await postAgent(c(900), { type: "publish", prompt: "Too busy" });
    expect(short.ok).toBe(false);
    expect(!short.ok && short.error).toMatchObject({
      code: "OVERLOADED",
      details: { retryAfterSeconds: expect.any(Number) },
    });

    // The held requests end while the client waits: its resend is admitted.
    setTimeout(() => {
      for (const s of held.splice(0)) s.destroy();
    }, 300);
    const waited = await postAgent(c(10_000), { type: "publish", prompt: "Once there is room" });
    expect(waited.ok, JSON.stringify(waited)).toBe(true);
  });
});
