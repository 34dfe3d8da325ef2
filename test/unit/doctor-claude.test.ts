import { describe, expect, it } from "vitest";
import { claudeSessionsCheck } from "../../adapter/src/installer/doctor-claude.js";
import type { Runtime, SessionState } from "../../client/src/state/runtime.js";

/** doctor's line on which wiring guards each live Claude Code session: the MCP server, or the command hook. */
const now = Date.parse("2026-12-07T01:00:00Z");
const session = (o: Partial<SessionState>) =>
  ({ client: "Claude Code", seenAt: new Date(now - 1_000).toISOString(), ...o }) as SessionState;
const rt = (sessions: Record<string, SessionState>) => ({ sessions }) as unknown as Runtime;

describe("doctor: Claude Code sessions", () => {
  it("names the MCP server for a marked session, the command hook for the rest", () => {
    const check = claudeSessionsCheck(
      rt({
        a: session({ hostVersion: "2.1.332" }),
        b: session({ hostVersion: "2.1.197" }),
        c: session({ client: "Codex" }),
        d: session({ endedAt: new Date(now).toISOString() }),
      }),
      ["a.4242", "d.4242"],
      now,
    );
    expect(check).toEqual({
      name: "claude sessions",
      status: "ok",
      detail:
        "a (2.1.332): in Cohent's MCP server, no process per tool call; b (2.1.197): by the command hook (Claude Code older than 2.1.332 ignores onFailure, or its MCP server is not connected yet).",
    });
  });

  it("says nothing without a live Claude Code session", () => {
    expect(claudeSessionsCheck(rt({ c: session({ client: "Codex" }) }), [], now)).toBeNull();
  });
});
