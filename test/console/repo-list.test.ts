import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentClient, startBackend, type TestBackend } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";
import { signedInAdmin, type ConsoleClient } from "./helpers.js";

/**
 * The repository list's search and pages (GET /api/console/repos?q=&page=&limit=) and the live
 * stream's subscriptions (GET /api/console/events?repo=), over real HTTP on both databases.
 */

/** An SSE stream's `change` events, read as they come: `until` reads until `enough` holds or the stream is quiet for 15 s. */
function sse(res: Response) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const events: { id: string | null; data: any }[] = [];
  let buffer = "";
  return {
    events,
    until: async (enough: (events: { id: string | null; data: any }[]) => boolean) => {
      while (!enough(events)) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const quiet = new Promise<null>((r) => (timer = setTimeout(() => r(null), 15_000)));
        const chunk = await Promise.race([reader.read(), quiet]);
        clearTimeout(timer);
        if (chunk === null || chunk.done) break;
        buffer += decoder.decode(chunk.value);
        let cut: number;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const data = block.match(/^data: (.*)$/m)?.[1];
          if (data) events.push({ id: block.match(/^id: (.*)$/m)?.[1] ?? null, data: JSON.parse(data) });
        }
      }
      return events;
    },
    stop: () => reader.cancel().catch(() => {}),
  };
}

