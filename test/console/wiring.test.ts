import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { init } from "../../adapter/src/installer/init.js";
import { builtAdapter, claude, hook, makeCheckout, run, type Checkout } from "../adapter/helpers.js";
import { cohent, openControlRoom, screenshotPath, type ServeProcess } from "./browser.js";

/**
 * What the page shows live, without a reload: a promised deadline. A change reaches an open stream at
 * once, or at the latest at its 1 s backstop (http/live BACKSTOP_MS); 5 s is five times the promise.
 */
const LIVE_MS = 5_000;

/**
 * "Guard wiring modified" in the Control Room, in a real browser: the real
 * `cohent serve`, a checkout made by init, the real built hook. A session
 * start in a checkout whose Claude Code PreToolUse entry was removed shows
 * up live on the repository's page with the file and what changed, the
 * session's work card carries the mark, and the repair's clean session
 * start takes it away again, without a reload.
 */

let serve: ServeProcess;
let page: Page;
let closeRoom: () => Promise<void>;
let co: Checkout;
let token = "";

beforeAll(async () => {
  ({ serve, page, close: closeRoom } = await openControlRoom(900));
  cohent(["repo", "add", "acme/shop"], serve.dataDir);
  token = cohent(
    ["token", "issue", "--repo", "acme/shop", "--person", "dora", "--client", "Claude Code"],
    serve.dataDir,
  ).trim();
  co = await makeCheckout(serve.url, "acme/shop");
  init({ cwd: co.root, server: serve.url, repo: "acme/shop", bundle: await builtAdapter() });
  await page.goto(serve.signInLink);
  await page.getByRole("heading", { name: "Repositories" }).waitFor();
}, 180_000);

afterAll(() => closeRoom?.());

const env = () => ({ ...claude.env, COHENT_AGENT_TOKEN: token });

describe("guard wiring modified, in the Control Room", () => {
  it("shows the checkout with the file and what changed, marks its session's work, and clears after the repair", async () => {
    await page.goto(`${serve.url}/repos/acme/shop`);
    await page.getByText("No active work").waitFor();
    expect(await page.getByTestId("wiring-alarms").count()).toBe(0);

    const settings = path.join(co.root, ".claude", "settings.json");
    const o = JSON.parse(readFileSync(settings, "utf8"));
    o.hooks.PreToolUse.splice(0, 1);
    writeFileSync(settings, JSON.stringify(o, null, 2));
    const start = await hook(co, claude.sessionStart("dora-1", co.root), env());
    expect([start.code, start.stdout]).toEqual([0, ""]);

    // Live: the alarm arrives without a reload.
    const alarm = page.locator('[data-testid="wiring-alarm"][data-person="dora"]');
    await alarm.waitFor({ timeout: LIVE_MS });
    const text = await alarm.innerText();
    expect(text).toContain("guard wiring modified");
    expect(text).toContain(".claude/settings.json: hook entry PreToolUse removed");
    expect(text).toContain("session dora-1");
    expect(await page.getByRole("heading", { name: "Guard wiring modified" }).count()).toBe(1);

    // The session works on; its card says its checkout's wiring is modified.
    await hook(co, claude.prompt("dora-1", co.root, "Add a coupon field to the cart"), env());
    const card = page.locator('[data-testid="work-card"][data-person="dora"]');
    await card.getByTestId("card-wiring").waitFor({ timeout: LIVE_MS });
    await page.screenshot({ path: screenshotPath("wiring-01-modified") });

    // Every tab of the repository shows it.
    await page.getByRole("link", { name: /People & tokens/ }).click();
    await alarm.waitFor();

    // A person repairs the checkout; its next session start is intact and clears the alarm.
    expect((await run(co, ["init", "--upgrade"], { env: env() })).code).toBe(0);
    await hook(co, claude.sessionStart("dora-2", co.root), env());
    await page.getByTestId("wiring-alarms").waitFor({ state: "detached", timeout: LIVE_MS });
    await page.getByRole("link", { name: /Live work/ }).click();
    await card.waitFor();
    expect(await card.getByTestId("card-wiring").count()).toBe(0);
    await page.screenshot({ path: screenshotPath("wiring-02-repaired") });
  });
});
