import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  AgentRequest,
  BOUNDS,
  CohentError,
  ERRORS,
  IntentRecord,
  protocolDoc,
  toCohentError,
  failure,
  FailureEnvelope,
} from "@cohent/protocol";
import { z } from "zod";

describe("protocol", () => {
  it("docs/protocol.md is generated from the schemas and up to date (npm run docs)", () => {
    expect(readFileSync("docs/protocol.md", "utf8")).toBe(protocolDoc());
  });

  it("rejects unknown fields at every level", () => {
    const base = { type: "intent", intentId: "wki_abc", intent: { objective: "x" } };
    expect(AgentRequest.safeParse(base).success).toBe(true);
    expect(AgentRequest.safeParse({ ...base, extra: 1 }).success).toBe(false);
    expect(AgentRequest.safeParse({ ...base, intent: { objective: "x", extra: 1 } }).success).toBe(false);
    expect(AgentRequest.safeParse({ ...base, usage: { source: "s", extra: 1 } }).success).toBe(false);
  });

  it("fills an intent's defaults and bounds its total size", () => {
    expect(IntentRecord.parse({ objective: "x" })).toEqual({
      objective: "x",
      plan: [],
      components: [],
      dependsOn: [],
      deferred: [],
      outputs: [],
      blockers: [],
      requires: [],
      capabilities: [],
      state: "planned",
    });
    const steps = Array(BOUNDS.planItems).fill("s".repeat(BOUNDS.stepChars));
    const fat = { objective: "o".repeat(BOUNDS.objectiveChars), plan: steps, blockers: steps };
    expect(JSON.stringify(fat).length).toBeGreaterThan(BOUNDS.intentChars);
    expect(IntentRecord.safeParse(fat).success).toBe(false);
  });

  it("names are identifiers, not prose", () => {
    expect(
      IntentRecord.safeParse({ objective: "x", outputs: ["auth-api-contract", "ui/v2", "a.b@c:d+e"] })
        .success,
    ).toBe(true);
    for (const bad of ["", " spaced", "new\nline", "-flag", "x".repeat(BOUNDS.nameChars + 1)]) {
      expect(IntentRecord.safeParse({ objective: "x", outputs: [bad] }).success, bad).toBe(false);
    }
  });

  it("every error code has a message and a stable shape in the failure envelope", () => {
    for (const code of Object.keys(ERRORS) as (keyof typeof ERRORS)[]) {
      const envelope = failure("op", new CohentError(code));
      expect(FailureEnvelope.parse(envelope).error).toMatchObject({
        code,
        retryable: ERRORS[code].retryable,
      });
    }
  });

  it("maps anything thrown to a code: zod to INVALID_INPUT, aborts to CANCELLED, the rest to INTERNAL without its message", () => {
    const zodError = z.object({ a: z.string() }).safeParse({}).error!;
    expect(toCohentError(zodError).code).toBe("INVALID_INPUT");
    expect(toCohentError(Object.assign(new Error("x"), { name: "AbortError" })).code).toBe("CANCELLED");
    const internal = toCohentError(new Error("SELECT * FROM secrets failed"));
    expect([internal.code, internal.message]).toEqual(["INTERNAL", "Internal error."]);
  });
});
