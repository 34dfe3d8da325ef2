import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { agentClient } from "../helpers/backend.js";
import { cohent, openControlRoom, screenshotPath, type ServeProcess } from "./browser.js";

/**
 * What the page shows live, without a reload: a promised deadline. A change reaches an open stream at
 * once, or at the latest at its 1 s backstop (http/live BACKSTOP_MS); 5 s is five times the promise.
 */
const LIVE_MS = 5_000;

/**
 * A session paused because one of its calls changed the guard's files
 * (`guard`, kind `guard-files`; issue 49 item 1), in a real browser against
 * the real `cohent serve`: the reason shows, live, on its work card and in
 * the sessions table of People & commands, and a person's resume clears it.
 */

let serve: ServeProcess;
let page: Page;
let closeRoom: () => Promise<void>;
let token = "";

beforeAll(async () => {
  ({ serve, page, close: closeRoom } = await openControlRoom(900));
  cohent(["repo", "add", "acme/shop"], serve.dataDir);
  token = cohent(
    ["token", "issue", "--repo", "acme/shop", "--person", "erin", "--client", "Claude Code"],
    serve.dataDir,
  ).trim();
  await page.goto(serve.signInLink);
  await page.getByRole("heading", { name: "Repositories" }).waitFor();
}, 180_000);

afterAll(() => closeRoom?.());

describe("a session paused for changing the guard's files, in the Control Room", () => {
  it("shows why on the work card and in the sessions table; resume clears it", async () => {
    const agent = agentClient(serve.url, token, "erin-1");
    const intentId: string = (await agent.post({ type: "publish", prompt: "Set up the dev environment" }))
      .body.data.intentId;
    await page.goto(`${serve.url}/repos/acme/shop`);
    const card = page.locator('[data-testid="work-card"][data-person="erin"]');
    await card.waitFor({ timeout: LIVE_MS });

    const r = await agent.post({
      type: "guard",
      intentId,
      kind: "guard-files",
      tool: "Bash",
      command: "sh scripts/setup.sh",
      files: [{ path: "/home/erin/.claude/settings.json", change: "disableAllHooks set" }],
      undone: true,
    });
    expect(r.body.ok).toBe(true);

    // Live, without a reload: the card is paused and says why.
    await card.getByTestId("control").filter({ hasText: "paused" }).waitFor({ timeout: LIVE_MS });
    const cardText = await card.innerText();
    expect(cardText).toContain("/home/erin/.claude/settings.json: disableAllHooks set");
    expect(cardText).toContain("a person must resume it");
    await page.screenshot({ path: screenshotPath("guard-files-01-card") });

    // The sessions table says it too.
    await page.goto(`${serve.url}/repos/acme/shop/commands`);
    const row = page.locator('[data-testid="session-row"][data-person="erin"]');
    const reason = row.getByTestId("control-reason");
    await reason.waitFor({ timeout: LIVE_MS });
    expect(await reason.innerText()).toMatch(/changed Cohent's guard files .*disableAllHooks set.* undone/);
    await page.screenshot({ path: screenshotPath("guard-files-02-sessions") });

    // A person resumes it: the reason goes.
    await row.getByRole("button", { name: /resume/i }).click();
    await reason.waitFor({ state: "detached", timeout: LIVE_MS });
    expect((await agent.post({ type: "scope", intentId, paths: ["src/app.ts"] })).status).toBe(200);
  });
});
