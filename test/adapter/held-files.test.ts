import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  appendFileSync,
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { GUARD_FILES } from "../../adapter/src/guard/guard-files.js";
import {
  compareHeld,
  explainedBy,
  listCatches,
  noteEdit,
  recordCatch,
  restoreHeld,
  savePending,
  snapshotHeld,
  keptKeys,
  stashDir,
  takePending,
  type HeldChange,
} from "../../adapter/src/held/files.js";

/** Peers' held files on real temporary checkouts: snapshot before a call, compare after, restore. */

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function checkout(files: Record<string, string> = {}, git = true): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "cohent-held-")));
  roots.push(root);
  if (git) sh(root, "init", "-q", "-b", "main");
  for (const [f, t] of Object.entries(files)) put(root, f, t);
  return root;
}

function sh(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
  });
}

function put(root: string, rel: string, text: string | Buffer): void {
  mkdirSync(dirname(join(root, rel)), { recursive: true });
  writeFileSync(join(root, rel), text);
}

const read = (root: string, rel: string) => readFileSync(join(root, rel), "utf8");
const sha256Hex = (text: string) => createHash("sha256").update(text).digest("hex");
const summary = (changes: HeldChange[]) =>
  changes.map((c) => `${c.change} ${c.path}${c.restorable ? "" : " !"}`);
/** A snapshot "later" than the files' ctime, so that they are not "racy" (changed within the last second). */
const later = () => ({ now: Date.now() + 5_000 });

const PEER = { src: { "src/held/a.ts": "a1\n", "src/held/sub/b.ts": "b1\n", "src/free/c.ts": "c1\n" } };

