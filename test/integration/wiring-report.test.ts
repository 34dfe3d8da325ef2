import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BOUNDS } from "@cohent/protocol";
import { agentClient, startBackend, type TestBackend } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";
import { signedInAdmin, type ConsoleClient } from "../console/helpers.js";

/**
 * The guard wiring report over plain HTTP (`guard`, kind `wiring`), on each
 * database: stored per checkout (token and checkout id), replaced by a later
 * modified report, cleared by an intact one, shown by the Control Room's
 * API; hostile file names and phrases are refused with INVALID_INPUT before
 * anything is stored, and secrets in accepted text are redacted.
 */

describe.each(DATABASE_KINDS)("guard wiring reports (%s)", (kind) => {
  let backend: TestBackend;
  let admin: ConsoleClient;
  let dora: string;
  let eli: string;
  beforeAll(async () => {
    backend = await startBackend({ kind });
    await backend.addRepo("acme/shop");
    dora = await backend.issueToken("acme/shop", "dora", "Claude Code");
    eli = await backend.issueToken("acme/shop", "eli", "Codex");
    admin = await signedInAdmin(backend);
  });
  afterAll(() => backend?.stop());

  const CHECKOUT = "0123456789abcdef0123456789abcdef";
  const report = (changes: { file: string; change: string }[], checkout = CHECKOUT) => ({
    type: "guard",
    kind: "wiring",
    tool: "SessionStart",
    wiring: { checkout, changes },
  });
  const shown = async () => (await admin.get("/api/console/repos/acme/shop")).body.data.wiring as any[];

  it("keeps one alarm per checkout: a later report replaces it, an intact one clears it", async () => {
    const a = agentClient(backend.url, dora, "s-1");
    const removed = [{ file: ".claude/settings.json", change: "hook entry PreToolUse removed" }];
    expect((await a.post(report(removed))).body).toMatchObject({ ok: true, data: { recorded: true } });
    expect(await shown()).toEqual([
      expect.objectContaining({ checkout: CHECKOUT, person: "dora", sessionKey: "s-1", changes: removed }),
    ]);

    // The same checkout id under another token is another checkout.
    const replaced = [{ file: ".cohent/cohent.cjs", change: "cohent.cjs replaced" }];
    await agentClient(backend.url, eli, "e-1").post(report(replaced));
    const b = agentClient(backend.url, dora, "s-2");
    const both = [...removed, { file: ".claude/settings.json", change: "disableAllHooks set" }];
    await b.post(report(both));
    const now = await shown();
    expect(now).toHaveLength(2);
    expect(now.find((w) => w.person === "dora")).toMatchObject({ sessionKey: "s-2", changes: both });

    expect((await b.post(report([]))).body.ok).toBe(true);
    expect((await shown()).map((w) => w.person)).toEqual(["eli"]);
    // An intact report from a checkout never reported is a no-op.
    expect((await a.post(report([], "ffffffffffffffff"))).body.ok).toBe(true);
    expect((await shown()).map((w) => w.person)).toEqual(["eli"]);
  });

  it("refuses hostile file names, phrases and shapes with INVALID_INPUT, storing nothing", async () => {
    const c = agentClient(backend.url, dora, "h-1");
    const ok = { file: ".claude/settings.json", change: "disableAllHooks set" };
    // The same report, well formed, is accepted (and then cleared): each refusal below is for its one flaw.
    expect((await c.post(report([ok], "bbbbbbbbbbbbbbbb"))).status).toBe(200);
    expect((await shown()).some((w) => w.checkout === "bbbbbbbbbbbbbbbb")).toBe(true);
    await c.post(report([], "bbbbbbbbbbbbbbbb"));
    const before = await shown();
    const bad: unknown[] = [
      report([{ ...ok, file: "../outside" }]),
      report([{ ...ok, file: "/etc/passwd" }]),
      report([{ ...ok, file: "a/./b" }]),
      report([{ ...ok, file: "a//b" }]),
      report([{ ...ok, file: "C:\\x" }]),
      report([{ ...ok, file: "x".repeat(BOUNDS.pathChars + 1) }]),
      report([{ ...ok, change: "<img src=x onerror=alert(1)>" }]),
      report([{ ...ok, change: "two\nlines" }]),
      report([{ ...ok, change: "\u202eevil" }]),
      report([{ ...ok, change: "x".repeat(BOUNDS.wiringPhraseChars + 1) }]),
      report([{ ...ok, change: "" }]),
      report([{ ...ok, extra: 1 } as typeof ok]),
      report(Array.from({ length: BOUNDS.wiringChanges + 1 }, () => ok)),
      report([ok], "NOT-HEX"),
      report([ok], "abc"),
      { type: "guard", kind: "wiring", tool: "SessionStart" },
      { type: "guard", kind: "outside-scope", tool: "Edit", wiring: { checkout: CHECKOUT, changes: [] } },
      { ...report([ok]), wiring: { checkout: CHECKOUT, changes: "all" } },
    ];
    for (const body of bad) {
      const r = await c.post(body);
      expect([r.status, r.body.error?.code], JSON.stringify(body).slice(0, 120)).toEqual([
        400,
        "INVALID_INPUT",
      ]);
    }
    expect(await shown()).toEqual(before);
  });

  it("bounds the checkouts one token has reported modified at once", async () => {
    const fay = await backend.issueToken("acme/shop", "fay");
    const c = agentClient(backend.url, fay, "f-1");
    const change = [{ file: ".claude/settings.json", change: "disableAllHooks set" }];
    const id = (i: number) => i.toString(16).padStart(16, "c");
    for (let i = 0; i < BOUNDS.wiringCheckouts; i++)
      expect((await c.post(report(change, id(i)))).status).toBe(200);
    const over = await c.post(report(change, id(BOUNDS.wiringCheckouts)));
    expect([over.status, over.body.error.code]).toEqual([400, "INVALID_INPUT"]);
    expect(over.body.error.message).toContain("cohent init --upgrade");
    // One already shown may still be reported again; once one is repaired, another may come.
    expect((await c.post(report(change, id(0)))).status).toBe(200);
    await c.post(report([], id(0)));
    expect((await c.post(report(change, id(BOUNDS.wiringCheckouts)))).status).toBe(200);
    expect((await shown()).filter((w) => w.person === "fay")).toHaveLength(BOUNDS.wiringCheckouts);
  });

  it("redacts a secret-shaped file name before storing it", async () => {
    const secret = "ghp_" + "A1b2C3d4E5".repeat(4);
    const c = agentClient(backend.url, dora, "r-1");
    await c.post(report([{ file: `.cohent/${secret}`, change: "cohent.cjs replaced" }], "aaaaaaaaaaaaaaaa"));
    const row = (await shown()).find((w) => w.checkout === "aaaaaaaaaaaaaaaa");
    expect(JSON.stringify(row)).not.toContain(secret);
    expect(row.changes[0].file).toBe(".cohent/[REDACTED:github]");
  });
});
