import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Locator, Page } from "playwright-core";
import type { Metrics } from "@cohent/protocol";
import { cohent, openControlRoom, screenshotPath, type ServeProcess } from "./browser.js";

/**
 * What the page shows live, without a reload: a promised deadline. A change reaches an open stream at
 * once, or at the latest at its 1 s backstop (http/live BACKSTOP_MS); 5 s is five times the promise.
 */
const LIVE_MS = 5_000;

/**
 * Who is really guarded, in a real browser: the real `cohent serve` and
 * Debian's chromium. Agents call over HTTP as their hooks do, each with the
 * `x-cohent-host` report its hook sends (or none: a plain HTTP integration).
 * Every live session's card is marked guarded or advisory with the client,
 * its version and the reason; a session turns guarded live, without a
 * reload, at its first guarded call; a modified wiring turns a guarded one
 * advisory; the sessions table and the metrics say the same.
 */

const REPO = "acme/guarded";
let serve: ServeProcess;
let page: Page;
let closeRoom: () => Promise<void>;

beforeAll(async () => {
  ({ serve, page, close: closeRoom } = await openControlRoom(1400));
  cohent(["repo", "add", REPO], serve.dataDir);
  await page.goto(serve.signInLink);
  await page.getByRole("heading", { name: "Repositories" }).waitFor();
}, 180_000);

afterAll(() => closeRoom?.());

/** A person's agent session; `host` is what its hook reports, or nothing for a plain HTTP integration. */
function agent(person: string, session: string, host?: string) {
  const token = cohent(["token", "issue", "--repo", REPO, "--person", person], serve.dataDir).trim();
  const headers: Record<string, string> = {
    authorization: `Bearer ${token}`,
    "x-cohent-session": session,
    ...(host ? { "x-cohent-host": host } : {}),
  };
  const call = async (path: string, body?: unknown) => {
    const res = await fetch(`${serve.url}${path}`, {
      method: body ? "POST" : "GET",
      headers: body ? { ...headers, "content-type": "application/json" } : headers,
      body: body ? JSON.stringify(body) : undefined,
    });
    const env = (await res.json()) as any;
    if (!env.ok) throw new Error(`${path}: ${env.error.code} ${env.error.message}`);
    return env.data;
  };
  return {
    post: (body: Record<string, unknown>) => call("/api/agent", body),
    publish: (prompt: string) => call("/api/agent", { type: "publish", prompt }),
    /** The kill-switch read the guard makes before an edit or a shell call. */
    guardCall: () => call("/api/agent/session"),
    wiring: (changes: { file: string; change: string }[]) =>
      call("/api/agent", {
        type: "guard",
        kind: "wiring",
        tool: "SessionStart",
        wiring: { checkout: "abcdefabcdefabcdefabcdef00000001", changes },
      }),
  };
}

const card = (person: string): Locator => page.locator(`[data-testid="work-card"][data-person="${person}"]`);
const mark = (person: string): Locator => card(person).getByTestId("enforcement");
async function expectMark(person: string, level: string, why: string, client: string, reason: RegExp) {
  const m = mark(person);
  await m.and(page.locator(`[data-level="${level}"][data-why="${why}"]`)).waitFor({ timeout: LIVE_MS });
  expect(await m.locator(".badge").innerText()).toBe(level);
  expect(await m.getByTestId("enforcement-client").innerText()).toBe(client);
  expect(await m.getByTestId("enforcement-reason").innerText()).toMatch(reason);
}

