import { mkdirSync, mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Notice, Packet } from "@cohent/protocol";
import { parseHuman, renderHuman } from "../../adapter/src/transports/cli.js";
import { applyNotices, pendingOf, takeNotices } from "../../client/src/service/notices.js";
import { fail, ok } from "../../client/src/envelope.js";
import { describeQueue } from "../../adapter/src/guard/guard.js";
import { SessionFile } from "../../client/src/state/runtime.js";
import { queuedUnwaited, stillQueued, waitSeconds } from "../../client/src/scope-wait.js";

/** The client side of the claim queue that needs no service: parsing, rendering, and what notices do to the session. */

const session = () => {
  const root = mkdtempSync(path.join(os.tmpdir(), "cohent-q-"));
  mkdirSync(path.join(root, ".cohent"));
  return new SessionFile(root, "s1");
};

const notice = (kind: Notice["kind"], paths: string[], text: string): Notice => ({
  id: `ntc_${kind}`,
  kind,
  paths,
  peer: null,
  note: null,
  reason: null,
  queueLength: null,
  at: "2026-01-01T00:00:00Z",
  text,
});

const packet = (id: string, text: string, notices?: Notice[]): Packet =>
  ({ id, text, notices }) as unknown as Packet;

const queued = {
  paths: ["app/auth"],
  place: 2,
  since: "2026-01-01T00:00:00Z",
  behind: [
    {
      intentId: "wki_a",
      person: "alice",
      client: "Codex",
      model: "gpt-5.5",
      paths: ["app/auth/**"],
      holds: true,
    },
    { intentId: "wki_c", person: "carol", client: null, model: null, paths: ["app/auth"], holds: false },
  ],
};
const conflicts = [
  {
    intentId: "wki_a",
    person: "alice",
    client: "Codex",
    model: "gpt-5.5",
    objective: "Auth",
    paths: ["app/auth"],
    theirPaths: ["app/auth/**"],
  },
];

describe("parsing the new commands", () => {
  it.each([
    [["app/a"], { paths: ["app/a"] }],
    [["--queue", "app/a", "app/b"], { paths: ["app/a", "app/b"], queue: true }],
    [["--wait", "30", "app/a"], { paths: ["app/a"], wait: 30 }],
    [["app/a", "--wait=120"], { paths: ["app/a"], wait: 120 }],
    [[], { paths: [] }],
  ])("scope %j", (args, input) => {
    expect(parseHuman("scope", args)).toEqual({ op: "scope", input });
  });
  it.each([
    [["--wait", "0", "a"], "INVALID_WAIT"],
    [["--wait", "121", "a"], "INVALID_WAIT"],
    [["--wait", "soon", "a"], "INVALID_WAIT"],
    [["--wait"], "INVALID_INPUT"],
    [["--queue"], "INVALID_INPUT"],
    [["--force", "a"], "INVALID_INPUT"],
  ])("scope %j is refused with %s", (args, code) => {
    expect(() => parseHuman("scope", args)).toThrow(expect.objectContaining({ code }));
  });
  it("request-release takes paths and an optional note", () => {
    expect(parseHuman("request-release", ["app/a", "--note", "need it"])).toEqual({
      op: "request-release",
      input: { paths: ["app/a"], note: "need it" },
    });
    expect(parseHuman("request-release", ["app/a"]).input).toEqual({ paths: ["app/a"] });
    expect(() => parseHuman("request-release", ["--note", "x"])).toThrow(/Name the paths/);
  });
  it("waitSeconds accepts whole seconds from 1 to 120 only", () => {
    expect([1, 120, "7", " 9 "].map(waitSeconds)).toEqual([1, 120, 7, 9]);
    expect([0, 121, 1.5, "x", "", null, -3].map(waitSeconds)).toEqual([
      null,
      null,
      null,
      null,
      null,
      null,
      null,
    ]);
  });
});

