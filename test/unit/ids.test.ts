import { describe, expect, it } from "vitest";
import { newId } from "../../backend/src/ids.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("ids", () => {
  it("packets and checkpoints are led by the time, so that later ids sort after earlier ones", async () => {
    for (const prefix of ["pkt", "chk"] as const) {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        ids.push(newId(prefix));
        await sleep(2);
      }
      for (const id of ids) expect(id).toMatch(new RegExp(`^${prefix}_[0-9a-f]{31}$`));
      expect([...ids].sort()).toEqual(ids);
      // The time part is the creation time; the 20 random characters follow it.
      const at = parseInt(ids[0]!.slice(4, 15), 16);
      // Not a speed: the time part is the creation time in milliseconds (seconds, or a wrong field,
      // would be off by years); a minute of room for a loaded machine.
      expect(Math.abs(at - Date.now())).toBeLessThan(60_000);
    }
  });

  it("ids made in the same millisecond differ, and the other kinds stay 20 random characters", () => {
    const many = Array.from({ length: 2_000 }, () => newId("pkt"));
    expect(new Set(many).size).toBe(many.length);
    for (const prefix of ["wki", "dec", "ses", "tok"] as const)
      expect(newId(prefix)).toMatch(new RegExp(`^${prefix}_[0-9a-f]{20}$`));
  });
});
