import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { diffSnapshots } from "../../adapter/src/held/diff.js";
import { currentView, DIRECT, enableLiveView, resetLiveView } from "../../adapter/src/held/live.js";
import { snapshotHeld } from "../../adapter/src/held/snapshot.js";

/**
 * The live view of a long-lived guard (held/live.ts): folders watched by the
 * kernel's notifications, a listing or a stat taken again only after an
 * event. Whatever a write does right before the next call, the snapshot
 * taken through the live view equals the one taken from the disk: the same
 * changes are found either way. Real folders, real writes.
 */

let root: string;
// With folders the checkout lacks (a client's settings folder) and the adapter's own, as the guard holds them.
const HELD = ["src/held/", "src/peer.ts", "lib/*.ts", ".github/copilot/", "missing/deep/x.ts", ".cohent/"];
const w = (rel: string, text: string) => {
  mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  writeFileSync(path.join(root, rel), text);
};
/** The change set through the live view and through the disk, from the same snapshot before. */
async function changesBoth(before: ReturnType<typeof snapshotHeld>) {
  const live = snapshotHeld(root, HELD, { view: await currentView() });
  const disk = snapshotHeld(root, HELD, { view: DIRECT });
  const names = (s: typeof live) => diffSnapshots(before, s).map((c) => `${c.change} ${c.path}`);
  return { live: names(live), disk: names(disk) };
}

beforeEach(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), "cohent-live-"));
  execFileSync("git", ["init", "-q"], { cwd: root });
  w("src/held/a.ts", "a0\n");
  w("src/held/deep/b.ts", "b0\n");
  w("src/peer.ts", "p0\n");
  w("lib/x.ts", "x0\n");
  enableLiveView();
  resetLiveView();
});
afterAll(() => resetLiveView());

describe("the live view sees what the disk says", () => {
  const cases: [string, () => void, string[]][] = [
    ["a same-size rewrite", () => w("src/held/a.ts", "a1\n"), ["modified src/held/a.ts"]],
    ["a file created in a held folder", () => w("src/held/new.ts", "n\n"), ["created src/held/new.ts"]],
    [
      "a file created in a new sub-folder",
      () => w("src/held/n/m/c.ts", "c\n"),
      ["created src/held/n/m/c.ts"],
    ],
    ["a literal file deleted", () => rmSync(path.join(root, "src/peer.ts")), ["deleted src/peer.ts"]],
    [
      "a sub-folder removed",
      () => rmSync(path.join(root, "src/held/deep"), { recursive: true }),
      ["deleted src/held/deep/b.ts"],
    ],
    [
      "a sub-folder renamed away and another put in its place",
      () => {
        renameSync(path.join(root, "src/held/deep"), path.join(root, "gone"));
        w("src/held/deep/b.ts", "other\n");
      },
      ["modified src/held/deep/b.ts"],
    ],
    ["a glob's new match", () => w("lib/y.ts", "y\n"), ["created lib/y.ts"]],
    ["a mode change (ctime)", () => execFileSync("chmod", ["600", path.join(root, "src/peer.ts")]), []],
    [
      "a held folder that was absent, created with a file",
      () => w(".github/copilot/hooks.json", "{}"),
      ["created .github/copilot/hooks.json"],
    ],
    [
      "a held file under absent folders, created",
      () => w("missing/deep/x.ts", "x\n"),
      ["created missing/deep/x.ts"],
    ],
    [
      "the session's state saved, then a held write",
      () => {
        w(".cohent/runtime.json", '{"v":2}');
        w("src/held/a.ts", "a2\n");
      },
      ["modified src/held/a.ts"],
    ],
    [
      "an adapter file changed beside the session's state",
      () => w(".cohent/cohent.cjs", "x"),
      ["created .cohent/cohent.cjs"],
    ],
  ];
  it.each(cases)("%s", async (_name, act, expected) => {
    // Warm the view first: the listings and stats are kept from here on.
    await currentView().then((view) => snapshotHeld(root, HELD, { view }));
    const before = snapshotHeld(root, HELD, { view: await currentView() });
    act();
    const got = await changesBoth(before);
    expect(got.live).toEqual(got.disk);
    expect(got.live).toEqual(expected);
  });

  it("while nothing changes, the last walk is the answer; the session's own state does not undo that", async () => {
    w(".cohent/runtime.json", "{}");
    // As of a time past the files' racy second (read again while it lasts, held/snapshot.ts).
    const later = { now: Date.now() + 5_000 };
    snapshotHeld(root, HELD, { view: await currentView(), ...later });
    const first = snapshotHeld(root, HELD, { view: await currentView(), ...later });
    w(".cohent/runtime.json", '{"saved":1}');
    const again = snapshotHeld(root, HELD, { view: await currentView(), ...later });
    expect(again.files).toBe(first.files);
    w("src/held/a.ts", "a3\n");
    const after = snapshotHeld(root, HELD, { view: await currentView(), ...later });
    expect(after.files).not.toBe(first.files);
    expect(diffSnapshots(first, after).map((c) => `${c.change} ${c.path}`)).toEqual([
      "modified src/held/a.ts",
    ]);
  });

  it("a session-state name in a held folder deeper down is a held file like any other", async () => {
    w("src/held/.cohent/runtime.json", "a\n");
    const later = { now: Date.now() + 5_000 };
    snapshotHeld(root, HELD, { view: await currentView(), ...later });
    const before = snapshotHeld(root, HELD, { view: await currentView(), ...later });
    w("src/held/.cohent/runtime.json", "bb\n");
    const after = snapshotHeld(root, HELD, { view: await currentView(), ...later });
    expect(diffSnapshots(before, after).map((c) => `${c.change} ${c.path}`)).toEqual([
      "modified src/held/.cohent/runtime.json",
    ]);
  });

  it("a write made right before the next call is seen, call after call", async () => {
    let before = snapshotHeld(root, HELD, { view: await currentView() });
    for (let i = 0; i < 20; i++) {
      w(i % 2 ? "src/held/a.ts" : "src/held/deep/b.ts", `v${i}\n`);
      const after = snapshotHeld(root, HELD, { view: await currentView() });
      expect(diffSnapshots(before, after).map((c) => c.path)).toEqual([
        i % 2 ? "src/held/a.ts" : "src/held/deep/b.ts",
      ]);
      before = after;
    }
  });
});
