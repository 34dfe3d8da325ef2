import http from "node:http";
import type { AddressInfo } from "node:net";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin, startServer, type RunningServer } from "@cohent/backend";
import { freshDatabaseUrl } from "../helpers/backend.js";
import { ConsoleClient, pairingRequest, pairingToken } from "./helpers.js";

/**
 * A small GitHub stand-in on loopback speaking the real OAuth web flow
 * (authorize, access_token) and the two REST endpoints Cohent reads
 * (/user, /repos/{owner}/{repo} with permissions).
 */
function gitHubStandIn(opts: {
  clientId: string;
  clientSecret: string;
  people: Record<string, Record<string, { push: boolean }>>;
}) {
  let nextLogin = "";
  const codes = new Map<string, string>();
  const tokens = new Map<string, string>();
  const seen: string[] = [];
  const issued: string[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url!, "http://x");
    seen.push(`${req.method} ${url.pathname}`);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.method === "GET" && url.pathname === "/login/oauth/authorize") {
      if (url.searchParams.get("client_id") !== opts.clientId) return json(400, { error: "bad client" });
      const code = `code-${Math.random().toString(36).slice(2)}`;
      codes.set(code, nextLogin);
      const back = new URL(url.searchParams.get("redirect_uri")!);
      back.searchParams.set("code", code);
      back.searchParams.set("state", url.searchParams.get("state")!);
      res.writeHead(302, { location: back.toString() });
      return res.end();
    }
    if (req.method === "POST" && url.pathname === "/login/oauth/access_token") {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        const basic = Buffer.from(
          (req.headers.authorization ?? "").replace(/^Basic /, ""),
          "base64",
        ).toString();
        if (basic !== `${opts.clientId}:${opts.clientSecret}`)
          return json(401, { error: "incorrect_client_credentials" });
        const code = new URLSearchParams(body).get("code") ?? "";
        const login = codes.get(code);
        codes.delete(code); // single use, as GitHub does
        if (!login)
          return json(200, {
            error: "bad_verification_code",
            error_description: "The code passed is incorrect or expired.",
          });
        const token = `gho_${Math.random().toString(36).slice(2)}`;
        tokens.set(token, login);
        issued.push(token);
        json(200, { access_token: token, token_type: "bearer", scope: "read:user,repo" });
      });
      return;
    }
    const login = tokens.get((req.headers.authorization ?? "").replace(/^Bearer /, ""));
    if (!login) return json(401, { message: "Bad credentials" });
    if (url.pathname === "/user") return json(200, { login, id: 1 });
    const m = /^\/repos\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    if (m) {
      const perm = opts.people[login]?.[`${m[1]}/${m[2]}`];
      return perm
        ? json(200, {
            full_name: `${m[1]}/${m[2]}`,
            permissions: { admin: false, push: perm.push, pull: true },
          })
        : json(404, { message: "Not Found" });
    }
    json(404, { message: "Not Found" });
  });
  return {
    seen,
    issued,
    as: (login: string) => {
      nextLogin = login;
    },
    listen: () =>
      new Promise<string>((r) =>
        server.listen(0, "127.0.0.1", () => r(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
      ),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const standIn = gitHubStandIn({
  clientId: "Iv1.test",
  clientSecret: "shh",
  people: {
    octo: { "acme/shop": { push: true }, "acme/docs": { push: false } },
    reader: { "acme/shop": { push: false } },
    // Push rights on every other one of acme/p00 … acme/p11 (the list's paging under the rule).
    pager: Object.fromEntries(
      Array.from({ length: 12 }, (_, i) => [`acme/p${String(i).padStart(2, "0")}`, { push: i % 2 === 0 }]),
    ),
  },
});
let server: RunningServer;
let dropDb: () => Promise<void>;

beforeAll(async () => {
  const gh = await standIn.listen();
  const db = await freshDatabaseUrl();
  dropDb = db.drop;
  server = await startServer({
    databaseUrl: db.url,
    log: pino({ level: "silent" }),
    console: {
      buildDir: "/nonexistent",
      github: { clientId: "Iv1.test", clientSecret: "shh", webUrl: gh, apiUrl: gh },
    },
  });
});
afterAll(async () => {
  await server?.close();
  await dropDb?.();
  await standIn.close();
});

/** Follows the OAuth redirects the way a browser would, keeping cookies per origin. */
async function signInWithGitHub(
  login: string,
  next = "/",
): Promise<{ client: ConsoleClient; landed: string }> {
  standIn.as(login);
  const client = new ConsoleClient(server.url);
  const start = await client.raw(`/auth/github?next=${encodeURIComponent(next)}`);
  expect(start.status).toBe(302);
  const authorize = new URL(start.headers.get("location")!);
  expect(authorize.searchParams.get("redirect_uri")).toBe(`${server.url}/auth/github/callback`);
  expect(authorize.searchParams.get("scope")).toBe("read:user repo");
  const toCallback = await fetch(authorize, { redirect: "manual" });
  const callback = new URL(toCallback.headers.get("location")!);
  const done = await client.raw(callback.pathname + callback.search);
  expect(done.status).toBe(302);
  const me = await client.get("/api/console/me");
  if (me.body.data.signedIn) client.csrf = me.body.data.csrfToken;
  return { client, landed: done.headers.get("location")! };
}

describe("GitHub sign-in (against a loopback stand-in)", () => {
  it("signs a person in through the OAuth web flow and returns to where they were going", async () => {
    const { client, landed } = await signInWithGitHub("octo", "/pair?code=ABCD-EFGH");
    expect(landed).toBe("/pair?code=ABCD-EFGH");
    const me = (await client.get("/api/console/me")).body.data;
    expect(me).toMatchObject({ signedIn: true, mode: "github", person: "octo", provider: "github" });
    expect(standIn.seen).toContain("POST /login/oauth/access_token");
    // The GitHub token is kept only sealed with a key from the session cookie,
    // which the database never holds.
    const rows = await server.deps.db.prisma.consoleSession.findMany({ where: { provider: "github" } });
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.githubToken).toMatch(/^v1\./);
      for (const issued of standIn.issued) expect(row.githubToken).not.toContain(issued);
    }
  });

  it("grants approval for owner/name only when GitHub says the person can push", async () => {
    const { client } = await signInWithGitHub("octo");
    const shop = (
      await pairingRequest(server.url, { repo: "acme/shop", machine: "m1", user: "oct", client: "Codex" })
    ).body.data;
    const docs = (await pairingRequest(server.url, { repo: "acme/docs", machine: "m1", user: "oct" })).body
      .data;
    const other = (await pairingRequest(server.url, { repo: "evil/corp", machine: "m1", user: "oct" })).body
      .data;

    expect((await client.get(`/api/console/pairings/${docs.userCode}`)).body.data.mayApprove).toBe(false);
    const refusedDocs = await client.post(`/api/console/pairings/${docs.userCode}/approve`);
    expect(refusedDocs.status).toBe(403);
    expect(refusedDocs.body.error.code).toBe("FORBIDDEN");
    expect((await client.post(`/api/console/pairings/${other.userCode}/approve`)).body.error.code).toBe(
      "FORBIDDEN",
    );

    // The pending list shows only what this person may approve.
    const listed = (await client.get("/api/console/repos")).body.data.pairings.map(
      (p: { repo: string }) => p.repo,
    );
    expect(listed).toEqual(["acme/shop"]);

    expect((await client.get(`/api/console/pairings/${shop.userCode}`)).body.data.mayApprove).toBe(true);
    expect((await client.post(`/api/console/pairings/${shop.userCode}/approve`)).status).toBe(200);
    const got = await pairingToken(server.url, shop.deviceCode);
    // The token works for the GitHub person who approved it.
    expect(got.body.data).toMatchObject({ repo: "acme/shop", person: "octo" });
    expect(
      (await client.get("/api/console/repos")).body.data.repos.map((r: { name: string }) => r.name),
    ).toEqual(["acme/shop"]);
  });

  it("keeps a person without push rights out of the repository's console", async () => {
    const { client } = await signInWithGitHub("reader");
    expect((await client.get("/api/console/repos")).body.data.repos).toEqual([]);
    const res = await client.get("/api/console/repos/acme/shop");
    expect(res.status).toBe(403);
    // Nor may they ask a writer's checkout to restore a caught shell write there.
    const restore = await client.post("/api/console/repos/acme/shop/shell-writes/gc_any/restore");
    expect([restore.status, restore.body.error.code]).toEqual([403, "FORBIDDEN"]);
  });

  it("pages and counts only the repositories the person can push to, and streams none other", async () => {
    for (let i = 0; i < 12; i++)
      await admin.addRepo(server.deps, {
        name: `acme/p${String(i).padStart(2, "0")}`,
        goal: "",
        caseInsensitive: false,
      });
    const { client } = await signInWithGitHub("pager");
    const mine = ["acme/p00", "acme/p02", "acme/p04", "acme/p06", "acme/p08", "acme/p10"];
    const first = (await client.get("/api/console/repos?q=acme/p&limit=4")).body.data;
    expect(first).toMatchObject({ total: 6, pages: 2, page: 1 });
    expect(first.repos.map((r: { name: string }) => r.name)).toEqual(mine.slice(0, 4));
    const second = (await client.get("/api/console/repos?q=acme/p&limit=4&page=2")).body.data;
    expect(second.repos.map((r: { name: string }) => r.name)).toEqual(mine.slice(4));
    // acme/shop is registered and matches no search of theirs; without one, the total is theirs alone.
    expect((await client.get("/api/console/repos")).body.data.total).toBe(6);
    // A repository they cannot push to: no stream of it.
    const stream = await client.get("/api/console/events?repo=acme/p01");
    expect([stream.status, stream.body.error.code]).toEqual([403, "FORBIDDEN"]);
  });

  it("refuses a callback whose state does not match, and the local admin link", async () => {
    const client = new ConsoleClient(server.url);
    await client.raw("/auth/github");
    const forged = await client.raw("/auth/github/callback?code=whatever&state=forged");
    expect(forged.headers.get("location")).toBe("/signin?error=state");
    expect((await client.get("/api/console/me")).body.data.signedIn).toBe(false);
    const local = await client.raw("/auth/local?token=anything");
    expect(local.status).toBe(403);
  });
});
