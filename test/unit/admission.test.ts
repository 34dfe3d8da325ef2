import { describe, expect, it } from "vitest";
import {
  admissionFromEnv,
  DEFAULT_ADMISSION,
  kindOf,
  retryAfterSeconds,
} from "../../backend/src/http/admission.js";

describe("admission: what a request is past capacity", () => {
  it.each([
    ["POST", "/api/agent", undefined, "counted"],
    ["POST", "/api/agent/", undefined, "counted"],
    ["GET", "/api/agent", undefined, "counted"],
    ["GET", "/api/agent", "0", "counted"],
    ["GET", "/api/agent?x=1", "5", "long-poll"],
    ["HEAD", "/api/agent", "30", "long-poll"],
    ["POST", "/api/agent", "5", "counted"],
    ["POST", "/mcp", undefined, "counted"],
    ["GET", "/mcp/", undefined, "counted"],
    // Never refused: the kill switch, a person's commands, health, the UI.
    ["GET", "/api/agent/session", undefined, "always"],
    ["GET", "/api/agent/session/", undefined, "always"],
    ["POST", "/api/console/sessions/s1/pause", undefined, "always"],
    ["POST", "/api/pairing", undefined, "always"],
    ["GET", "/healthz", undefined, "always"],
    ["GET", "/", undefined, "always"],
    ["GET", "/api/agentx", undefined, "always"],
    [undefined, undefined, undefined, "always"],
  ] as const)("%s %s (wait %s): %s", (method, url, wait, kind) => {
    expect(kindOf(method, url, wait)).toBe(kind);
  });

  it("draws Retry-After between 1 and 3 seconds", () => {
    expect([0, 0.34, 0.67, 0.999].map(retryAfterSeconds)).toEqual([1, 2, 3, 3]);
  });

  it("reads its limits from the environment, or is off", () => {
    expect(admissionFromEnv({})).toEqual(DEFAULT_ADMISSION);
    expect(admissionFromEnv({ COHENT_ADMISSION: "off" })).toBeNull();
    expect(admissionFromEnv({ COHENT_MAX_IN_FLIGHT: "64", COHENT_MAX_LAG_MS: "100" })).toEqual({
      maxInFlight: 64,
      maxLagMs: 100,
    });
    expect(admissionFromEnv({ COHENT_MAX_IN_FLIGHT: "-1", COHENT_MAX_LAG_MS: "x" })).toEqual(
      DEFAULT_ADMISSION,
    );
  });
});
