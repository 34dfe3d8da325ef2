import { expect } from "vitest";

/** The JSON envelope of an `intent --json` command, checked as a v1 success with that action. */
export function intentEnvelope(stdout: string, action: string): any {
  const envelope = JSON.parse(stdout);
  expect(envelope).toMatchObject({ version: 1, ok: true, operation: "intent", data: { action } });
  return envelope;
}
