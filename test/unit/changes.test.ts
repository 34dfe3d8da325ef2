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