describe("guarded and advisory sessions, in the Control Room", () => {
  it("marks every live session with its client, version and reason, live", async () => {
    await page.goto(`${serve.url}/repos/${REPO}`);
    await page.getByText("No active work").waitFor();

    // A custom integration over plain HTTP: coordinated, not enforced.
    const plain = agent("pat", "pat-1");
    await plain.publish("Rename the checkout button");
    await plain.guardCall();
    await expectMark(
      "pat",
      "advisory",
      "not-reported",
      "unknown client",
      /custom integration over HTTP or MCP/,
    );

    // Claude Code with the wiring init wrote: advisory until its first guarded call reaches the guard, then
    // guarded, on the open page.
    const claude = agent("dora", "dora-1", "host=claude; version=2.1.332; wiring=fail-closed");
    await claude.publish("Add a coupon field to the cart");
    await expectMark(
      "dora",
      "advisory",
      "no-guard-call",
      "Claude Code 2.1.332 · fail-closed wiring",
      /No guarded tool call seen yet/,
    );
    await page.screenshot({ path: screenshotPath("enforcement-01-before-guard-call") });
    await claude.guardCall();
    await expectMark(
      "dora",
      "guarded",
      "fail-closed",
      "Claude Code 2.1.332 · fail-closed wiring",
      /Claude Code's own wiring, as cohent init wrote it, fails closed, and its tool calls reach the guard/,
    );

    // Copilot CLI through Claude Code's settings: measured to honour their deny and fail closed.
    const copilot = agent("cleo", "cleo-1", "host=copilot; version=1.0.102; wiring=foreign");
    await copilot.publish("Fix the footer links");
    await copilot.guardCall();
    await expectMark(
      "cleo",
      "guarded",
      "foreign-measured",
      "Copilot CLI 1.0.102 · foreign wiring",
      /measured/,
    );

    // Cursor through Claude Code's settings: no failClosed there, so advisory.
    const cursor = agent("cy", "cy-1", "host=cursor; version=1.7.2; wiring=foreign");
    await cursor.publish("Tidy the styles");
    await cursor.guardCall();
    await expectMark(
      "cy",
      "advisory",
      "foreign-unproven",
      "Cursor 1.7.2 · foreign wiring",
      /without failClosed/,
    );

    // Codex guarded; then its checkout's wiring report says a file changed: advisory, naming the file.
    const codex = agent("eli", "eli-1", "host=codex; version=0.171.0; wiring=fail-closed");
    await codex.publish("Split the auth module");
    await codex.guardCall();
    await expectMark("eli", "guarded", "fail-closed", "Codex 0.171.0 · fail-closed wiring", /fails closed/);
    await codex.wiring([{ file: ".codex/hooks.json", change: "hook entry PreToolUse removed" }]);
    await expectMark(
      "eli",
      "advisory",
      "wiring-modified",
      "Codex 0.171.0 · fail-closed wiring",
      /Guard wiring modified in its checkout \(\.codex\/hooks\.json\)/,
    );
    await page.screenshot({ path: screenshotPath("enforcement-02-live-work"), fullPage: true });

    // The sessions table says the same, session by session.
    await page.getByRole("link", { name: /Commands/ }).click();
    const rowOf = (person: string) =>
      page.locator(`[data-testid="session-row"][data-person="${person}"]`).getByTestId("enforcement");
    for (const [person, level] of [
      ["pat", "advisory"],
      ["dora", "guarded"],
      ["cleo", "guarded"],
      ["cy", "advisory"],
      ["eli", "advisory"],
    ] as const)
      await rowOf(person)
        .and(page.locator(`[data-level="${level}"]`))
        .waitFor({ timeout: LIVE_MS });
    await page.screenshot({ path: screenshotPath("enforcement-03-sessions") });

    // The metrics count both, as the admin CLI does, and move when the repair clears the alarm.
    const cli = (): Metrics =>
      JSON.parse(cohent(["metrics", "--repo", REPO, "--since", "24h", "--json"], serve.dataDir));
    expect([cli().guardedSessions, cli().advisorySessions]).toEqual([2, 3]);
    await page.getByRole("link", { name: /Metrics/ }).click();
    const value = (key: string) => page.getByTestId(`metric-${key}`).getByTestId("value");
    await value("guardedSessions").filter({ hasText: /^2$/ }).waitFor({ timeout: LIVE_MS });
    expect(await value("advisorySessions").innerText()).toBe("3");
    await codex.wiring([]);
    expect([cli().guardedSessions, cli().advisorySessions]).toEqual([3, 2]);
    await value("guardedSessions").filter({ hasText: /^3$/ }).waitFor({ timeout: LIVE_MS });
    expect(await value("advisorySessions").innerText()).toBe("2");
    await page.screenshot({ path: screenshotPath("enforcement-04-metrics") });
  }, 180_000);

  it("lists a shell write caught after the call on the open page, live: who, what, where, how to restore", async () => {
    await page.goto(`${serve.url}/repos/${REPO}`);
    await card("dora").waitFor();
    await page.evaluate(() => ((window as unknown as { __stay?: number }).__stay = 1));
    expect(await page.getByTestId("shell-writes").count()).toBe(0);
    const holder = agent("hal", "hal-1", "host=claude; version=2.1.332; wiring=fail-closed");
    const held = await holder.publish("Rework the peer module");
    await holder.post({ type: "scope", intentId: held.intentId, paths: ["src/peer.ts"] });
    const writer = agent("wes", "wes-1", "host=codex; version=0.171.0; wiring=fail-closed");
    const wrote = await writer.publish("Regenerate the fixtures");
    const command = "node scripts/gen.mjs > src/peer.ts && echo '<b>done</b>'";
    const shellWrite = (restorable: boolean, paths: string[]) =>
      writer.post({
        type: "guard",
        intentId: wrote.intentId,
        kind: "shell-write",
        tool: "Bash",
        paths,
        command,
        peers: [{ intentId: held.intentId, paths }],
        restorable,
      });
    await shellWrite(true, ["src/peer.ts"]);

    const row = page.getByTestId("shell-write").first();
    await row.waitFor({ timeout: LIVE_MS });
    expect(await row.getAttribute("data-writer")).toBe("wes");
    // The command is shown as text, never as markup.
    expect(await row.getByTestId("shell-write-command").innerText()).toBe(command);
    expect(await row.locator("b").count()).toBe(0);
    expect(await row.innerText()).toContain(wrote.intentId);
    expect(await row.getByTestId("shell-write-at").innerText()).toMatch(/just now|s ago/);
    expect(await row.getByTestId("shell-write-peer").innerText()).toMatch(
      new RegExp(`claimed by hal .*${held.intentId}.*: src/peer\\.ts`),
    );
    expect(await row.getByTestId("shell-write-restore").innerText()).toMatch(
      /restorable in the writer's checkout:\s*node \.cohent\/cohent\.mjs restore src\/peer\.ts/,
    );
    // Restore asks the writer's adapter to put the bytes back (at its next call); the row then says so.
    await row.getByTestId("shell-write-restore-button").click();
    const requested = row.getByTestId("shell-write-restore-requested");
    await requested.waitFor({ timeout: LIVE_MS });
    expect(await requested.innerText()).toMatch(/restore requested by admin/);
    expect(await row.getByTestId("shell-write-restore-button").count()).toBe(0);

    // A second one, not restorable, comes first, on the same page.
    await shellWrite(false, ["src/peer.ts"]);
    await page.getByTestId("shell-write").nth(1).waitFor({ timeout: LIVE_MS });
    expect(
      await page.getByTestId("shell-write").first().getByTestId("shell-write-restore").innerText(),
    ).toMatch(/not restorable.*too large to keep/);
    expect(await page.evaluate(() => (window as unknown as { __stay?: number }).__stay)).toBe(1);
    await page
      .getByTestId("shell-writes")
      .screenshot({ path: screenshotPath("enforcement-05-shell-writes") });
  }, 60_000);
});
