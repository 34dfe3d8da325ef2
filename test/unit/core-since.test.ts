import { describe, expect, it } from "vitest";
import { CohentError } from "@cohent/protocol";
import { parseSince } from "../../backend/src/core/since.js";

const now = new Date("2026-01-02T00:00:00.000Z");

describe("parseSince: the CLI's --since and the console's ?since=", () => {
  it.each([
    ["30s", "2026-01-01T23:59:30.000Z"],
    ["30m", "2026-01-01T23:30:00.000Z"],
    ["24h", "2026-01-01T00:00:00.000Z"],
    ["1d", "2026-01-01T00:00:00.000Z"],
    ["0m", "2026-01-02T00:00:00.000Z"],
  ])("%s", (text, iso) => expect(parseSince(text, now).toISOString()).toBe(iso));

  it.each(["", "24", "h", "1w", "-1h", "1.5h", " 1h", "1h ", "1234567h", "24H"])(
    "refuses %j with INVALID_INPUT",
    (text) => {
      expect(() => parseSince(text, now)).toThrow(CohentError);
      try {
        parseSince(text, now);
      } catch (err) {
        expect((err as CohentError).code).toBe("INVALID_INPUT");
      }
    },
  );
});