describe("snapshot and compare", () => {
  it("an untouched tree shows no change", () => {
    const root = checkout(PEER.src);
    const snap = snapshotHeld(root, ["src/held/"]);
    expect(snap.files.map((f) => f.path).sort()).toEqual(["src/held/a.ts", "src/held/sub/b.ts"]);
    expect(snap.complete).toBe(true);
    expect(compareHeld(root, snap)).toEqual([]);
  });

  it("catches a peer file modified, deleted and created under a held folder, not outside it", () => {
    const root = checkout(PEER.src);
    const snap = snapshotHeld(root, ["src/held"]);
    put(root, "src/held/a.ts", "a2 longer\n");
    unlinkSync(join(root, "src/held/sub/b.ts"));
    put(root, "src/held/sub/deeper/new.ts", "new\n");
    put(root, "src/free/c.ts", "c2\n");
    expect(summary(compareHeld(root, snap))).toEqual([
      "modified src/held/a.ts",
      "deleted src/held/sub/b.ts",
      "created src/held/sub/deeper/new.ts",
    ]);
  });

  it("a touch, or a rewrite with the same bytes, is not a change; a same-size rewrite is", () => {
    const root = checkout(PEER.src);
    const snap = snapshotHeld(root, ["src/held"]);
    const future = new Date(Date.now() + 60_000);
    utimesSync(join(root, "src/held/a.ts"), future, future);
    put(root, "src/held/sub/b.ts", "b1\n");
    expect(compareHeld(root, snap)).toEqual([]);
    put(root, "src/held/sub/b.ts", "b2\n");
    expect(summary(compareHeld(root, snap))).toEqual(["modified src/held/sub/b.ts"]);
  });

  it("a claim on a file that does not exist yet catches its creation", () => {
    const root = checkout(PEER.src);
    const snap = snapshotHeld(root, [
      "src/held/later.ts",
      "docs/new",
      "src/held/a.ts/under-a-file",
      "../out",
    ]);
    expect(snap.absent).toEqual(["docs/new", "src/held/later.ts", "src/held/a.ts/under-a-file"]);
    put(root, "src/held/later.ts", "x\n");
    put(root, "docs/new/x.md", "x\n");
    expect(summary(compareHeld(root, snap))).toEqual(["created docs/new/x.md", "created src/held/later.ts"]);
  });

  it("glob claims: files the glob matches, walked from its literal base", () => {
    const root = checkout({ "src/a.ts": "1", "src/deep/b.ts": "1", "src/deep/c.md": "1", "lib/d.ts": "1" });
    const snap = snapshotHeld(root, ["src/**/*.ts"]);
    expect(snap.files.map((f) => f.path).sort()).toEqual(["src/a.ts", "src/deep/b.ts"]);
    put(root, "src/deep/b.ts", "22");
    put(root, "src/deep/c.md", "22");
    put(root, "src/deep/e.ts", "new");
    put(root, "lib/d.ts", "22");
    expect(summary(compareHeld(root, snap))).toEqual(["modified src/deep/b.ts", "created src/deep/e.ts"]);
  });

  it("skips Git's folder, node_modules, the session state, its marks and the stash, even under a whole-repository claim", () => {
    const root = checkout({ "a.ts": "1", "node_modules/x/i.js": "1", ".cohent/project.json": "{}" }, false);
    put(root, ".cohent/runtime.json", "{}");
    put(root, ".cohent/runtime.json.lock", "");
    snapshotHeld(root, ["a.ts"]); // creates the fallback stash .cohent/held/
    const snap = snapshotHeld(root, ["**", ...GUARD_FILES.map((g) => g.path)]);
    expect(snap.files.map((f) => f.path).sort()).toEqual([".cohent/project.json", "a.ts"]);
    put(root, ".cohent/runtime.json", '{"changed":true}');
    // The MCP server marks a session while a call of it runs (claude-wiring.ts): its own state, not the call's write.
    put(root, ".cohent/spawn-free/s1.4242", "1\n");
    expect(compareHeld(root, snap)).toEqual([]);
  });

  it("steady state: a file seen before is not read again", () => {
    const root = checkout(PEER.src);
    const first = snapshotHeld(root, ["src"], later());
    expect(first.read).toBe(3);
    const dir = stashDir(root);
    const objects = readdirSync(join(dir, "objects")).sort();
    const seenStat = statSync(join(dir, "seen.json")).mtimeMs;
    const again = snapshotHeld(root, ["src"], later());
    expect(again.read).toBe(0);
    expect(again.files.map((f) => f.key)).toEqual(first.files.map((f) => f.key));
    expect(readdirSync(join(dir, "objects")).sort()).toEqual(objects);
    expect(statSync(join(dir, "seen.json")).mtimeMs).toBe(seenStat);
    // A file changed since is read again, and only it.
    put(root, "src/free/c.ts", "c2 changed\n");
    expect(snapshotHeld(root, ["src"], later()).read).toBe(1);
  });

  it("a file changed within the last second is read again next time (racy stat)", () => {
    const root = checkout(PEER.src);
    expect(snapshotHeld(root, ["src/held"]).read).toBe(2);
    expect(snapshotHeld(root, ["src/held"]).read).toBe(2);
  });

  it("the bound is per file: files within it are all kept, however many bytes the call holds", () => {
    const root = checkout({
      "big/a.txt": "a".repeat(40),
      "big/b.txt": "b".repeat(40),
      "big/c.txt": "c".repeat(40),
    });
    const snap = snapshotHeld(root, ["big"], { maxBytes: 50 });
    expect(snap.files.map((f) => f.key === null)).toEqual([false, false, false]);
    for (const f of ["a", "b", "c"]) put(root, `big/${f}.txt`, f.repeat(45));
    const changes = compareHeld(root, snap, { maxBytes: 50 });
    expect(changes.map((c) => c.after?.slice(0, 7))).toEqual(["sha256:", "sha256:", "sha256:"]);
    recordCatch(root, { sessionId: "s1", tool: "Bash", command: "gen", changes });
    expect(restoreHeld(root, "big").restored).toEqual(["big/a.txt", "big/b.txt", "big/c.txt"]);
    expect(read(root, "big/c.txt")).toBe("c".repeat(40));
  });

  it("bytes past the bound: caught, not restorable", () => {
    const root = checkout({ "big/a.bin": "x".repeat(100), "big/b.txt": "small" });
    const snap = snapshotHeld(root, ["big"], { maxBytes: 50 });
    expect(snap.files.find((f) => f.path === "big/a.bin")!.key).toBeNull();
    expect(snap.files.find((f) => f.path === "big/b.txt")!.key).not.toBeNull();
    put(root, "big/a.bin", "y".repeat(100));
    const changes = compareHeld(root, snap);
    expect(summary(changes)).toEqual(["modified big/a.bin !"]);
    recordCatch(root, { sessionId: "s1", tool: "Bash", command: "gen", changes });
    const r = restoreHeld(root, "big/a.bin");
    expect(r.restored).toEqual([]);
    expect(r.notRestorable).toEqual(["big/a.bin"]);
    expect(r.message).toMatch(/past the snapshot's bound/);
  });

  it("stops at maxFiles (20,000 by default): incomplete, and then only absent paths count as created", () => {
    const root = checkout();
    mkdirSync(join(root, "many"));
    for (let i = 0; i < 20_010; i++) writeFileSync(join(root, "many", `f${i}`), "");
    const snap = snapshotHeld(root, ["many", "gone.ts"], { maxBytes: 0 });
    expect(snap.complete).toBe(false);
    expect(snap.files.length).toBe(20_000);
    put(root, "many/zz-new", "x");
    put(root, "gone.ts", "x");
    expect(summary(compareHeld(root, snap))).toEqual(["created gone.ts"]);
  });
});

describe("catches and restore", () => {
  function caught(root: string, held: string[], act: () => void) {
    const snap = snapshotHeld(root, held);
    act();
    const changes = compareHeld(root, snap);
    return recordCatch(root, { sessionId: "s1", tool: "Bash", command: "./gen.sh", changes, at: Date.now() });
  }

  it("puts back a modified file (mode kept), recreates a deleted one, removes a created one", () => {
    const root = checkout(PEER.src);
    chmodSync(join(root, "src/held/a.ts"), 0o755);
    chmodSync(join(root, "src/held/sub/b.ts"), 0o600);
    const c = caught(root, ["src/held"], () => {
      put(root, "src/held/a.ts", "clobbered\n");
      unlinkSync(join(root, "src/held/sub/b.ts"));
      put(root, "src/held/new.ts", "new\n");
    });
    expect(c.changes.every((x) => x.restorable)).toBe(true);
    const r = restoreHeld(root, "src/held");
    expect(r.restored.sort()).toEqual(["src/held/a.ts", "src/held/new.ts", "src/held/sub/b.ts"]);
    expect(r.notRestorable).toEqual([]);
    expect(read(root, "src/held/a.ts")).toBe("a1\n");
    expect(statSync(join(root, "src/held/a.ts")).mode & 0o777).toBe(0o755);
    expect(read(root, "src/held/sub/b.ts")).toBe("b1\n");
    expect(statSync(join(root, "src/held/sub/b.ts")).mode & 0o777).toBe(0o600);
    expect(existsSync(join(root, "src/held/new.ts"))).toBe(false);
    expect(readdirSync(join(root, "src/held")).sort()).toEqual(["a.ts", "sub"]); // no temporary left
    expect(listCatches(root)[0]!.restored).toHaveProperty(["src/held/a.ts"]);
    // Again: already as before.
    expect(restoreHeld(root, "src/held/a.ts").restored).toEqual(["src/held/a.ts"]);
  });

  it("recreates a whole deleted folder; never writes through a folder that now leads outside the checkout", () => {
    const root = checkout(PEER.src);
    caught(root, ["src/held"], () => rmSync(join(root, "src/held"), { recursive: true }));
    expect(restoreHeld(root, "src/held").restored.sort()).toEqual(["src/held/a.ts", "src/held/sub/b.ts"]);
    expect(read(root, "src/held/sub/b.ts")).toBe("b1\n");

    const outside = checkout({ "new.ts": "new\n" }, false);
    caught(root, ["src/held"], () => put(root, "src/held/new.ts", "new\n"));
    rmSync(join(root, "src/held"), { recursive: true });
    symlinkSync(outside, join(root, "src/held"));
    const r = restoreHeld(root, "src/held/new.ts", { force: true });
    expect(r.notRestorable).toEqual(["src/held/new.ts"]);
    expect(r.message).toMatch(/outside the checkout/);
    expect(read(outside, "new.ts")).toBe("new\n");
  });

  it("restores one path, or one catch by id; the latest catch of a path by default", () => {
    const root = checkout({ "h/a": "a0", "h/b": "b0" });
    const first = caught(root, ["h"], () => put(root, "h/a", "a1"));
    const second = caught(root, ["h"], () => {
      put(root, "h/a", "a2");
      put(root, "h/b", "b2");
    });
    expect(listCatches(root).map((c) => c.id)).toEqual([second.id, first.id]);
    expect(restoreHeld(root, "h/b").restored).toEqual(["h/b"]);
    expect(read(root, "h/a")).toBe("a2");
    expect(restoreHeld(root, "h/a").restored).toEqual(["h/a"]);
    expect(read(root, "h/a")).toBe("a1"); // the latest catch's before-bytes
    // The first catch's before-bytes: the file holds the bytes that call left (a1), so no force is needed.
    expect(restoreHeld(root, ".", { catchId: first.id }).restored).toEqual(["h/a"]);
    expect(read(root, "h/a")).toBe("a0");
    expect(restoreHeld(root, ".", { catchId: "cnope" }).message).toMatch(/No catch cnope/);
    expect(restoreHeld(root, "elsewhere").message).toMatch(/No caught write under elsewhere/);
  });

  const TEN = Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`);
  const edited = (i: number, v: string, xs = TEN) => xs.map((x, j) => (j === i ? `${v}\n` : x)).join("");

  it("a file edited since the catch: that edit is merged over the bytes put back, the version before kept in the stash", () => {
    const root = checkout({ "h/a": TEN.join("") });
    chmodSync(join(root, "h/a"), 0o640);
    const c = caught(root, ["h"], () => put(root, "h/a", edited(1, "the writer's line")));
    // The holder's later edit, on top of the writer's bytes.
    const holders = edited(8, "the holder's line", edited(1, "the writer's line").split(/(?<=\n)/));
    put(root, "h/a", holders);
    const r = restoreHeld(root, "h");
    expect(read(root, "h/a")).toBe(edited(8, "the holder's line"));
    expect(statSync(join(root, "h/a")).mode & 0o777).toBe(0o640);
    expect(r.restored).toEqual(["h/a"]);
    expect(r.merged).toEqual(["h/a"]);
    const at = `.git/cohent/held/kept/${c.id}/h/a`;
    expect(r.kept).toEqual([{ path: "h/a", at }]);
    expect(read(root, at)).toBe(holders);
    expect(r.message).toBe(
      `Merged h/a: it had been edited since the catch, and that edit is now applied over the bytes from before the caught call (${c.id}); the file as it was before this restore is kept at ${at}. If those files are a peer's, tell it: the edit since the catch is most likely its own.`,
    );
    expect(listCatches(root)[0]!.kept).toEqual({ "h/a": at });
  });

  it("an edit since the catch that touches the call's change: back as before, the edited version kept in the stash, never in the work tree", () => {
    const root = checkout({ "h/a": TEN.join(""), "h/b": "b0\n" });
    const c = caught(root, ["h"], () => {
      put(root, "h/a", "overwritten\n");
      put(root, "h/b", "b1\n");
    });
    put(root, "h/a", "overwritten\nand the holder's line after it\n");
    const r = restoreHeld(root, "h");
    expect(read(root, "h/a")).toBe(TEN.join(""));
    expect(read(root, "h/b")).toBe("b0\n");
    expect(r.restored.sort()).toEqual(["h/a", "h/b"]);
    expect(r.merged).toEqual([]);
    const at = `.git/cohent/held/kept/${c.id}/h/a`;
    expect(read(root, at)).toBe("overwritten\nand the holder's line after it\n");
    expect(r.message).toContain(`Restored 1 file(s) as before the caught call (${c.id}): h/b.`);
    expect(r.message).toContain(
      `h/a had been edited since the catch and was not merged (that edit touches the lines the caught call changed): it is back as before the caught call (${c.id}), and the edited version is kept at ${at}; re-apply that edit from it (diff h/a ${at}).`,
    );
    expect(readdirSync(join(root, "h")).sort()).toEqual(["a", "b"]);
    expect(sh(root, "status", "--porcelain", "--untracked-files=all")).not.toContain("kept");
    // Restored again after a second, different edit: both kept versions stay.
    put(root, "h/a", "again\n");
    caught(root, ["h"], () => {}); // an unrelated catch later
    expect(restoreHeld(root, "h/a", { catchId: c.id, force: true }).kept).toEqual([
      { path: "h/a", at: `${at}.2` },
    ]);
    expect(read(root, "h/a")).toBe(TEN.join(""));
  });

  it("no bytes of the call's result, a binary file, a created file edited since: back as before, the edited version kept", () => {
    const root = checkout({ "h/big": "x".repeat(40), "h/bin": "a\0b\n" });
    const snap = snapshotHeld(root, ["h"], { maxBytes: 50 });
    put(root, "h/big", "y".repeat(60)); // past the bound after the call: only its stat is known
    put(root, "h/bin", "a\0c\n");
    put(root, "h/new", "created\n");
    const c = recordCatch(root, {
      sessionId: "s1",
      tool: "Bash",
      command: "gen",
      changes: compareHeld(root, snap, { maxBytes: 50 }),
    });
    put(root, "h/big", "y".repeat(60) + "z");
    put(root, "h/bin", "a\0c\nd\n");
    put(root, "h/new", "created\nand edited\n");
    const r = restoreHeld(root, "h");
    expect(r.restored.sort()).toEqual(["h/big", "h/bin", "h/new"]);
    expect(read(root, "h/big")).toBe("x".repeat(40));
    expect(read(root, "h/bin")).toBe("a\0b\n");
    expect(existsSync(join(root, "h/new"))).toBe(false);
    const kept = `.git/cohent/held/kept/${c.id}`;
    expect(read(root, `${kept}/h/new`)).toBe("created\nand edited\n");
    expect(read(root, `${kept}/h/bin`)).toBe("a\0c\nd\n");
    expect(r.message).toContain(
      "h/big had been edited since the catch and was not merged (the bytes the caught call left were not kept",
    );
    expect(r.message).toContain("h/bin had been edited since the catch and was not merged (it is not text)");
    expect(r.message).toContain(
      "h/new had been edited since the catch and was not merged (the caught call had created it): it is removed, as before the caught call",
    );
  });

  it("a file deleted since the catch comes back as before", () => {
    const root = checkout({ "h/a": "a0" });
    const c = caught(root, ["h"], () => put(root, "h/a", "a1"));
    unlinkSync(join(root, "h/a"));
    const r = restoreHeld(root, "h");
    expect(read(root, "h/a")).toBe("a0");
    expect(r.message).toBe(
      `h/a had been deleted since the catch: it is back as before the caught call (${c.id}).`,
    );
  });

  it("keeps the last 200 catches", () => {
    const root = checkout();
    for (let i = 0; i < 205; i++)
      recordCatch(root, { sessionId: "s", tool: "Bash", command: `c${i}`, changes: [] });
    const list = listCatches(root);
    expect(list.length).toBe(200);
    expect(list[0]!.command).toBe("c204");
  });
});

