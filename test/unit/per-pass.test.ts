import { describe, expect, it } from "vitest";
import { afterPasses, PerPass } from "../../backend/src/live/per-pass.js";

const pass = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Counts the passes of the event loop from now until stop(). */
function passCounter() {
  let passes = 0;
  let counting = true;
  void (async () => {
    while (counting) {
      await pass();
      passes++;
    }
  })();
  return { passes: () => passes, stop: () => void (counting = false) };
}

describe("PerPass", () => {
  it("lets `size` callers on per pass of the event loop, the rest in later passes, in order", async () => {
    const gate = new PerPass(2);
    const order: [number, number][] = [];
    const counter = passCounter();
    await Promise.all(
      Array.from({ length: 5 }, async (_, i) => {
        await gate.admit();
        order.push([i, counter.passes()]);
      }),
    );
    counter.stop();
    expect(order.map(([i]) => i)).toEqual([0, 1, 2, 3, 4]);
    const perPass = new Map<number, number>();
    for (const [, p] of order) perPass.set(p, (perPass.get(p) ?? 0) + 1);
    expect([...perPass.values()]).toEqual([2, 2, 1]);
  });

  it("lets a caller on at once when the pass has room", async () => {
    const gate = new PerPass(8);
    expect(gate.admit()).toBeUndefined();
    await pass();
    expect(gate.admit()).toBeUndefined();
  });

  it("afterPasses(n) resolves after n passes of the event loop, not before", async () => {
    const counter = passCounter();
    await afterPasses(3);
    const seen = counter.passes();
    counter.stop();
    expect(seen).toBeGreaterThanOrEqual(2);
    expect(seen).toBeLessThanOrEqual(3);
  });
});
