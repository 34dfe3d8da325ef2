import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { existsSync } from "node:fs";
import { addPatch, claude, codex, hook, makeCheckout } from "../adapter/helpers.js";
import { agentClient } from "../helpers/backend.js";
import { cohent, openControlRoom, screenshotPath, type ServeProcess } from "./browser.js";
import { declare, pairingRequest, pairingToken, publish } from "./helpers.js";

/**
 * The newcomer's path, end to end: the real `cohent serve` child process
 * serving API and console on one port, Debian's chromium driven by
 * playwright-core, agents and the pairing CLI over HTTP.
 */

let serve: ServeProcess;
let browser: Browser;
let page: Page;
let closeRoom: () => Promise<void>;
/** The credential the pairing test receives, used by the agent tests after it. */
let aliceToken = "";

beforeAll(async () => {
  ({ serve, browser, page, close: closeRoom } = await openControlRoom(768));
}, 180_000);

afterAll(() => closeRoom?.());

/** What `bootstrap --approve` does: poll at the interval, slow down when told, until a final answer. */
/**
 * What the page shows live, without a reload: a promised deadline. A change reaches an open stream at
 * once, or at the latest at its 1 s backstop (http/live BACKSTOP_MS); 5 s is five times the promise.
 */
const LIVE_MS = 5_000;

async function waitForCredential(base: string, deviceCode: string, interval: number) {
  let wait = interval;
  for (;;) {
    await new Promise((r) => setTimeout(r, wait * 1000));
    const res = await pairingToken(base, deviceCode);
    if (res.body.ok) return { ...res.body.data, at: Date.now() };
    if (res.body.error.code === "PAIRING_SLOW_DOWN") wait = res.body.error.details.interval;
    else if (res.body.error.code !== "PAIRING_PENDING") throw new Error(res.body.error.code);
  }
}