describe("pending snapshot", () => {
  it("round trip by call id and by the session's last call; taken once", () => {
    const root = checkout(PEER.src);
    const snap = snapshotHeld(root, ["src/held"]);
    const meta = { command: "make", tool: "Bash", at: 123, peers: [{ intentId: "i1" }] };
    savePending(root, "sess/1", "toolu_01", snap, meta);
    savePending(root, "sess/1", null, snap, { ...meta, command: "other" });
    const got = takePending(root, "sess/1", "toolu_01");
    expect(got).toEqual({ snap, meta });
    expect(takePending(root, "sess/1", "toolu_01")).toBeNull();
    expect(takePending(root, "sess/1", null)!.meta.command).toBe("other");
    expect(takePending(root, "sess/2", null)).toBeNull();
  });

  it("a long-lived guard keeps it at once and writes its file after the answer; the file serves any other process", async () => {
    const root = checkout(PEER.src);
    const snap = snapshotHeld(root, ["src/held"]);
    const meta = { command: "make", tool: "Bash", at: 123 };
    // The first call writes before answering: a stash that cannot be written refuses it.
    savePending(root, "sess", "toolu_01", snap, meta, { later: true });
    expect(existsSync(join(stashDir(root), "pending", "ssess~stoolu_01.json"))).toBe(true);
    // From then on, the file follows the answer; this process takes the call from memory meanwhile.
    savePending(root, "sess", "toolu_02", snap, meta, { later: true });
    const file = join(stashDir(root), "pending", "ssess~stoolu_02.json");
    expect(existsSync(file)).toBe(false);
    expect(takePending(root, "sess", "toolu_02")).toEqual({ snap, meta });
    savePending(root, "sess", "toolu_03", snap, meta, { later: true });
    await new Promise((r) => setImmediate(r));
    const onDisk = JSON.parse(readFileSync(join(stashDir(root), "pending", "ssess~stoolu_03.json"), "utf8"));
    expect(onDisk.snap.files.length).toBe(snap.files.length);
    expect(existsSync(file)).toBe(false);
  });
});