describe("rendering", () => {
  it("a queued refusal names the place, whom it waits behind, and what to do meanwhile", () => {
    const env = fail("scope", "SCOPE_CONFLICT", "conflict", { conflicts, queued, previousScope: ["lib"] });
    const text = renderHuman("scope", env);
    expect(text).toContain("the claim joined the queue");
    expect(text).toContain(
      "You are queued for app/auth at place 2, behind alice (Codex gpt-5.5) holding app/auth/** (wki_a); carol also waiting for app/auth (wki_c).",
    );
    expect(text).toContain("your previous claim (lib) stays as it was");
    expect(text).toContain("Meanwhile, work on files outside app/auth.");
    expect(describeQueue({ ...queued, behind: [] })).toBe("You are queued for app/auth at place 2.");
  });
  it("a plain refusal says how to queue for the requested scope", () => {
    const env = fail("scope", "SCOPE_CONFLICT", "conflict", {
      conflicts,
      previousScope: [],
      requested: ["lib", "app/auth"],
    });
    expect(renderHuman("scope", env)).toContain("node .cohent/cohent.mjs scope --queue lib app/auth");
  });
  it("a wait that ran out, and one the relay could not make, say so", () => {
    const refused = fail("scope", "SCOPE_CONFLICT", "conflict", { conflicts, queued });
    const late = stillQueued(refused, { seconds: 30, waited: true });
    expect(renderHuman("scope", late)).toMatch(/^Still queued after 30 s/);
    const relayed = stillQueued(refused, { seconds: 30, waited: false });
    expect(renderHuman("scope", relayed)).toMatch(/under the sandbox relay/);
    expect(queuedUnwaited(relayed)).toBe(true);
    expect(queuedUnwaited(late)).toBe(false);
    expect(queuedUnwaited(refused)).toBe(false);
  });
  it("a grant opens the scope's answer; request-release says whom it asked, or why not", () => {
    const granted = ok("scope", {
      intentId: "wki_b",
      paths: ["app/auth"],
      replaced: [],
      packet: packet("pkt_1", "[cohent] scope app/auth granted to you\n…", [
        notice("scope-granted", ["app/auth"], "[cohent] scope app/auth granted to you"),
      ]),
    });
    expect(renderHuman("scope", granted)).toBe(
      "[cohent] scope app/auth granted to you\nScope claimed: app/auth. Edits outside it will be refused.",
    );
    const asked = ok("request-release", {
      intentId: "wki_b",
      asked: [{ intentId: "wki_a", person: "alice", client: "Codex", model: null, paths: ["app/auth/**"] }],
    });
    expect(renderHuman("request-release", asked)).toMatch(
      /^Release requested: asked alice \(Codex\) for app\/auth\/\*\* \(wki_a\)/,
    );
    expect(renderHuman("request-release", fail("request-release", "NOT_HELD"))).toMatch(
      /NOT_HELD: nobody holds/,
    );
    expect(renderHuman("request-release", fail("request-release", "RATE_LIMITED"))).toMatch(
      /RATE_LIMITED: too many release requests: at most 6 a minute/,
    );
  });
});

describe("notices and the session's scope", () => {
  it("a grant is the scope now, explicit; a lost claim leaves it and the next edit claims again", () => {
    const s = session();
    s.set({ scope: ["lib"], explicitScope: false, queued: ["app/auth"] });
    applyNotices(s, [notice("scope-granted", ["app/auth", "lib"], "granted")]);
    expect(s.state).toMatchObject({ scope: ["app/auth", "lib"], explicitScope: true });
    expect(s.state.queued).toBeUndefined();
    applyNotices(s, [notice("scope-lost", ["app/auth"], "lost")]);
    expect(s.state).toMatchObject({ scope: ["lib"], explicitScope: false });
    applyNotices(s, [
      notice("scope-waiter", ["lib"], "bo waits"),
      notice("release-requested", ["lib"], "asks"),
    ]);
    expect(s.state.scope).toEqual(["lib"]);
  });
  it("a pending packet's notices carry over when a newer packet replaces it, and a refusal takes them once", () => {
    const s = session();
    const first = packet("pkt_1", "[cohent] scope x lost\npeer news", [
      notice("scope-lost", ["x"], "[cohent] scope x lost"),
    ]);
    s.set({ pending: pendingOf(undefined, first) });
    const second = packet("pkt_2", "more news");
    s.set({ pending: pendingOf(s.state.pending, second) });
    expect(s.state.pending).toEqual({
      packetId: "pkt_2",
      text: "[cohent] scope x lost\nmore news",
      notices: "[cohent] scope x lost",
    });
    expect(takeNotices(s)).toBe("[cohent] scope x lost");
    expect(s.state.pending).toEqual({ packetId: "pkt_2", text: "more news" });
    expect(takeNotices(s)).toBeUndefined();
    s.set({
      pending: pendingOf(
        undefined,
        packet("pkt_3", "[cohent] n", [notice("scope-lost", ["y"], "[cohent] n")]),
      ),
    });
    expect(takeNotices(s)).toBe("[cohent] n");
    expect(s.state.pending).toBeUndefined();
  });
});
