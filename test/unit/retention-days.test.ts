import { describe, expect, it } from "vitest";
import { retentionDays, RETENTION_DAYS } from "../../backend/src/live/sweeper.js";

/** COHENT_RETENTION_DAYS as the server reads it at start: a whole number of days, 0 to keep everything. */
describe("retentionDays", () => {
  it.each([
    [undefined, RETENTION_DAYS],
    ["", RETENTION_DAYS],
    ["7", 7],
    [" 90 ", 90],
    ["0", 0],
  ])("%j keeps %d days", (raw, days) => {
    expect(retentionDays(raw === undefined ? {} : { COHENT_RETENTION_DAYS: raw })).toBe(days);
  });
  it.each(["-1", "1.5", "30d", "abc", "123456"])("%j stops the server with the variable named", (raw) => {
    expect(() => retentionDays({ COHENT_RETENTION_DAYS: raw })).toThrow(
      /COHENT_RETENTION_DAYS takes a whole number/,
    );
  });
  it("defaults to 30 days", () => expect(RETENTION_DAYS).toBe(30));
});
