import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Notice, Packet } from "@cohent/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { compareHeld, recordCatch, snapshotHeld } from "../../adapter/src/held/files.js";
import { restoreRequested } from "../../adapter/src/held/restore-requested.js";

/** A `restore-requested` notice, carried out where the packet arrives (the adapter's client, every packet). */

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

const notice = (kind: Notice["kind"], paths: string[], text: string): Notice => ({
  id: `ntc_${kind}`,
  kind,
  paths,
  peer: { intentId: null, person: "admin", client: null, model: null },
  note: null,
  reason: null,
  queueLength: null,
  at: new Date(0).toISOString(),
  text,
});
const packetOf = (notices: Notice[]) =>
  ({ text: [...notices.map((n) => n.text), "[cohent poll] wki_x: proceed."].join("\n"), notices }) as Packet;

describe("restoreRequested", () => {
  it("puts the caught bytes back and appends what it did to the notice and the packet's text", () => {
    const root = mkdtempSync(join(tmpdir(), "cohent-rr-"));
    roots.push(root);
    mkdirSync(join(root, ".git"));
    mkdirSync(join(root, "src"));
    writeFileSync(join(root, "src/peer.ts"), "ana\n");
    const before = snapshotHeld(root, ["src/peer.ts"]);
    writeFileSync(join(root, "src/peer.ts"), "overwritten\n");
    recordCatch(root, {
      sessionId: "bo",
      tool: "Bash",
      command: "sh w.sh",
      changes: compareHeld(root, before),
    });

    const other = notice("scope-granted", ["docs/"], "[cohent notice] Scope docs/ granted to you.");
    const asked = notice("restore-requested", ["src/peer.ts"], "[cohent notice] admin asks ($& kept).");
    const packet = packetOf([other, asked]);
    restoreRequested(root, packet);
    expect(readFileSync(join(root, "src/peer.ts"), "utf8")).toBe("ana\n");
    expect(asked.text).toMatch(
      /^\[cohent notice\] admin asks \(\$& kept\)\.\n\[cohent\] Restored 1 file\(s\)/,
    );
    expect(other.text).toBe("[cohent notice] Scope docs/ granted to you.");
    expect(packet.text).toBe([other.text, asked.text, "[cohent poll] wki_x: proceed."].join("\n"));
  });

  it("does nothing without a checkout (the backend's /mcp endpoint), and says so when nothing was kept", () => {
    const asked = notice("restore-requested", ["src/peer.ts"], "[cohent notice] admin asks.");
    const packet = packetOf([asked]);
    restoreRequested("", packet);
    expect(packet.text).toBe("[cohent notice] admin asks.\n[cohent poll] wki_x: proceed.");

    const root = mkdtempSync(join(tmpdir(), "cohent-rr-"));
    roots.push(root);
    mkdirSync(join(root, ".git"));
    restoreRequested(root, packet);
    expect(asked.text).toBe(
      "[cohent notice] admin asks.\n[cohent] No caught write under src/peer.ts to restore.",
    );
  });
});