describe("stash location", () => {
  it("lives in the Git dir; a worktree's .git file leads to its own", () => {
    const main = checkout({ "h/a": "a0" });
    snapshotHeld(main, ["h"]);
    expect(stashDir(main)).toBe(join(main, ".git", "cohent", "held"));
    expect(keptKeys(join(main, ".git", "cohent", "held")).length).toBe(1);
    sh(main, "-c", "user.name=T", "-c", "user.email=t@e", "add", "-A");
    sh(main, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-qm", "init");
    const wt = join(main, "..", `${main.split("/").pop()}-wt`);
    roots.push(wt);
    sh(main, "worktree", "add", "-q", wt);
    const c = snapshotHeld(wt, ["h"]);
    put(wt, "h/a", "changed");
    expect(summary(compareHeld(wt, c))).toEqual(["modified h/a"]);
    expect(stashDir(wt)).toBe(join(main, ".git", "worktrees", wt.split("/").pop()!, "cohent", "held"));
  });

  it("a relative gitdir, and the fallback in .cohent/held/, which ignores itself", () => {
    const root = checkout({ "h/a": "a0" }, false);
    mkdirSync(join(root, "elsewhere.git"));
    writeFileSync(join(root, ".git"), "gitdir: elsewhere.git\n");
    expect(stashDir(root)).toBe(join(root, "elsewhere.git", "cohent", "held"));
    const bare = checkout({ "h/a": "a0" }, false);
    snapshotHeld(bare, ["h"]);
    expect(stashDir(bare)).toBe(join(bare, ".cohent", "held"));
    expect(read(bare, ".cohent/held/.gitignore")).toBe("*\n");
  });
});

describe("edit journal", () => {
  it("tells a peer's guarded edit that overlapped the call, by its path", () => {
    const root = checkout();
    noteEdit(root, "peer", ["src/held/a.ts"], "start", 1_000);
    noteEdit(root, "peer", ["src/held/a.ts"], "end", 2_000);
    expect(explainedBy(root, "src/held/a.ts", 1_500, 3_000, "me")).toBe("peer");
    expect(explainedBy(root, "src/held/a.ts", 2_500, 3_000, "me")).toBeNull(); // over before the call
    expect(explainedBy(root, "src/held/a.ts", 0, 900, "me")).toBeNull(); // started after it
    expect(explainedBy(root, "src/held/b.ts", 1_500, 3_000, "me")).toBeNull(); // another path
    expect(explainedBy(root, "src/held/a.ts", 1_500, 3_000, "peer")).toBeNull(); // the caller's own
  });

  it("sees lines appended since it last read the journal", () => {
    const root = checkout();
    noteEdit(root, "peer", ["a.ts"], "start", 1_000);
    expect(explainedBy(root, "a.ts", 100_000, 101_000, "me")).toBeNull();
    noteEdit(root, "peer", ["a.ts"], "start", 100_500);
    expect(explainedBy(root, "a.ts", 100_000, 101_000, "me")).toBe("peer");
  });

  it("a folder edit covers its files; a start without an end runs 60 s; an end without paths ends them all", () => {
    const root = checkout();
    noteEdit(root, "p1", ["src/held"], "start", 10_000);
    expect(explainedBy(root, "src/held/x/y.ts", 60_000, 65_000, "me")).toBe("p1");
    expect(explainedBy(root, "src/held/x/y.ts", 71_000, 75_000, "me")).toBeNull();
    noteEdit(root, "p2", ["a.ts", "b.ts"], "start", 100_000);
    noteEdit(root, "p2", [], "end", 101_000);
    expect(explainedBy(root, "b.ts", 100_500, 200_000, "me")).toBe("p2");
    expect(explainedBy(root, "b.ts", 102_000, 200_000, "me")).toBeNull();
  });

  it("tolerates a torn last line and an unreadable journal", () => {
    const root = checkout();
    expect(explainedBy(root, "a.ts", 0, 1, "me")).toBeNull();
    noteEdit(root, "p", ["a.ts"], "start", 1_000);
    appendFileSync(join(stashDir(root), "edits.log"), '{"s":"q","p":["a.ts"],"ph":"sta');
    expect(explainedBy(root, "a.ts", 1_000, 2_000, "me")).toBe("p");
  });

  it("stays bounded: the last 10 minutes, at most 500 lines", () => {
    const root = checkout();
    const now = Date.now();
    for (let i = 0; i < 4_000; i++) noteEdit(root, `s${i}`, [`src/some/long/path/file${i}.ts`], "start", now);
    const lines = readFileSync(join(stashDir(root), "edits.log"), "utf8")
      .trim()
      .split("\n");
    expect(lines.length).toBeLessThan(2_000); // compacted to 500 once past 256 KiB, then appended to
    expect(statSync(join(stashDir(root), "edits.log")).size).toBeLessThan(300 * 1024);
    expect(explainedBy(root, "src/some/long/path/file3999.ts", now, now + 1, "me")).toBe("s3999");
  });
});

describe("stash bound", () => {
  it("prunes objects past the cap, oldest first, keeping those a catch refers to", () => {
    const root = checkout({ "h/a": "a".repeat(1000) });
    const snap = snapshotHeld(root, ["h"], later());
    const before = snap.files[0]!.key!;
    put(root, "h/a", "b".repeat(1000));
    recordCatch(root, { sessionId: "s", tool: "Bash", command: null, changes: compareHeld(root, snap) });
    const objects = () => keptKeys(stashDir(root));
    const age = new Date(Date.now() - 10 * 60_000);
    for (let i = 0; i < 5; i++) {
      put(root, "h/a", String(i).repeat(1000));
      // Past the grace an unreferenced object or pack gets (it could be a parallel snapshot's).
      for (const d of ["objects", "packs"])
        for (const o of readdirSync(join(stashDir(root), d)))
          utimesSync(join(stashDir(root), d, o), age, age);
      snapshotHeld(root, ["h"], { ...later(), stashCap: 2_500 });
    }
    expect(objects()).toContain(before);
    expect(objects()).toContain(sha256Hex("b".repeat(1000))); // the bytes the call left, to merge against
    expect(objects().length).toBeLessThanOrEqual(4);
    expect(restoreHeld(root, "h/a", { force: true }).restored).toEqual(["h/a"]);
    expect(read(root, "h/a")).toBe("a".repeat(1000));
  });
});

describe("timing (printed, not asserted)", () => {
  it("10,000 files, 200 claimed files and folders", () => {
    const root = checkout();
    const dirs: string[] = [];
    for (let p = 0; p < 100; p++)
      for (let m = 0; m < 10; m++) {
        const d = `pkg${p}/mod${m}`;
        dirs.push(d);
        mkdirSync(join(root, d), { recursive: true });
        for (let f = 0; f < 10; f++)
          writeFileSync(join(root, d, `f${f}.ts`), `export const v = ${p * 100 + m * 10 + f};\n`);
      }
    // 150 files and 50 folders (10 files each), spread over the tree; and the guard's files.
    const held = [
      ...Array.from({ length: 150 }, (_, i) => `${dirs[(i * 7) % dirs.length]}/f${i % 10}.ts`),
      ...Array.from({ length: 50 }, (_, i) => `${dirs[(i * 13 + 5) % dirs.length]}/`),
      ...GUARD_FILES.map((g) => g.path),
    ];
    const t = <T>(fn: () => T) => {
      const s = process.hrtime.bigint();
      const out = fn();
      return [Number(process.hrtime.bigint() - s) / 1e6, out] as const;
    };
    const [first, snap1] = t(() => snapshotHeld(root, held, later()));
    const steady: number[] = [];
    let snap = snap1;
    for (let i = 0; i < 5; i++) {
      const [ms, s] = t(() => snapshotHeld(root, held, later()));
      steady.push(ms);
      snap = s;
    }
    const [pend] = t(() => {
      savePending(root, "s", "k", snap, { command: "x", tool: "Bash", at: 0 });
      return takePending(root, "s", "k");
    });
    const cmp: number[] = [];
    for (let i = 0; i < 5; i++) cmp.push(t(() => compareHeld(root, snap))[0]);
    expect(snap.read).toBe(0);
    const med = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!.toFixed(1);
    console.log(
      `held files: ${snap.files.length} of 10,000; first snapshot ${first.toFixed(1)} ms (${snap1.read} read), ` +
        `steady snapshot ${med(steady)} ms, compare ${med(cmp)} ms, save+take pending ${pend.toFixed(1)} ms`,
    );
  });
});