describe.each(DATABASE_KINDS)("repository list and live subscriptions (%s)", (kind) => {
  let backend: TestBackend;
  let admin: ConsoleClient;
  // 120 repositories: acme/r000 … acme/r099 and zeta/Shop-00 … zeta/Shop-19.
  const ACME = Array.from({ length: 100 }, (_, i) => `acme/r${String(i).padStart(3, "0")}`);
  const ZETA = Array.from({ length: 20 }, (_, i) => `zeta/Shop-${String(i).padStart(2, "0")}`);

  beforeAll(async () => {
    // No admission control: the test's agents call the server in this process's loop (http/admission).
    backend = await startBackend({ kind, admission: null });
    for (const name of [...ZETA, ...ACME].reverse()) await backend.addRepo(name);
    admin = await signedInAdmin(backend);
  }, 60_000);
  afterAll(async () => backend?.stop());

  const list = (query: string) => admin.get(`/api/console/repos${query}`);

  it("pages every repository by name, 50 by default, with the total", async () => {
    const first = await list("");
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ q: "", page: 1, limit: 50, total: 120, pages: 3 });
    expect(first.body.data.repos.map((r: any) => r.name)).toEqual(ACME.slice(0, 50));
    // Every page once, in order: the pages together are the registered repositories, each once.
    const seen: string[] = [];
    for (let page = 1; page <= 3; page++)
      seen.push(...(await list(`?page=${page}`)).body.data.repos.map((r: any) => r.name));
    expect(seen).toEqual([...ACME, ...ZETA]);
    const last = await list("?page=3&limit=50");
    expect(last.body.data.repos).toHaveLength(20);
    // Past the last page: empty, with the total, so the page can offer the way back.
    expect((await list("?page=9")).body.data).toMatchObject({ repos: [], total: 120, page: 9 });
    expect((await list("?limit=200")).body.data.repos).toHaveLength(120);
  });

  it("searches a case-insensitive substring, and pages the matches", async () => {
    const shop = await list("?q=SHOP-1&limit=4");
    expect(shop.body.data).toMatchObject({ q: "SHOP-1", total: 10, pages: 3, limit: 4 });
    expect(shop.body.data.repos.map((r: any) => r.name)).toEqual(ZETA.slice(10, 14));
    expect((await list("?q=shop-1&limit=4&page=3")).body.data.repos.map((r: any) => r.name)).toEqual(
      ZETA.slice(18, 20),
    );
    expect((await list("?q=%20r05%20")).body.data).toMatchObject({ q: "r05", total: 10 });
    expect((await list("?q=nothing-like-it")).body.data).toMatchObject({ repos: [], total: 0, pages: 1 });
    // LIKE's wildcards are plain characters.
    expect((await list("?q=%25")).body.data.total).toBe(0);
    expect((await list("?q=_")).body.data.total).toBe(0);
  });

  it("a row counts what the repository's own page shows", async () => {
    const token = await backend.issueToken("acme/r007", "ana", "Codex");
    await agentClient(backend.url, token, "s-1").post({ type: "publish", prompt: "Fix the cart" });
    const row = (await list("?q=r007")).body.data.repos[0];
    const page = (await admin.get("/api/console/repos/acme/r007")).body.data;
    expect(row).toMatchObject({
      name: "acme/r007",
      openIntents: page.work.length,
      activeTokens: 1,
      people: ["ana"],
    });
    expect(row.openIntents).toBe(1);
    expect(row.lastActivityAt).not.toBeNull();
  });

  it("refuses bad paging with INVALID_INPUT and names the field", async () => {
    for (const [query, field] of [
      ["?page=0", "page"],
      ["?page=-1", "page"],
      ["?page=abc", "page"],
      ["?page=1.5", "page"],
      ["?limit=0", "limit"],
      ["?limit=201", "limit"],
      ["?limit=x", "limit"],
      [`?q=${"a".repeat(201)}`, "q"],
      ["?q=a&q=b", "q"],
      ["?sort=name", "query"],
    ] as const) {
      const res = await list(query);
      expect(res.status, query).toBe(400);
      expect(res.body.error.code, query).toBe("INVALID_INPUT");
      expect(res.body.error.details, query).toMatchObject({ query: field });
      expect(res.body.error.message, query).not.toBe("The request does not match protocol version 1.");
    }
  });

  it("a repository's stream carries its events only; the list's stream no repository's", async () => {
    await backend.addRepo("acme/shown");
    await backend.addRepo("acme/other");
    const shown = agentClient(backend.url, await backend.issueToken("acme/shown", "ana"), "s-shown");
    const other = agentClient(backend.url, await backend.issueToken("acme/other", "bo"), "s-other");
    const open = async (query: string) =>
      sse(await admin.raw(`/api/console/events${query}`, { headers: { accept: "text/event-stream" } }));
    const repoId = (await backend.deps.store.repos.byName("acme/shown"))!.id;
    const startSeq = await backend.deps.store.journal.latestSeq(repoId);
    const one = await open("?repo=acme/shown");
    const all = await open("");

    // Another repository's change, then the shown one's, twice: the page's stream shows only its own.
    const mine = (ev: { data: any }[]) => ev.filter((e) => e.data.repo === "acme/shown").length;
    await other.post({ type: "publish", prompt: "Elsewhere" });
    await shown.post({ type: "publish", prompt: "Here" });
    await one.until((ev) => mine(ev) >= 1);
    await other.post({ type: "publish", prompt: "Elsewhere again" });
    await shown.post({ type: "publish", prompt: "Here again" });
    const log = await backend.deps.store.journal.eventsAfter(repoId, startSeq, 100);
    expect(log.length).toBeGreaterThanOrEqual(2);
    await one.until((ev) => mine(ev) >= log.length);
    one.stop();
    const withRepo = one.events.filter((e) => e.data.repo);
    expect(new Set(withRepo.map((e) => e.data.repo))).toEqual(new Set(["acme/shown"]));
    // Each is a change-log entry of acme/shown with its resume point, and they are all of them.
    expect(withRepo.map((e) => e.data.seq)).toEqual(log.map((e) => e.seq));
    expect(withRepo.at(-1)!.id).toBe(`${repoId}:${log.at(-1)!.seq}`);
    // The other repository's entries were written meanwhile, and none came.
    const otherId = (await backend.deps.store.repos.byName("acme/other"))!.id;
    expect((await backend.deps.store.journal.eventsAfter(otherId, 0, 100)).length).toBeGreaterThanOrEqual(2);

    // The list's stream: summary versions only, never a repository's event, and it does move.
    const summary = await all.until((ev) => ev.length >= 2);
    all.stop();
    expect(summary.length).toBeGreaterThanOrEqual(2);
    expect(summary.filter((e) => e.id !== null || e.data.repo !== undefined)).toEqual([]);
  });

  it("refuses a stream of a bad or unknown repository", async () => {
    const bad = await admin.get("/api/console/events?repo=not-a-name");
    expect([bad.status, bad.body.error.code]).toEqual([400, "INVALID_INPUT"]);
    const none = await admin.get("/api/console/events?repo=acme/none");
    expect([none.status, none.body.error.code]).toEqual([404, "REPOSITORY_NOT_FOUND"]);
  });
});
