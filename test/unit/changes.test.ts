import { afterEach, describe, expect, it } from "vitest";
import { createChanges, type ChangeSource, type Changes } from "../../backend/src/store/changes.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const opened: Changes[] = [];
afterEach(async () => {
  for (const c of opened.splice(0)) await c.close();
});

async function open(source: ChangeSource) {
  const c = await createChanges(source, { probeMs: 10, backstopMs: 30 });
  opened.push(c);
  let woken = 0;
  c.subscribe("rep_a", () => woken++);
  return { c, woken: () => woken };
}

describe("change hints: the backstop", () => {
  it("without a probe (PostgreSQL) moves every stamp on the clock, but not what a waiter reads as a hint", async () => {
    let lost = () => {};
    const { c, woken } = await open({
      latestSeq: async () => 0,
      listen: async (_hint, onLost) => ((lost = onLost), async () => {}),
    });
    const before = { peek: c.peek("rep_a", "control"), hinted: c.hinted("rep_a", "control") };
    await sleep(100);
    expect(c.peek("rep_a", "control")).toBeGreaterThan(before.peek);
    expect(woken()).toBeGreaterThan(0);
    expect(c.hinted("rep_a", "control")).toBe(before.hinted);
    // A hint moves both: this instance's commit, and a listener lost (anything may have been missed).
    c.committed("rep_a", ["control"]);
    const committed = c.hinted("rep_a", "control");
    expect(committed).toBeGreaterThan(before.hinted);
    lost();
    expect(c.hinted("rep_a", "events")).toBeGreaterThan(committed);
  });

  it("with a probe (SQLite) never runs: only another connection's commit, as the probe sees it, moves the stamps", async () => {
    let commitElsewhere = false;
    const { c, woken } = await open({
      latestSeq: async () => 0,
      probe: () => {
        const changed = commitElsewhere;
        commitElsewhere = false;
        return changed;
      },
    });
    const before = c.peek("rep_a", "control");
    await sleep(100);
    expect(c.peek("rep_a", "control")).toBe(before);
    expect(woken()).toBe(0);
    commitElsewhere = true;
    await sleep(40);
    expect(c.peek("rep_a", "control")).toBeGreaterThan(before);
    expect(c.hinted("rep_a", "control")).toBeGreaterThan(before);
    expect(woken()).toBe(1);
  });
});

describe("change hints: the backstop asks the listener first (PostgreSQL)", () => {
  const listening = (alive: () => Promise<boolean>): ChangeSource => ({
    latestSeq: async () => 0,
    listen: async () => async () => {},
    alive,
  });
  const opened2 = async (source: ChangeSource, blindMs: number) => {
    const c = await createChanges(source, { probeMs: 10, backstopMs: 30, blindMs });
    opened.push(c);
    return c;
  };

  it("moves nothing while the listener vouches for every hint, and everything on the blind clock", async () => {
    let asked = 0;
    const c = await opened2(
      listening(async () => (asked++, true)),
      250,
    );
    const before = c.peek("rep_a", "control");
    await sleep(150);
    expect(asked).toBeGreaterThan(1);
    expect(c.peek("rep_a", "control")).toBe(before);
    // A write made past the store sends no NOTIFY: the blind backstop still moves every stamp.
    await sleep(250);
    expect(c.peek("rep_a", "control")).toBeGreaterThan(before);
  });

  it("moves everything when the listener cannot vouch: a lost connection, no answer in time, an error", async () => {
    for (const alive of [
      async () => false,
      () => new Promise<boolean>(() => {}),
      async () => {
        throw new Error("connection refused");
      },
    ]) {
      const c = await opened2(listening(alive), 60_000);
      const before = c.peek("rep_a", "control");
      await sleep(120);
      expect(c.peek("rep_a", "control")).toBeGreaterThan(before);
    }
  });
});

describe("change hints: the cursor", () => {
  it("holds the high-water while no hint comes; `latest` reads the database and raises it", async () => {
    let seq = 5;
    const c = await createChanges(
      { latestSeq: async () => seq, listen: async () => async () => {}, alive: async () => true },
      { backstopMs: 60_000, blindMs: 60_000 },
    );
    opened.push(c);
    expect(await c.cursor("rep_a")).toBe(5);
    seq = 7; // another instance's commit, its hint still on the way
    expect(await c.cursor("rep_a")).toBe(5);
    expect(await c.latest("rep_a")).toBe(7);
    expect(await c.cursor("rep_a")).toBe(7);
    seq = 9;
    c.committed("rep_a", ["events"]);
    expect(await c.cursor("rep_a")).toBe(9);
  });
});
