import { execFile } from "node:child_process";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { commitOwn, partition } from "../../client/src/git/commit.js";
import { checkGitCommand, type PeerScope } from "../../adapter/src/git/git-guard.js";
import { makeRepo, sh, snapshot, write } from "./git-repo.js";

/**
 * Two sessions in one checkout, on real Git repositories: Ana works in
 * src/a (the caller), Bo in src/b (the peer). Bo has staged work, unstaged
 * work on top of it, and a new untracked file.
 */

const BO: PeerScope = { intentId: "wki_bo", person: "Bo", client: "Codex", model: "gpt-5", paths: ["src/b"] };
const ANA: PeerScope = {
  intentId: "wki_ana",
  person: "Ana",
  client: "Claude Code",
  model: "opus",
  paths: ["src/a"],
};
const asAna = { own: ANA.paths, peers: [BO] };
const asBo = { own: BO.paths, peers: [ANA] };

let root: string;

beforeEach(() => {
  root = makeRepo({ "src/a/x.ts": "a1\n", "src/b/y.ts": "b1\n", "src/b/w.ts": "w1\n", "README.md": "r1\n" });
  // Ana: a change and a new file.
  write(root, "src/a/x.ts", "a2\n");
  write(root, "src/a/new.ts", "new\n");
  // Bo: staged, then edited again; and an untracked file.
  write(root, "src/b/y.ts", "b2\n");
  sh(root, "add", "src/b/y.ts");
  write(root, "src/b/y.ts", "b3\n");
  write(root, "src/b/z.ts", "z\n");
});

const check = (command: string, scopes = asAna, cwd = root) =>
  checkGitCommand({ root, cwd, command, ...scopes });

