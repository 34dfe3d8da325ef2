import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Metrics, ScopesView } from "@cohent/protocol";
import type { Page } from "playwright-core";
import { agentClient } from "../helpers/backend.js";
import { cohent, openControlRoom, screenshotPath, type ServeProcess } from "./browser.js";
import { declare, publish } from "./helpers.js";

/**
 * The Scopes view in the real `cohent serve` and Debian's chromium: one agent
 * holds a file, another queues on it and asks for it with a note that looks
 * like markup; the page shows holder, waiter and note (as text), a person
 * releases the claim from the page, the waiter becomes the holder live, and
 * the release counts as a human command on the metrics page.
 */

const REPO = "acme/scopes";
const FILE = "app/auth.ts";
/** A note that would run script or draw an image if the page rendered it as HTML. */
const NOTE = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script><b>please</b> let go of ${FILE}`;

let serve: ServeProcess;
let page: Page;
let closeRoom: () => Promise<void>;

const cliMetrics = (): Metrics =>
  JSON.parse(cohent(["metrics", "--repo", REPO, "--since", "24h", "--json"], serve.dataDir));
const value = async (name: string) =>
  (await page.getByTestId(`metric-${name}`).getByTestId("value").innerText()).trim();
/** The console API as the signed-in page calls it (its cookie). */
const scopesApi = async (): Promise<ScopesView> => {
  const env = await page.evaluate(
    async (repo) => (await fetch(`/api/console/repos/${repo}/scopes`)).json(),
    REPO,
  );
  if (!env.ok) throw new Error(`GET scopes: ${env.error.code}`);
  return env.data;
};

beforeAll(async () => {
  ({ serve, page, close: closeRoom } = await openControlRoom(900));
  await page.goto(serve.signInLink);
  await page.getByRole("heading", { name: "Repositories" }).waitFor();
}, 180_000);

afterAll(() => closeRoom?.());

describe("Scopes page", () => {
  it("shows holder, queue and release request live; a person releases and the waiter is granted", async () => {
    cohent(["repo", "add", REPO], serve.dataDir);
    const token = (person: string, client: string) =>
      cohent(
        ["token", "issue", "--repo", REPO, "--person", person, "--client", client],
        serve.dataDir,
      ).trim();
    const bo = agentClient(serve.url, token("bo", "Codex"), "bo-s1");
    const ana = agentClient(serve.url, token("ana", "Claude Code"), "ana-s1");

    // Bo claims the file.
    const b = await publish(bo, "Rework the login flow", { clientName: "Codex", model: "gpt-5" });
    await declare(bo, b.intentId, "Rework the login flow");
    expect((await bo.post({ type: "scope", intentId: b.intentId, paths: [FILE] })).status).toBe(200);

    await page.goto(`${serve.url}/repos/${REPO}`);
    await page.getByRole("link", { name: /Scopes/ }).click();
    const boClaim = page.locator('[data-testid="scope-claim"][data-person="bo"]');
    await boClaim.waitFor({ timeout: 5_000 });
    const holder = await boClaim.getByTestId("holder").innerText();
    expect(holder).toContain("bo");
    expect(holder).toContain("Codex · gpt-5");
    expect(await boClaim.innerText()).toContain("Rework the login flow");
    expect(await boClaim.innerText()).toContain(FILE);
    // The page must not reload from here on: a marker on the window survives only without one.
    await page.evaluate(() => ((window as unknown as { __stay: number }).__stay = 1));

    // Ana queues on it and asks Bo to let go; both show up on the open page.
    const a = await publish(ana, "Add two-factor login", { clientName: "Claude Code", paths: [FILE] });
    await declare(ana, a.intentId, "Add two-factor login");
    const queued = await ana.post({ type: "scope", intentId: a.intentId, paths: [FILE], queue: true });
    expect(queued.body.error?.code).toBe("SCOPE_CONFLICT");
    expect(queued.body.error.details.queued).toMatchObject({ place: 1, paths: [FILE] });
    const asked = await ana.post({
      type: "release-request",
      intentId: a.intentId,
      paths: [FILE],
      note: NOTE,
    });
    expect(asked.status).toBe(200);

    const waiter = boClaim.locator('[data-testid="scope-waiter"][data-person="ana"]');
    await waiter.waitFor({ timeout: 5_000 });
    expect(await waiter.getAttribute("data-place")).toBe("1");
    expect(await waiter.innerText()).toContain("Claude Code");
    await page.locator('[data-testid="queue-row"][data-person="ana"]').waitFor();
    const request = boClaim.locator('[data-testid="release-request"][data-person="ana"]');
    await request.waitFor({ timeout: 5_000 });
    expect(await request.innerText()).toContain(FILE);
    // The note arrives as text: the markup shows verbatim, no element was made of it, no script ran.
    const note = request.getByTestId("release-note");
    const view = await scopesApi();
    expect(await note.innerText()).toBe(view.claims[0]!.releaseRequests[0]!.note);
    expect(await note.innerText()).toContain('<img src=x onerror="window.__pwned=1">');
    expect(await note.locator("img, script, b").count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await page.screenshot({ path: screenshotPath("scopes-contended") });

    // A person releases Bo's claim from the page, with a reason.
    await boClaim.getByRole("button", { name: "Release bo's claim" }).click();
    await boClaim.getByLabel("Reason to release bo's claim").fill("ana needs auth for the demo");
    await boClaim.getByRole("button", { name: "Release now" }).click();
    const result = page.getByTestId("release-result");
    await result.waitFor({ timeout: 5_000 });
    expect(await result.innerText()).toMatch(
      new RegExp(`Released bo's claim on ${FILE}[\\s\\S]*granted[\\s\\S]*ana`, "i"),
    );

    // Ana holds it now, with nobody behind her; Bo's claim is gone and listed as lost. No reload happened.
    const anaClaim = page.locator('[data-testid="scope-claim"][data-person="ana"]');
    await anaClaim.waitFor({ timeout: 5_000 });
    await boClaim.waitFor({ state: "detached", timeout: 5_000 });
    expect(await anaClaim.innerText()).toContain(FILE);
    expect(await anaClaim.getByTestId("scope-waiter").count()).toBe(0);
    await page.locator('[data-testid="lost-row"][data-person="bo"]').waitFor({ timeout: 5_000 });
    expect(await page.getByTestId("queue-row").count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __stay?: number }).__stay)).toBe(1);
    await page.screenshot({ path: screenshotPath("scopes-released") });

    // Ana's next packet says so; Bo's next call learns he lost the claim.
    expect(JSON.stringify((await ana.poll(a.intentId)).body)).toContain("scope-granted");
    expect(JSON.stringify((await bo.poll(b.intentId)).body)).toContain("scope-lost");

    // The release is a human command: in the history and on the metrics page.
    await page.getByRole("link", { name: /Commands/ }).click();
    const row = page.getByTestId("command-row").first();
    await row.waitFor();
    expect(await row.innerText()).toMatch(/release[\s\S]*admin[\s\S]*bo[\s\S]*ana needs auth for the demo/);

    await page.getByRole("link", { name: /Metrics/ }).click();
    await page.getByTestId("metric-humanCommands").waitFor();
    const m = cliMetrics();
    expect(m).toMatchObject({
      humanCommands: 1,
      waitsQueued: 1,
      grantedFromQueue: 1,
      releaseRequests: 1,
      lostClaimNotices: 1,
    });
    for (const k of [
      "humanCommands",
      "waitsQueued",
      "grantedFromQueue",
      "releaseRequests",
      "lostClaimNotices",
    ])
      expect(await value(k), k).toBe("1");
    expect(await value("releasesHonoured")).toBe(String(m.releasesHonoured));
    expect(m.queueWaitP50Ms).not.toBeNull();
    expect(await value("queueWaitP50Ms")).toMatch(/^\d+(\.\d)? (ms|s|min|h)$/);
    await page.screenshot({ path: screenshotPath("scopes-metrics") });
    expect(await page.evaluate(() => (window as unknown as { __stay?: number }).__stay)).toBe(1);
  }, 180_000);

  it("marks a claim whose holder went silent as lapsed, and only that one", async () => {
    const repo = "acme/lapsed";
    cohent(["repo", "add", repo], serve.dataDir);
    const claimant = async (person: string, file: string) => {
      const token = cohent(["token", "issue", "--repo", repo, "--person", person], serve.dataDir).trim();
      const a = agentClient(serve.url, token, `${person}-s1`);
      const p = await publish(a, `Work on ${file}`);
      await declare(a, p.intentId, `Work on ${file}`);
      expect((await a.post({ type: "scope", intentId: p.intentId, paths: [file] })).status).toBe(200);
    };
    await claimant("cy", "lib/cy.ts");
    await claimant("dee", "lib/dee.ts");
    // Cy's last call three minutes ago: past the 2-minute silent mark, well inside the 10-minute lease.
    const db = new Database(path.join(serve.dataDir, "cohent.sqlite"));
    try {
      const then = new Date(Date.now() - 3 * 60_000).toISOString().replace("Z", "+00:00");
      const moved = db.prepare(`UPDATE "Session" SET "lastSeenAt" = ? WHERE "key" = 'cy-s1'`).run(then);
      expect(moved.changes).toBe(1);
    } finally {
      db.close();
    }
    await page.goto(`${serve.url}/repos/${repo}/scopes`);
    const cy = page.locator('[data-testid="scope-claim"][data-person="cy"]');
    const dee = page.locator('[data-testid="scope-claim"][data-person="dee"]');
    await cy.waitFor({ timeout: 5_000 });
    await dee.waitFor({ timeout: 5_000 });
    expect(await cy.getByTestId("lapsed").innerText()).toBe("lapsed · silent");
    expect(await dee.getByTestId("lapsed").count()).toBe(0);
    // Still held: a lapsed claim frees only at the lease's expiry.
    expect(await cy.innerText()).toContain("lib/cy.ts");
    await page.screenshot({ path: screenshotPath("scopes-lapsed") });
  }, 60_000);
});