describe("Control Room in a browser", () => {
  it("serves the console and the API from one port and asks for sign-in first", async () => {
    const health = await fetch(`${serve.url}/healthz`);
    expect(health.status).toBe(200);
    await page.goto(serve.url);
    await page.getByRole("heading", { name: "Sign in to the Control Room" }).waitFor();
    expect(await page.getByText("one-time sign-in link").count()).toBeGreaterThan(0);
    await page.screenshot({ path: screenshotPath("01-sign-in-required") });
  });

  it("signs the local admin in with the printed one-time link, once", async () => {
    expect(serve.signInLink).toMatch(/\/auth\/local\?token=cohl_/);
    await page.goto(serve.signInLink);
    await page.getByRole("heading", { name: "Repositories" }).waitFor();
    await page.getByText("No repositories yet").waitFor();
    expect(await page.getByText("local admin").count()).toBe(1);
    await page.screenshot({ path: screenshotPath("02-empty-repositories") });
    // The link worked once; a second browser cannot reuse it.
    const other = await browser.newContext();
    const p2 = await other.newPage();
    await p2.goto(serve.signInLink);
    await p2.getByText("already used").waitFor();
    await other.close();
  });

  it("approves a pairing while the CLI waits; the CLI gets its credential within seconds", async () => {
    const start = await pairingRequest(serve.url, {
      repo: "acme/shop",
      machine: "alice-laptop",
      user: "alice",
      client: "Codex",
    });
    const { verificationUri, userCode, deviceCode, interval } = start.body.data;
    const credential = waitForCredential(serve.url, deviceCode, interval);

    // The request shows up live on the home page.
    await page.goto(serve.url);
    await page.getByText(userCode).waitFor({ timeout: LIVE_MS });
    await page.goto(verificationUri);
    await page.getByTestId("pair-code").filter({ hasText: userCode }).waitFor();
    await page.getByText("alice-laptop").waitFor();
    await page.screenshot({ path: screenshotPath("03-pairing-request") });
    const approvedAt = Date.now();
    await page.getByRole("button", { name: "Approve" }).click();
    await page.getByTestId("pair-result").waitFor();

    const got = await credential;
    expect(got).toMatchObject({ repo: "acme/shop", person: "alice", token: expect.stringMatching(/^coh_/) });
    // A promised deadline: the CLI's next poll, 2 s apart (PAIRING_INTERVAL_S); a slow-down would
    // wait 7 s. 6 s is three intervals and tells the two apart.
    expect(got.at - approvedAt).toBeLessThan(6_000);
    await page.getByText("has received its credential").waitFor({ timeout: LIVE_MS });
    await page.screenshot({ path: screenshotPath("04-pairing-approved") });
    aliceToken = got.token;
  });

  it("shows two agents live, their collision and the resolver's decision, and pauses one", async () => {
    const alice = agentClient(serve.url, aliceToken, "alice-s1");
    const bobToken = cohent(
      ["token", "issue", "--repo", "acme/shop", "--person", "bob", "--client", "Claude Code"],
      serve.dataDir,
    ).trim();
    const bob = agentClient(serve.url, bobToken, "bob-s1");

    await page.goto(`${serve.url}/repos/acme/shop`);
    await page.getByText("No active work").waitFor();
    await page.screenshot({ path: screenshotPath("05-no-active-work") });

    // Alice starts; her card appears without a reload.
    const a = await publish(alice, "Refactor cart validation", { clientName: "Codex", model: "gpt-5" });
    const t0 = Date.now();
    await page.locator('[data-testid="work-card"][data-person="alice"]').waitFor({ timeout: LIVE_MS });
    expect(Date.now() - t0).toBeLessThan(LIVE_MS);
    await declare(alice, a.intentId, "Refactor cart validation", { outputs: ["cart-api"] });
    expect((await alice.post({ type: "scope", intentId: a.intentId, paths: ["app/cart.ts"] })).status).toBe(
      200,
    );

    // Bob's work depends on Alice's output and wants the same file.
    const b = await publish(bob, "Add coupon field to the cart", { clientName: "Claude Code" });
    const waited = await declare(bob, b.intentId, "Add coupon field", { dependsOn: ["cart-api"] });
    expect(waited.body.data.action).toBe("wait");
    const refused = await bob.post({ type: "scope", intentId: b.intentId, paths: ["app/cart.ts"] });
    expect(refused.body.error.code).toBe("SCOPE_CONFLICT");

    const bobCard = page.locator('[data-testid="work-card"][data-person="bob"]');
    await bobCard.waitFor({ timeout: LIVE_MS });
    await bobCard.getByTestId("collision").first().waitFor({ timeout: LIVE_MS });
    expect(await bobCard.getByTestId("collision").first().innerText()).toContain("held by alice");
    await page
      .locator('[data-testid="work-card"][data-person="alice"]')
      .getByTestId("collision")
      .first()
      .waitFor();
    expect(await bobCard.locator(".badge.wait").count()).toBeGreaterThan(0);
    await page.screenshot({ path: screenshotPath("06-live-work-collision") });

    await page.getByRole("link", { name: /Decisions/ }).click();
    const decision = page.getByTestId("decision").first();
    await decision.waitFor();
    expect(await decision.innerText()).toMatch(/wait[\s\S]*bob[\s\S]*alice/);
    await page.screenshot({ path: screenshotPath("07-decisions") });

    // Pause Bob from the browser; his next call reads it.
    await page.getByRole("link", { name: /Live work/ }).click();
    await bobCard.getByRole("button", { name: "Pause bob" }).click();
    await bobCard.getByTestId("control").filter({ hasText: "paused" }).waitFor({ timeout: LIVE_MS });
    const next = await bob.poll(b.intentId);
    expect(next.body.meta.session.control).toBe("paused");
    const blocked = await bob.post({ type: "scope", intentId: b.intentId, paths: ["app/coupon.ts"] });
    expect(blocked.body.error.code).toBe("SESSION_PAUSED");
    expect((await alice.poll(a.intentId)).body.meta.session.control).toBe("active");

    await page.getByRole("link", { name: /Commands/ }).click();
    await page.getByTestId("command-row").first().waitFor();
    expect(await page.getByTestId("command-row").first().innerText()).toMatch(/pause[\s\S]*admin[\s\S]*bob/);
    await page.screenshot({ path: screenshotPath("08-commands") });
  });

  it("sets the goal, and shows metrics and a recap that matches the CLI", async () => {
    await page.getByRole("button", { name: "Edit goal" }).click();
    await page.getByLabel("Project goal").fill("Ship checkout v2 without API changes");
    await page.getByRole("button", { name: "Save goal" }).click();
    await page.getByTestId("goal").filter({ hasText: "Ship checkout v2" }).waitFor();

    const alice = agentClient(serve.url, aliceToken, "alice-s1");
    const open = JSON.parse(cohent(["sessions", "list", "--repo", "acme/shop", "--json"], serve.dataDir)) as {
      person: string;
      intents: { id: string }[];
    }[];
    const aliceIntent = open.find((s) => s.person === "alice")!.intents[0]!.id;
    await alice.post({
      type: "checkpoint",
      intentId: aliceIntent,
      status: "completed",
      summary: "Validation moved to cart-api",
      paths: ["app/cart.ts"],
    });

    await page.getByRole("link", { name: /Metrics/ }).click();
    await page.getByTestId("metric-pathGuardCatches").waitFor();
    expect(await page.getByTestId("metric-pathGuardCatches").innerText()).toContain("1");
    expect(await page.getByTestId("metric-humanCommands").innerText()).toContain("1");
    await page.screenshot({ path: screenshotPath("09-metrics") });

    await page.getByRole("link", { name: /Recap/ }).click();
    await page
      .getByTestId("recap-Completed")
      .getByText("Refactor cart validation")
      .waitFor({ timeout: LIVE_MS });
    await page.getByTestId("recap-Waiting").getByText("Add coupon field").waitFor();
    await page.screenshot({ path: screenshotPath("10-recap") });

    const text = cohent(["recap", "--repo", "acme/shop", "--since", "1h"], serve.dataDir);
    expect(text).toMatch(/Completed \(1\)\n {2}- Refactor cart validation — alice \(Codex, gpt-5\)/);
    expect(text).toContain("paths: app/cart.ts");
    expect(text).toMatch(/Waiting \(1\)\n {2}- Add coupon field — bob \(Claude Code\)/);
    const json = JSON.parse(
      cohent(["recap", "--repo", "acme/shop", "--since", "1h", "--json"], serve.dataDir),
    );
    expect(json.completed[0]).toMatchObject({
      person: "alice",
      client: "Codex",
      model: "gpt-5",
      outputs: ["cart-api"],
    });
  });

  it("revokes a token from the browser and the agent's next call is refused", async () => {
    const alice = agentClient(serve.url, aliceToken, "alice-s2");
    expect((await alice.post({ type: "publish", prompt: "one more" })).status).toBe(200);
    await page.getByRole("link", { name: /People/ }).click();
    const row = page.locator('[data-testid="token-row"][data-person="alice"]');
    await row.waitFor();
    expect(await row.innerText()).toContain("alice-laptop");
    await row.getByRole("button", { name: "Revoke alice's token" }).click();
    await row.getByRole("button", { name: "Revoke now" }).click();
    await row.getByText("revoked").waitFor();
    const refused = await alice.post({ type: "publish", prompt: "after revoke" });
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe("UNAUTHENTICATED");
    await page.screenshot({ path: screenshotPath("11-people-tokens") });
  });

  it("pauses a hook-driven agent: its next PreToolUse is refused, edit and shell alike", async () => {
    const token = cohent(
      ["token", "issue", "--repo", "acme/shop", "--person", "carol", "--client", "Codex"],
      serve.dataDir,
    ).trim();
    const co = await makeCheckout(serve.url, "acme/shop");
    const env = { ...codex.env, COHENT_AGENT_TOKEN: token };
    const S = "codex-browser-pause";
    expect((await hook(co, codex.prompt(S, co.root, "Tidy the cart"), env)).code).toBe(0);
    expect((await hook(co, codex.shell(S, co.root, "git status"), env)).denied).toBeNull();

    await page.goto(`${serve.url}/repos/acme/shop`);
    const card = page.locator('[data-testid="work-card"][data-person="carol"]');
    await card.waitFor({ timeout: LIVE_MS });
    await card.getByRole("button", { name: "Pause carol" }).click();
    await card.getByTestId("control").filter({ hasText: "paused" }).waitFor({ timeout: LIVE_MS });
    await page.screenshot({ path: screenshotPath("12-paused-hook-agent") });

    expect((await hook(co, codex.shell(S, co.root, "git commit -am wip"), env)).denied).toMatch(/paused/);
    expect((await hook(co, codex.patch(S, co.root, addPatch("src/x.ts")), env)).denied).toMatch(/paused/);

    await card.getByRole("button", { name: "Resume carol" }).click();
    await card.getByTestId("control").waitFor({ state: "detached", timeout: LIVE_MS });
    expect((await hook(co, codex.shell(S, co.root, "git status"), env)).denied).toBeNull();
  });

  it("cancels a hook-driven agent from the browser: its next tool call is refused for the cancel", async () => {
    const token = cohent(
      ["token", "issue", "--repo", "acme/shop", "--person", "dave", "--client", "Claude Code"],
      serve.dataDir,
    ).trim();
    const co = await makeCheckout(serve.url, "acme/shop");
    const env = { ...claude.env, COHENT_AGENT_TOKEN: token };
    const S = "claude-browser-cancel";
    expect((await hook(co, claude.prompt(S, co.root, "Rename the cart helpers"), env)).code).toBe(0);
    // Before the click the same read-only command runs.
    expect((await hook(co, claude.bash(S, co.root, "git status"), env)).denied).toBeNull();

    await page.goto(`${serve.url}/repos/acme/shop`);
    const card = page.locator('[data-testid="work-card"][data-person="dave"]');
    await card.waitFor({ timeout: LIVE_MS });
    await card.getByRole("button", { name: "Cancel dave" }).click();
    await card.getByTestId("control").filter({ hasText: "cancelled" }).waitFor({ timeout: LIVE_MS });
    await page.screenshot({ path: screenshotPath("13-cancelled-hook-agent") });

    // The real hook, for that session's next calls: refused with the cancel's reason, shell and edit alike.
    const shell = await hook(co, claude.bash(S, co.root, "git status"), env);
    expect(shell.denied).toMatch(/this session was cancelled from the Cohent Control Room/);
    const write = await hook(co, claude.write(S, co.root, `${co.root}/src/cart.ts`), env);
    expect(write.denied).toMatch(/this session was cancelled from the Cohent Control Room/);
    expect(existsSync(`${co.root}/src/cart.ts`)).toBe(false);
  });
});
