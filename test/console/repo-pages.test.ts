import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { agentClient } from "../helpers/backend.js";
import { cohent, openControlRoom, screenshotPath, type ServeProcess } from "./browser.js";
import { declare, publish } from "./helpers.js";

/**
 * The repository list at a company's size, in the real `cohent serve` and Debian's chromium: 1,000
 * repositories registered from one set-up file (`cohent repo add --file`), searched (typing narrows
 * the list and its total), paged (next, previous, the URL's query, a linked page), a repository's page
 * opened from the list with its agent live, and the page's live stream subscribed to that repository
 * alone: another repository's events never reach it. The time a repository's page takes to show its
 * agent is printed, not asserted.
 */

const N = 1_000;
const name = (i: number) => `acme/svc-${String(i).padStart(4, "0")}`;
const SHOWN = name(123);
const OTHER = name(999);

let serve: ServeProcess;
let page: Page;
let closeRoom: () => Promise<void>;
/** The console API's GETs of the page, as the browser sent them. */
const requests: string[] = [];

const cards = () => page.getByTestId("repo-card");
const cardNames = async () => cards().evaluateAll((els) => els.map((e) => e.getAttribute("data-repo")));
const total = async () => Number(await page.getByTestId("repo-total").getAttribute("data-total"));
/** Waits until the list shows `n` repositories in all, and `first` as its first card. */
async function listShows(n: number, first: string) {
  await page.waitForFunction(
    ([n, first]) => {
      const t = document.querySelector('[data-testid="repo-total"]')?.getAttribute("data-total");
      const c = document.querySelector('[data-testid="repo-card"]')?.getAttribute("data-repo");
      return t === String(n) && c === first;
    },
    [n, first] as const,
    { timeout: 10_000 },
  );
}

