import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Metrics, MetricsSeries, Overview } from "@cohent/protocol";
import type { Locator, Page } from "playwright-core";
import { agentClient } from "../helpers/backend.js";
import { cohent, openControlRoom, screenshotPath, type ServeProcess } from "./browser.js";
import { declare, publish } from "./helpers.js";

/**
 * The metrics page shows exactly the figures the backend computes: every
 * total `cohent metrics --json` prints (a separate process over the same
 * database), and every bar of every plot, in the real `cohent serve` and
 * Debian's chromium.
 */

const REPO = "acme/metrics";
let serve: ServeProcess;
let page: Page;
let closeRoom: () => Promise<void>;

/** What the admin CLI computes for the window the page shows by default. */
const cliMetrics = (): Metrics =>
  JSON.parse(cohent(["metrics", "--repo", REPO, "--since", "24h", "--json"], serve.dataDir));
const figures = (m: Metrics) =>
  Object.fromEntries(Object.entries(m).filter(([k]) => k !== "repo" && k !== "since"));
const tile = (name: string): Locator => page.getByTestId(`metric-${name}`);
/** The console API as the signed-in page calls it: its cookie, and its CSRF token on changes. */
async function consoleApi<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
  const env = await page.evaluate(
    async ({ method, path, body }) => {
      const me = (await (await fetch("/api/console/me")).json()).data;
      const init: RequestInit =
        method === "GET"
          ? {}
          : {
              method,
              headers: { "content-type": "application/json", "x-cohent-csrf": me.csrfToken },
              body: JSON.stringify(body),
            };
      return (await fetch(path, init)).json();
    },
    { method, path, body },
  );
  if (!env.ok) throw new Error(`${method} ${path}: ${env.error.code}`);
  return env.data as T;
}
const shown = async (name: string) => (await tile(name).getByTestId("value").innerText()).trim();
/** Counts show as numbers; times in the queue as a duration, to the millisecond under a second. */
async function expectShown(name: string, v: number) {
  if (!name.startsWith("queueWait")) return expect(await shown(name), name).toBe(v.toLocaleString("en-US"));
  expect(await shown(name), name).toBe(
    v < 1_000 ? `${Math.round(v)} ms` : expect.stringMatching(/ (s|min|h)$/),
  );
}

beforeAll(async () => {
  ({ serve, page, close: closeRoom } = await openControlRoom(900));
  await page.goto(serve.signInLink);
  await page.getByRole("heading", { name: "Repositories" }).waitFor();
}, 180_000);

afterAll(() => closeRoom?.());