describe("the git guard on a shared checkout", () => {
  it("refuses a sweeping git add -A && git commit, naming the peer and its paths, and touches nothing", async () => {
    const before = { ...snapshot(root, "."), status: sh(root, "status", "--porcelain=v2") };
    const v = await check("git add -A && git commit -m 'ship it'");
    expect(v.allowed).toBe(false);
    if (v.allowed) return;
    const peerPaths = [...new Set(v.conflicts.flatMap((c) => c.paths))].sort();
    expect(peerPaths).toEqual(["src/b/y.ts", "src/b/z.ts"]);
    expect(v.conflicts.every((c) => c.peer.intentId === "wki_bo")).toBe(true);
    expect(v.reason).toMatch(/Bo \(Codex gpt-5\), wki_bo/);
    expect(v.reason).toContain("src/b/z.ts");
    expect(v.instead).toContain("node .cohent/cohent.mjs commit -m 'ship it'");
    expect({ ...snapshot(root, "."), status: sh(root, "status", "--porcelain=v2") }).toEqual(before);
  });

  it.each([
    "git add .",
    "git add --all",
    "git commit -a -m x",
    "git commit -am x",
    "git add src",
    "git add 'src/*.ts'",
    "git stash",
    "git stash push -u -- src",
    "git checkout -- .",
    "git checkout .",
    "git checkout HEAD -- src",
    "git restore src/b/y.ts",
    "git restore --staged .",
    "git reset --hard",
    "git reset",
    "git reset HEAD -- src/b",
    "git clean -fd",
    "git clean -f src",
    "git -C src/b checkout -- .",
    "cd src && git add b",
    "(cd src/b && git stash)",
    "bash -c 'git add -A'",
    "git add $(git ls-files -m)",
    "git ls-files -m | xargs git add",
    "git switch -f main",
  ])("refuses %s: it reaches into Bo's scope", async (command) => {
    const v = await check(command);
    expect(v.allowed, command).toBe(false);
    if (!v.allowed) {
      expect(v.conflicts.length).toBeGreaterThan(0);
      expect(
        v.conflicts.every((c) => c.peer.person === "Bo" && c.paths.every((p) => p.startsWith("src/b/"))),
      ).toBe(true);
      expect(v.reason).toMatch(/src\/b\//);
    }
  });

  it.each([
    "git add src/a",
    "git add -- src/a/x.ts src/a/new.ts",
    "git add README.md",
    "git commit -m x src/a/x.ts",
    "git checkout -- src/a/x.ts",
    "git restore src/a",
    "cd src/a && git checkout -- .",
    "git -C src/a add .",
    "git clean -f src/a",
    "git stash list",
    "git status && git diff && git log --oneline -3",
    "git add --dry-run -A",
    "git reset --soft HEAD",
    "echo git add -A",
  ])("allows %s: only Ana's or unclaimed changes", async (command) => {
    const v = await check(command);
    expect(v, command).toMatchObject({ allowed: true });
  });

  it("a plain commit is refused while the index holds the peer's path, with the command to unstage it", async () => {
    const v = await check("git add src/a && git commit -m mine");
    expect(v.allowed).toBe(false);
    if (v.allowed) return;
    expect(v.conflicts).toEqual([expect.objectContaining({ effect: "commit", paths: ["src/b/y.ts"] })]);
    expect(v.instead.some((c) => c.startsWith("git restore --staged -- src/b/y.ts"))).toBe(true);
    expect(v.instead).toContain("node .cohent/cohent.mjs commit -m mine");
  });

  it("offers the own-paths form of a discarding command", async () => {
    const v = await check("git checkout -- src");
    expect(v.allowed).toBe(false);
    if (!v.allowed) expect(v.instead).toEqual(["git checkout -- src/a/x.ts"]);
    const w = await check("git checkout HEAD src");
    if (!w.allowed) expect(w.instead).toEqual(["git checkout HEAD -- src/a/x.ts"]);
    expect(w.allowed).toBe(false);
  });

  it("from a subdirectory, pathspecs are the subdirectory's and the offered commands name the top level", async () => {
    const v = await check("git add .. && git commit -m x", asAna, path.join(root, "src/a"));
    expect(v.allowed).toBe(false);
    if (!v.allowed) expect(v.instead).toContain("node ../../.cohent/cohent.mjs commit -m x");
    expect((await check("git add .", asAna, path.join(root, "src/a"))).allowed).toBe(true);
    const w = await check("git clean -f ..", asAna, path.join(root, "src/a"));
    expect(w.allowed).toBe(false);
    if (!w.allowed) expect(w.instead).toEqual([`git -C ${root} clean -f -- src/a/new.ts`]);
  });

  it("the peer's own commands are checked from its side", async () => {
    expect((await check("git add src/b", asBo)).allowed).toBe(true);
    const v = await check("git add -A", asBo);
    expect(v.allowed).toBe(false);
    if (!v.allowed) expect(v.conflicts[0]!.peer.person).toBe("Ana");
  });

  it("ignores another repository", async () => {
    const other = makeRepo({ "src/b/q.ts": "q\n" });
    write(other, "src/b/q.ts", "changed\n");
    expect((await check(`git -C ${other} add -A`)).allowed).toBe(true);
    expect((await check(`git add -A`, asAna, other)).allowed).toBe(true);
  });
});

describe("commit: the intent's own paths only", () => {
  const meta = { intentId: "wki_ana", person: "Ana", client: "Claude Code" };

  it("commits only the caller's paths, with trailers, and leaves the peer's staged and unstaged work exactly as it was", async () => {
    const peerBefore = snapshot(root, "src/b");
    const readmeBefore = snapshot(root, "README.md");
    write(root, "README.md", "r2\n");
    const head = sh(root, "rev-parse", "HEAD").trim();
    const r = await commitOwn({ root, message: "Ana: x and new", ...asAna, ...meta });
    expect(r.paths).toEqual(["src/a/new.ts", "src/a/x.ts"]);
    expect(sh(root, "rev-parse", "HEAD").trim()).toBe(r.hash);
    expect(sh(root, "rev-parse", "HEAD~1").trim()).toBe(head);
    expect(sh(root, "show", "--name-only", "--format=", r.hash).trim().split("\n").sort()).toEqual([
      "src/a/new.ts",
      "src/a/x.ts",
    ]);
    expect(sh(root, "show", "-s", "--format=%B", r.hash)).toBe(
      "Ana: x and new\n\nCohent-Intent: wki_ana\nCohent-Person: Ana\nCohent-Client: Claude Code\n\n",
    );
    expect(sh(root, "log", "-1", "--format=%(trailers:key=Cohent-Intent,valueonly)").trim()).toBe("wki_ana");
    expect(snapshot(root, "src/b")).toEqual(peerBefore);
    // Ana's paths are clean in the real index and the working tree; the unclaimed README change is left alone.
    expect(sh(root, "status", "--porcelain", "--", "src/a")).toBe("");
    expect(snapshot(root, "README.md")).not.toEqual(readmeBefore);
    expect(sh(root, "status", "--porcelain", "--", "README.md")).toBe(" M README.md\n");
  });

  it("takes an unclaimed path only when listed, and refuses a listed peer path", async () => {
    write(root, "README.md", "r2\n");
    const p = await partition(root, asAna);
    expect(p).toMatchObject({ mine: ["src/a/new.ts", "src/a/x.ts"], unclaimed: ["README.md"] });
    expect(p.peers[0]!.paths).toEqual(["src/b/y.ts", "src/b/z.ts"]);
    const r = await commitOwn({ root, message: "with readme", ...asAna, ...meta, paths: ["README.md"] });
    expect(r.paths).toEqual(["README.md", "src/a/new.ts", "src/a/x.ts"]);
    await expect(
      commitOwn({ root, message: "steal", ...asAna, ...meta, paths: ["src/b/y.ts"] }),
    ).rejects.toMatchObject({ code: "SCOPE_CONFLICT" });
  });

  it("commits a deletion", async () => {
    rmSync(path.join(root, "src/a/x.ts"));
    const r = await commitOwn({ root, message: "drop x", own: ["src/a/x.ts"], peers: [BO], ...meta });
    expect(r.paths).toEqual(["src/a/x.ts"]);
    expect(sh(root, "ls-tree", "-r", "--name-only", "HEAD", "--", "src/a")).toBe("");
    expect(sh(root, "status", "--porcelain", "--", "src/a/x.ts")).toBe("");
  });

  it("answers NOTHING_TO_COMMIT with no own change, and INVALID_INPUT without a message", async () => {
    await expect(
      commitOwn({ root, message: "x", own: ["docs"], peers: [BO], ...meta }),
    ).rejects.toMatchObject({ code: "NOTHING_TO_COMMIT" });
    await expect(commitOwn({ root, message: "  ", ...asAna, ...meta })).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
    expect(sh(root, "rev-list", "--count", "HEAD").trim()).toBe("1");
  });

  it("two commits at once both land, each with its own paths", async () => {
    const [a, b] = await Promise.all([
      commitOwn({ root, message: "Ana's", ...asAna, ...meta }),
      commitOwn({ root, message: "Bo's", ...asBo, intentId: "wki_bo", person: "Bo", client: "Codex" }),
    ]);
    const log = sh(root, "log", "--format=%H", "-3").trim().split("\n");
    expect(log.slice(0, 2).sort()).toEqual([a.hash, b.hash].sort());
    expect(sh(root, "rev-list", "--count", "HEAD").trim()).toBe("3");
    expect(sh(root, "show", "--name-only", "--format=", a.hash).trim().split("\n").sort()).toEqual([
      "src/a/new.ts",
      "src/a/x.ts",
    ]);
    expect(sh(root, "show", "--name-only", "--format=", b.hash).trim().split("\n").sort()).toEqual([
      "src/b/y.ts",
      "src/b/z.ts",
    ]);
    // Bo's commit took the working tree's content (b3), not the staged b2; both sides are clean now.
    expect(sh(root, "show", `${b.hash}:src/b/y.ts`)).toBe("b3\n");
    expect(sh(root, "status", "--porcelain")).toBe("");
  });

  it("two commits from two processes at once both land", async () => {
    const child = (opts: object) =>
      new Promise<{ ok: boolean; hash?: string; paths?: string[]; code?: string }>((resolve, reject) =>
        execFile(
          process.execPath,
          ["--import", "tsx", path.join(import.meta.dirname, "commit-child.ts"), JSON.stringify(opts)],
          { cwd: process.cwd() },
          (err, stdout) => (err ? reject(err) : resolve(JSON.parse(stdout))),
        ),
      );
    const [a, b] = await Promise.all([
      child({ root, message: "Ana's", ...asAna, ...meta }),
      child({ root, message: "Bo's", ...asBo, intentId: "wki_bo", person: "Bo", client: "Codex" }),
    ]);
    expect(a).toMatchObject({ ok: true, paths: ["src/a/new.ts", "src/a/x.ts"] });
    expect(b).toMatchObject({ ok: true, paths: ["src/b/y.ts", "src/b/z.ts"] });
    expect(sh(root, "rev-list", "--count", "HEAD").trim()).toBe("3");
    expect(sh(root, "status", "--porcelain")).toBe("");
  });

  it("four commits at once from separate scopes all land", async () => {
    for (const d of ["c", "d"]) write(root, `src/${d}/f.ts`, `${d}\n`);
    const scopes = ["src/a", "src/b", "src/c", "src/d"];
    const results = await Promise.all(
      scopes.map((s, i) =>
        commitOwn({
          root,
          message: `part ${i}`,
          own: [s],
          peers: [],
          intentId: `wki_${i}`,
          person: `P${i}`,
          client: null,
        }),
      ),
    );
    expect(sh(root, "rev-list", "--count", "HEAD").trim()).toBe("5");
    expect(new Set(results.map((r) => r.hash)).size).toBe(4);
    expect(sh(root, "status", "--porcelain")).toBe("");
  });

  it("waits for .git/index.lock instead of failing", async () => {
    const lock = path.join(root, ".git", "index.lock");
    writeFileSync(lock, "");
    const started = Date.now();
    setTimeout(() => rmSync(lock, { force: true }), 600);
    const r = await commitOwn({ root, message: "after the lock", ...asAna, ...meta });
    expect(Date.now() - started).toBeGreaterThanOrEqual(550);
    expect(sh(root, "rev-parse", "HEAD").trim()).toBe(r.hash);
    expect(existsSync(lock)).toBe(false);
  });

  it("gives up with INDEX_LOCKED, committing nothing, when the lock stays", async () => {
    const lock = path.join(root, ".git", "index.lock");
    writeFileSync(lock, "");
    const head = sh(root, "rev-parse", "HEAD").trim();
    await expect(
      commitOwn({ root, message: "never", ...asAna, ...meta, lockWaitMs: 300 }),
    ).rejects.toMatchObject({ code: "INDEX_LOCKED" });
    expect(sh(root, "rev-parse", "HEAD").trim()).toBe(head);
    rmSync(lock);
  });

  it("works in a repository without commits", async () => {
    const fresh = makeRepo({});
    write(fresh, "src/a/one.ts", "1\n");
    write(fresh, "src/b/two.ts", "2\n");
    sh(fresh, "add", "src/b/two.ts");
    const r = await commitOwn({ root: fresh, message: "first", ...asAna, ...meta });
    expect(sh(fresh, "ls-tree", "-r", "--name-only", r.hash).trim()).toBe("src/a/one.ts");
    expect(sh(fresh, "diff", "--cached", "--name-only").trim()).toBe("src/b/two.ts");
  });
});