beforeAll(async () => {
  ({ serve, page, close: closeRoom } = await openControlRoom(900));
  const dir = mkdtempSync(path.join(os.tmpdir(), "cohent-repos-"));
  try {
    const file = path.join(dir, "repos.txt");
    // Written in reverse: the list's order is the database's, by name, not the file's.
    writeFileSync(file, Array.from({ length: N }, (_, i) => name(N - 1 - i)).join("\n") + "\n");
    const t0 = performance.now();
    cohent(["repo", "add", "--file", file], serve.dataDir);
    console.log(`seeded ${N} repositories with one set-up file in ${Math.round(performance.now() - t0)} ms`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  page.on("request", (r) => {
    const u = new URL(r.url());
    if (u.pathname.startsWith("/api/console/")) requests.push(u.pathname + u.search);
  });
  await page.goto(serve.signInLink);
  await page.getByRole("heading", { name: "Repositories" }).waitFor();
}, 180_000);

afterAll(() => closeRoom?.());

describe("repository list at 1,000 repositories", () => {
  it("shows the first page of 50 with the total, and the list's stream carries no repository's events", async () => {
    await listShows(N, name(0));
    expect(await cardNames()).toEqual(Array.from({ length: 50 }, (_, i) => name(i)));
    expect(await page.getByTestId("page-of").innerText()).toBe("Page 1 of 20");
    expect(await page.getByTestId("live").getAttribute("data-topic")).toBe("");
    expect(requests.filter((r) => r.startsWith("/api/console/events"))).toEqual(["/api/console/events"]);
    await page.screenshot({ path: screenshotPath("repo-list-1000") });
  });

  it("typing in the search box narrows the list and its total, in the URL too", async () => {
    const box = page.getByRole("searchbox", { name: "Search repositories" });
    await box.click();
    await box.pressSequentially("SVC-012", { delay: 20 });
    await listShows(10, name(120));
    expect(await cardNames()).toEqual(Array.from({ length: 10 }, (_, i) => name(120 + i)));
    expect(new URL(page.url()).searchParams.get("q")).toBe("SVC-012");
    expect(await page.getByTestId("repo-total").innerText()).toContain("1–10 of 10 repositories");
    // One page: no pager.
    expect(await page.getByTestId("page-of").count()).toBe(0);
    // One more character, from the keyboard: narrower still.
    await page.keyboard.type("3");
    await listShows(1, name(123));
    expect(await cardNames()).toEqual([name(123)]);
    // Nothing matches: said so.
    await page.keyboard.type("x");
    await page.waitForFunction(() =>
      document.querySelector('[data-testid="repo-total"]')?.textContent?.includes("No repository matches"),
    );
    expect(await total()).toBe(0);
    // Cleared: every repository again, from the first page.
    await box.fill("");
    await box.press("Enter");
    await listShows(N, name(0));
    expect(new URL(page.url()).search).toBe("");
  });

  it("pages with next and previous, from the keyboard, and the URL's query", async () => {
    await page.getByTestId("page-next").click();
    await listShows(N, name(50));
    expect(new URL(page.url()).searchParams.get("page")).toBe("2");
    expect(await page.getByTestId("page-of").innerText()).toBe("Page 2 of 20");
    // Keyboard: focus the Next link and press Enter.
    await page.getByTestId("page-next").focus();
    await page.keyboard.press("Enter");
    await listShows(N, name(100));
    expect(new URL(page.url()).searchParams.get("page")).toBe("3");
    await page.getByTestId("page-prev").click();
    await listShows(N, name(50));
    // The browser's back button goes to the page before.
    await page.goBack();
    await listShows(N, name(100));
    // Every card of page 3 is the next 50 by name.
    expect(await cardNames()).toEqual(Array.from({ length: 50 }, (_, i) => name(100 + i)));
  });

  it("a linked page opens at that page, with its search", async () => {
    await page.goto(`${serve.url}/?page=7`);
    await listShows(N, name(300));
    expect(await page.getByTestId("page-of").innerText()).toBe("Page 7 of 20");
    await page.goto(`${serve.url}/?q=svc-01&page=2`);
    await listShows(100, name(150));
    expect(await page.getByTestId("page-of").innerText()).toBe("Page 2 of 2");
    expect(await page.getByRole("searchbox", { name: "Search repositories" }).inputValue()).toBe("svc-01");
    expect(await page.getByTestId("page-next").count()).toBe(0);
    // The last page, then past it: the page says so and links back.
    await page.goto(`${serve.url}/?page=20`);
    await listShows(N, name(950));
    await page.goto(`${serve.url}/?page=21`);
    await page.getByText("No repositories on page 21").waitFor();
    await page.getByRole("link", { name: "First page" }).click();
    await listShows(N, name(0));
  });

  it("opens a repository's page from the list with its agent live; its stream is that repository's alone", async () => {
    const token = (repo: string, person: string) =>
      cohent(
        ["token", "issue", "--repo", repo, "--person", person, "--client", "Codex"],
        serve.dataDir,
      ).trim();
    const ana = agentClient(serve.url, token(SHOWN, "ana"), "ana-s1");
    const bo = agentClient(serve.url, token(OTHER, "bo"), "bo-s1");
    const a = await publish(ana, "Rework the login flow", { clientName: "Codex" });
    await declare(ana, a.intentId, "Rework the login flow");

    await page.goto(`${serve.url}/?q=${SHOWN.slice(-8)}`);
    await listShows(1, SHOWN);
    const card = page.locator(`[data-testid="repo-card"][data-repo="${SHOWN}"]`);
    const t0 = performance.now();
    await card.click();
    await page.locator('[data-testid="work-card"][data-person="ana"]').waitFor({ timeout: 10_000 });
    const openMs = performance.now() - t0;
    await page.waitForFunction(() =>
      document.querySelector('[data-testid="live"]')?.textContent?.includes("Live"),
    );
    const liveMs = performance.now() - t0;
    console.log(
      `repository page at ${N} repositories: its agent shown ${Math.round(openMs)} ms after the click, live stream open at ${Math.round(liveMs)} ms`,
    );
    expect(new URL(page.url()).pathname).toBe(`/repos/${SHOWN}`);
    expect(await page.getByTestId("live").getAttribute("data-topic")).toBe(SHOWN);
    expect(requests.filter((r) => r.startsWith("/api/console/events?")).at(-1)).toBe(
      `/api/console/events?repo=${encodeURIComponent(SHOWN)}`,
    );
    // The page must not reload from here on: a marker on the window survives only without one.
    await page.evaluate(() => ((window as unknown as { __stay: number }).__stay = 1));

    // Another repository's agent works, then this one's: the page shows this one's new work live, and
    // its stream has carried no event of the other (every event it got names the repository shown).
    const b = await publish(bo, "Elsewhere entirely", { clientName: "Codex" });
    await declare(bo, b.intentId, "Elsewhere entirely");
    await bo.post({ type: "scope", intentId: b.intentId, paths: ["app/cart.ts"] });
    const ana2 = agentClient(serve.url, token(SHOWN, "cy"), "cy-s1");
    const c = await publish(ana2, "Add two-factor login", { clientName: "Codex" });
    await declare(ana2, c.intentId, "Add two-factor login");
    await page.locator('[data-testid="work-card"][data-person="cy"]').waitFor({ timeout: 10_000 });
    expect(await page.evaluate(() => (window as unknown as { __stay?: number }).__stay)).toBe(1);
    expect(await page.getByTestId("live").getAttribute("data-repos")).toBe(SHOWN);
    // The other repository's events were written (the change log has them), and only not sent here.
    const other = await page.evaluate(
      async (repo) => (await (await fetch(`/api/console/repos/${repo}`)).json()).data.work.length,
      OTHER,
    );
    expect(other).toBe(1);
    await page.screenshot({ path: screenshotPath("repo-page-at-1000") });

    // Back on the list: its stream is the summary again, and the card counts the shown repository's work.
    await page.goto(`${serve.url}/?q=${SHOWN.slice(-8)}`);
    await listShows(1, SHOWN);
    expect(await page.getByTestId("live").getAttribute("data-topic")).toBe("");
    expect(await card.innerText()).toContain("2 open intents");
  });
});
