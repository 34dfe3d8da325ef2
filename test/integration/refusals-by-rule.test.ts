import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentClient, startBackend, type TestBackend } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";
import { signedInAdmin, type ConsoleClient } from "../console/helpers.js";

/**
 * Every guard refusal carries its rule's name to the Control Room, over
 * plain HTTP on each database: the adapter's reports name the rule that
 * refused (`guard`, `rule`), a claim the service refuses itself counts as
 * the guard's `scope-conflict` rule, and reports of an adapter that names
 * no rule count by their kind's rule. The metrics endpoint gives the
 * refusals by rule; a caught write (shell-write) is no refusal and is not
 * among them. A rule that is not a short slug is refused with a stable
 * code, storing nothing.
 */

describe.each(DATABASE_KINDS)("refusals by rule (%s)", (kind) => {
  let backend: TestBackend;
  let admin: ConsoleClient;
  let ana: ReturnType<typeof agentClient>;
  let bo: ReturnType<typeof agentClient>;
  let anaIntent: string;
  let boIntent: string;

  beforeAll(async () => {
    backend = await startBackend({ kind });
    await backend.addRepo("acme/shop");
    ana = agentClient(backend.url, await backend.issueToken("acme/shop", "ana"), "ana-1");
    bo = agentClient(backend.url, await backend.issueToken("acme/shop", "bo"), "bo-1");
    admin = await signedInAdmin(backend);
    anaIntent = (await ana.post({ type: "publish", prompt: "Rework the cart" })).body.data.intentId;
    expect((await ana.post({ type: "scope", intentId: anaIntent, paths: ["src/cart.ts"] })).status).toBe(200);
    boIntent = (await bo.post({ type: "publish", prompt: "Add coupons" })).body.data.intentId;
  });
  afterAll(() => backend?.stop());

  const series = async () => (await admin.get("/api/console/repos/acme/shop/metrics?since=24h")).body.data;
  const guard = (over: Record<string, unknown>) =>
    bo.post({ type: "guard", intentId: boIntent, tool: "Edit", paths: ["src/cart.ts"], ...over });

  it("counts each refusal under the rule that made it", async () => {
    // The service refuses Bo's claim itself: the guard's scope-conflict rule.
    const refused = await bo.post({ type: "scope", intentId: boIntent, paths: ["src/cart.ts"] });
    expect(refused.body.error.code).toBe("SCOPE_CONFLICT");
    // The adapter's reports, with their rule.
    for (const r of [
      { kind: "outside-scope", rule: "outside-scope" },
      { kind: "refused", rule: "peer-holds" },
      { kind: "refused", rule: "peer-holds" },
      { kind: "refused", rule: "uncertain-write-held", tool: "Bash" },
      { kind: "refused", rule: "stale-write" },
      { kind: "git-peer-changes", rule: "git-refused", tool: "Bash" },
      // An adapter that names no rule: its kind's rule.
      { kind: "intent-not-ready" },
      { kind: "paused" },
      { kind: "cancelled", rule: "stopped" },
    ]) {
      const res = await guard(r);
      expect(res.body, JSON.stringify(r)).toMatchObject({ ok: true, data: { recorded: true } });
    }
    // A write caught after the call is no refusal: counted as a catch, not by rule.
    const caught = await guard({
      kind: "shell-write",
      tool: "Bash",
      command: "sed -i s/a/b/ src/cart.ts",
      peers: [{ intentId: anaIntent, paths: ["src/cart.ts"] }],
      restorable: true,
    });
    expect(caught.status).toBe(200);

    const m = await series();
    expect(m.refusalsByRule).toEqual([
      { rule: "peer-holds", count: 2 },
      { rule: "stopped", count: 2 },
      { rule: "git-refused", count: 1 },
      { rule: "intent-not-ready", count: 1 },
      { rule: "outside-scope", count: 1 },
      { rule: "scope-conflict", count: 1 },
      { rule: "stale-write", count: 1 },
      { rule: "uncertain-write-held", count: 1 },
    ]);
    // Every refusal the guard reported is under one rule; the caught write is the one catch left out.
    const byRule = m.refusalsByRule.reduce((n: number, r: { count: number }) => n + r.count, 0);
    expect(byRule).toBe(m.totals.guardRefusals - m.totals.shellWritesCaught);
    // A window that starts after them holds none.
    const later = await admin.get("/api/console/repos/acme/shop/metrics?since=1s");
    expect(later.body.data.refusalsByRule.length).toBeLessThanOrEqual(m.refusalsByRule.length);
  });

  it("refuses a rule that is not a short slug, or one on the wrong kind, storing nothing", async () => {
    const before = await series();
    const bad: Record<string, unknown>[] = [
      { kind: "refused" }, // kind refused names its rule
      { kind: "outside-scope", rule: "Peer Holds" },
      { kind: "outside-scope", rule: "<script>" },
      { kind: "outside-scope", rule: "peer-holds\n" },
      { kind: "outside-scope", rule: "-leading" },
      { kind: "outside-scope", rule: "x".repeat(41) },
      { kind: "outside-scope", rule: 7 },
      // A caught write or a wiring report is no refusal of a rule.
      {
        kind: "shell-write",
        rule: "peer-holds",
        peers: [{ intentId: anaIntent, paths: ["src/cart.ts"] }],
        restorable: true,
      },
      { kind: "wiring", rule: "guard-files", wiring: { checkout: "0123456789abcdef", changes: [] } },
    ];
    for (const body of bad) {
      const res = await guard(body);
      expect([res.status, res.body.error?.code], JSON.stringify(body)).toEqual([400, "INVALID_INPUT"]);
    }
    const after = await series();
    expect(after.refusalsByRule).toEqual(before.refusalsByRule);
    expect(after.totals.guardRefusals).toBe(before.totals.guardRefusals);
    // A slug the service has not heard of (a newer adapter's rule) is counted under its own name.
    expect((await guard({ kind: "refused", rule: "newer-rule-2" })).status).toBe(200);
    expect((await series()).refusalsByRule).toContainEqual({ rule: "newer-rule-2", count: 1 });
  });
});