describe("metrics page", () => {
  it("shows every total and every bar the backend computes", async () => {
    cohent(["repo", "add", REPO], serve.dataDir);
    const token = (person: string) =>
      cohent(["token", "issue", "--repo", REPO, "--person", person], serve.dataDir).trim();
    const alice = agentClient(serve.url, token("alice"), "alice-m1");
    const bob = agentClient(serve.url, token("bob"), "bob-m1");

    // Alice produces an output and claims a file; Bob waits for the output and is refused the file.
    const a = await publish(alice, "Refactor cart validation");
    await declare(alice, a.intentId, "Refactor cart validation", { outputs: ["cart-api"] });
    const claimed = await alice.post({ type: "scope", intentId: a.intentId, paths: ["app/cart.ts"] });
    expect(claimed.status).toBe(200);
    const b = await publish(bob, "Add a coupon field");
    const waited = await declare(bob, b.intentId, "Add a coupon field", { dependsOn: ["cart-api"] });
    expect(waited.body.data.action).toBe("wait");
    expect(
      (await bob.post({ type: "scope", intentId: b.intentId, paths: ["app/cart.ts"] })).body.error.code,
    ).toBe("SCOPE_CONFLICT");

    // Refusals the adapter reports: one on paths, two not.
    for (const kind of ["outside-scope", "intent-not-ready", "intent-not-ready"]) {
      const r = await alice.post({
        type: "guard",
        intentId: a.intentId,
        kind,
        tool: "apply_patch",
        paths: ["lib/x.ts"],
      });
      expect(r.status).toBe(200);
    }
    // Refusals whose report names the rule that made them (one of a rule no kind names).
    for (const [kind, rule] of [
      ["outside-scope", "outside-scope"],
      ["refused", "peer-holds"],
    ]) {
      const r = await bob.post({
        type: "guard",
        intentId: b.intentId,
        kind,
        rule,
        tool: "Edit",
        paths: ["x"],
      });
      expect(r.status).toBe(200);
    }
    // A shell write of Bob's over Alice's claimed file, caught after the call by his adapter.
    const caught = await bob.post({
      type: "guard",
      intentId: b.intentId,
      kind: "shell-write",
      tool: "Bash",
      paths: ["app/cart.ts"],
      command: "sed -i s/total/sum/ app/cart.ts",
      peers: [{ intentId: a.intentId, paths: ["app/cart.ts"] }],
      restorable: true,
    });
    expect(caught.status).toBe(200);
    // Acknowledged packets, with sizes that make the character count run into thousands.
    expect((await alice.post({ type: "ack", packetId: a.packet.id, chars: 1_234 })).status).toBe(200);
    expect((await bob.post({ type: "ack", packetId: b.packet.id, chars: 2_345 })).status).toBe(200);
    // Human commands from the Control Room: a pause and a resume.
    const bobSession = (await consoleApi<Overview>("GET", `/api/console/repos/${REPO}`)).work.find(
      (w) => w.person === "bob",
    )!.sessionId;
    await consoleApi("POST", `/api/console/sessions/${bobSession}/control`, { kind: "pause" });
    await consoleApi("POST", `/api/console/sessions/${bobSession}/control`, { kind: "resume" });
    // The claim queue: Dan queues behind Carol and asks her to let go; she releases, so Dan is granted and the
    // request honoured; then a person releases Dan's claim from the Control Room (a command and a lost claim).
    const carol = agentClient(serve.url, token("carol"), "carol-m1");
    const dan = agentClient(serve.url, token("dan"), "dan-m1");
    const c = await publish(carol, "Split the auth module");
    expect((await carol.post({ type: "scope", intentId: c.intentId, paths: ["lib/auth.ts"] })).status).toBe(
      200,
    );
    const d = await publish(dan, "Add two-factor login");
    const queued = await dan.post({
      type: "scope",
      intentId: d.intentId,
      paths: ["lib/auth.ts"],
      queue: true,
    });
    expect(queued.body.error.details.queued.place).toBe(1);
    const ask = { type: "release-request", intentId: d.intentId, paths: ["lib/auth.ts"], note: "need it" };
    expect((await dan.post(ask)).status).toBe(200);
    expect((await carol.post({ type: "scope", intentId: c.intentId, paths: [] })).status).toBe(200);
    await consoleApi("POST", `/api/console/repos/${REPO}/scopes/${d.intentId}/release`, { reason: "demo" });
    // A guarded session beside the advisory ones (plain HTTP): its hook's report and a kill-switch read.
    const hooked = await fetch(`${serve.url}/api/agent/session`, {
      headers: {
        authorization: `Bearer ${token("erin")}`,
        "x-cohent-session": "erin-m1",
        "x-cohent-host": "host=claude; version=2.1.332; wiring=fail-closed",
      },
    });
    expect(hooked.status).toBe(200);

    const expected = cliMetrics();
    // Every figure took part, so a tile showing the wrong figure or none cannot pass unnoticed.
    for (const [k, v] of Object.entries(figures(expected))) expect(v, k).toBeGreaterThan(0);
    expect(expected.injectedChars).toBe(3_579);
    // Erin's hook reported Claude Code and reached the guard; the four plain HTTP sessions are advisory.
    expect([expected.guardedSessions, expected.advisorySessions]).toEqual([1, 4]);

    await page.goto(`${serve.url}/repos/${REPO}/metrics`);
    await tile("humanCommands").waitFor();

    // One tile per figure, no more, no less; each shows the CLI's number.
    const tiles = await page
      .locator('[data-testid^="metric-"]')
      .evaluateAll((els) => els.map((e) => e.getAttribute("data-testid")));
    expect(tiles.map((t) => t!.slice("metric-".length)).sort()).toEqual(
      Object.keys(figures(expected)).sort(),
    );
    for (const [k, v] of Object.entries(figures(expected))) await expectShown(k, v as number);

    // The plots draw the API's series, and each series adds up to its total.
    const api = await consoleApi<MetricsSeries>("GET", `/api/console/repos/${REPO}/metrics?since=24h`);
    expect(figures(api.totals)).toEqual(figures(expected));
    const plotted: Record<string, keyof MetricsSeries["series"]> = {
      potentialOverlaps: "overlaps",
      redirections: "redirections",
      pathGuardCatches: "guardCatches",
      dependencyWaits: "waits",
      packets: "packets",
      packetTokens: "packetTokens",
      injectedChars: "injectedChars",
      humanCommands: "commands",
      waitsQueued: "queued",
      releaseRequests: "releaseRequests",
      lostClaimNotices: "lostClaims",
      shellWritesCaught: "shellWrites",
    };
    for (const [metric, series] of Object.entries(plotted)) {
      const values = api.series[series];
      expect(
        values.reduce((x, y) => x + y, 0),
        series,
      ).toBe(expected[metric as keyof Metrics]);
      expect(await tile(metric).getByRole("img").getAttribute("aria-label"), series).toMatch(
        new RegExp(`: ${values.join(", ")}$`),
      );
    }

    // The refusals by rule, as the API counts them: the claims the service refused (Bob's, Dan's queued one) are
    // the scope-conflict rule, the reports that named no rule count under their kind's.
    expect(api.refusalsByRule).toEqual([
      { rule: "intent-not-ready", count: 2 },
      { rule: "outside-scope", count: 2 },
      { rule: "scope-conflict", count: 2 },
      { rule: "peer-holds", count: 1 },
    ]);
    const table = page.getByTestId("refusals-by-rule");
    await expect(table.getByRole("columnheader").allInnerTexts()).resolves.toEqual(["Rule", "Refusals"]);
    const rows = await table
      .locator("tbody tr")
      .evaluateAll((trs) =>
        trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent!.trim())),
      );
    expect(rows).toEqual(api.refusalsByRule.map((r) => [r.rule, String(r.count)]));
    await page.screenshot({ path: screenshotPath("metrics-exact") });

    // A new command moves the figure on the open page, without a reload, to the CLI's new number.
    await consoleApi("POST", `/api/console/sessions/${bobSession}/control`, { kind: "pause" });
    const after = cliMetrics();
    expect(after.humanCommands).toBe(expected.humanCommands + 1);
    await tile("humanCommands")
      .getByTestId("value")
      .filter({ hasText: new RegExp(`^${after.humanCommands}$`) })
      .waitFor({ timeout: 5_000 });
    for (const [k, v] of Object.entries(figures(after))) await expectShown(k, v as number);
  }, 180_000);
});
