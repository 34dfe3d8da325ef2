import { describe, expect, it } from "vitest";
import { classifyGitCommand, type GitOp } from "../../adapter/src/git/classify.js";
import { simpleCommands } from "../../adapter/src/shell/reader.js";
import { ownerOf, unsureNote, type PeerScope } from "../../adapter/src/git/git-guard.js";

/** The essentials of an operation, for compact rows. */
function brief(o: GitOp) {
  return {
    kind: o.kind,
    cwd: o.cwd,
    pathspecs: o.pathspecs,
    ...(o.flags.length ? { flags: o.flags } : {}),
    ...(o.source ? { source: o.source } : {}),
    ...(o.ambiguous ? { ambiguous: o.ambiguous } : {}),
    ...(o.message ? { message: o.message } : {}),
  };
}
const ops = (command: string, cwd = "/repo") => classifyGitCommand(command, cwd).map(brief);

describe("git classifier: each form", () => {
  const rows: [string, ReturnType<typeof ops>][] = [
    ["git add -A", [{ kind: "add", cwd: "/repo", pathspecs: [], flags: ["all"] }]],
    ["git add --all", [{ kind: "add", cwd: "/repo", pathspecs: [], flags: ["all"] }]],
    ["git add .", [{ kind: "add", cwd: "/repo", pathspecs: ["."] }]],
    ["git add -u", [{ kind: "add", cwd: "/repo", pathspecs: [], flags: ["update"] }]],
    ["git add --update src", [{ kind: "add", cwd: "/repo", pathspecs: ["src"], flags: ["update"] }]],
    ["git add src/a.ts 'b c.ts'", [{ kind: "add", cwd: "/repo", pathspecs: ["src/a.ts", "b c.ts"] }]],
    ["git add -- -weird", [{ kind: "add", cwd: "/repo", pathspecs: ["-weird"] }]],
    ["git add -f -- x", [{ kind: "add", cwd: "/repo", pathspecs: ["x"], flags: ["force"] }]],
    ["git add -p", [{ kind: "add", cwd: "/repo", pathspecs: [], flags: ["patch"] }]],
    [
      "git add --pathspec-from-file=list.txt",
      [{ kind: "add", cwd: "/repo", pathspecs: null, flags: ["pathspec-from-file"] }],
    ],
    ["git commit -m x", [{ kind: "commit", cwd: "/repo", pathspecs: [], flags: ["message"], message: "x" }]],
    [
      "git commit -a -m 'fix it'",
      [{ kind: "commit", cwd: "/repo", pathspecs: [], flags: ["all", "message"], message: "fix it" }],
    ],
    [
      "git commit -am wip",
      [{ kind: "commit", cwd: "/repo", pathspecs: [], flags: ["all", "message"], message: "wip" }],
    ],
    [
      'git commit --message="a b" src/x.ts',
      [{ kind: "commit", cwd: "/repo", pathspecs: ["src/x.ts"], flags: ["message"], message: "a b" }],
    ],
    [
      "git commit -m x -- a b",
      [{ kind: "commit", cwd: "/repo", pathspecs: ["a", "b"], flags: ["message"], message: "x" }],
    ],
    [
      "git commit -i a -m x",
      [{ kind: "commit", cwd: "/repo", pathspecs: ["a"], flags: ["include", "message"], message: "x" }],
    ],
    [
      "git commit --amend --no-edit",
      [{ kind: "commit", cwd: "/repo", pathspecs: [], flags: ["amend", "no-edit"] }],
    ],
    ["git commit -F msg.txt", [{ kind: "commit", cwd: "/repo", pathspecs: [], flags: ["F"] }]],
    ["git stash", [{ kind: "stash", cwd: "/repo", pathspecs: [] }]],
    ["git stash push -u -- src", [{ kind: "stash", cwd: "/repo", pathspecs: ["src"], flags: ["untracked"] }]],
    [
      "git stash -m keep",
      [{ kind: "stash", cwd: "/repo", pathspecs: [], flags: ["message"], message: "keep" }],
    ],
    ["git stash save 'my work'", [{ kind: "stash", cwd: "/repo", pathspecs: [], message: "my work" }]],
    ["git stash list", []],
    ["git stash show -p", []],
    ["git stash pop", []],
    ["git checkout -- a.ts", [{ kind: "checkout", cwd: "/repo", pathspecs: ["a.ts"] }]],
    [
      "git checkout HEAD~1 -- a.ts b.ts",
      [{ kind: "checkout", cwd: "/repo", pathspecs: ["a.ts", "b.ts"], source: "HEAD~1" }],
    ],
    ["git checkout .", [{ kind: "checkout", cwd: "/repo", pathspecs: [], ambiguous: "." }]],
    ["git checkout main", [{ kind: "checkout", cwd: "/repo", pathspecs: [], ambiguous: "main" }]],
    ["git checkout -b feature", []],
    ["git checkout -f", [{ kind: "checkout", cwd: "/repo", pathspecs: [], flags: ["force"] }]],
    ["git switch -f main", [{ kind: "switch", cwd: "/repo", pathspecs: [], flags: ["force"] }]],
    ["git switch main", []],
    ["git restore a.ts", [{ kind: "restore", cwd: "/repo", pathspecs: ["a.ts"] }]],
    [
      "git restore --staged a.ts",
      [{ kind: "restore", cwd: "/repo", pathspecs: ["a.ts"], flags: ["staged"] }],
    ],
    [
      "git restore -SW .",
      [{ kind: "restore", cwd: "/repo", pathspecs: ["."], flags: ["staged", "worktree"] }],
    ],
    [
      "git restore --source=HEAD~2 --worktree -- x",
      [{ kind: "restore", cwd: "/repo", pathspecs: ["x"], flags: ["source", "worktree"], source: "HEAD~2" }],
    ],
    [
      "git restore -s main x",
      [{ kind: "restore", cwd: "/repo", pathspecs: ["x"], flags: ["source"], source: "main" }],
    ],
    ["git reset --hard", [{ kind: "reset", cwd: "/repo", pathspecs: [], flags: ["hard"] }]],
    [
      "git reset --hard HEAD~1",
      [{ kind: "reset", cwd: "/repo", pathspecs: [], flags: ["hard"], ambiguous: "HEAD~1" }],
    ],
    ["git reset -- a.ts", [{ kind: "reset", cwd: "/repo", pathspecs: ["a.ts"] }]],
    ["git reset HEAD a.ts", [{ kind: "reset", cwd: "/repo", pathspecs: ["a.ts"], ambiguous: "HEAD" }]],
    ["git reset", [{ kind: "reset", cwd: "/repo", pathspecs: [] }]],
    ["git reset --soft HEAD~1", []],
    ["git clean -fd", [{ kind: "clean", cwd: "/repo", pathspecs: [], flags: ["dirs", "force"] }]],
    [
      "git clean -fdx -- build",
      [{ kind: "clean", cwd: "/repo", pathspecs: ["build"], flags: ["dirs", "force", "x"] }],
    ],
    ["git clean -n", []],
    ["git clean --dry-run -d", []],
    ["git -C sub add .", [{ kind: "add", cwd: "/repo/sub", pathspecs: ["."] }]],
    [
      "git -C /elsewhere -C x commit -am m",
      [{ kind: "commit", cwd: "/elsewhere/x", pathspecs: [], flags: ["all", "message"], message: "m" }],
    ],
    ["git -c core.editor=true commit -a", [{ kind: "commit", cwd: "/repo", pathspecs: [], flags: ["all"] }]],
    ["git --no-pager -c user.name=x add -A", [{ kind: "add", cwd: "/repo", pathspecs: [], flags: ["all"] }]],
    ["/usr/bin/git add .", [{ kind: "add", cwd: "/repo", pathspecs: ["."] }]],
    [
      "GIT_AUTHOR_NAME=x git commit -am m",
      [{ kind: "commit", cwd: "/repo", pathspecs: [], flags: ["all", "message"], message: "m" }],
    ],
    ["env -u X git add -A", [{ kind: "add", cwd: "/repo", pathspecs: [], flags: ["all"] }]],
    ["command git add .", [{ kind: "add", cwd: "/repo", pathspecs: ["."] }]],
    ["git status && git diff && git log -3 && git add --dry-run .", []],
    ["git add $FILE", [{ kind: "add", cwd: "/repo", pathspecs: null }]],
    ["git ls-files -m | xargs git add", [{ kind: "add", cwd: "/repo", pathspecs: null }]],
    ["echo 'git add -A'", []],
    ["gitk --all", []],
  ];
  it.each(rows)("%s", (command, expected) => {
    expect(ops(command)).toEqual(expected);
  });
});

describe("git classifier: chains, subshells, quoting", () => {
  it.each([
    ["git add -A && git commit -m x", ["add", "commit"]],
    ["git add . ; git commit -m 'x; y'", ["add", "commit"]],
    ["git diff --quiet || git commit -am x", ["commit"]],
    ["git stash | cat", ["stash"]],
    ["(git add -A) && (git commit -m x)", ["add", "commit"]],
    ["{ git add -A; git commit -m x; }", ["add", "commit"]],
    ["true & git clean -fd", ["clean"]],
    ["git add -A\ngit commit -m x", ["add", "commit"]],
    ["echo $(git stash)", ["stash"]],
    ["echo `git reset --hard`", ["reset"]],
    ["bash -c 'git add -A && git commit -m x'", ["add", "commit"]],
    ['sh -lc "git checkout -- ."', ["checkout"]],
    ["eval git add -A", ["add"]],
    ["if true; then git add -A; fi", ["add"]],
    ["for f in a b; do git add $f; done", ["add"]],
    ['git commit -m "$(cat msg)" 2>&1 > out.log', ["commit"]],
    ["cat <<EOF > f\ngit add -A\nEOF\ngit status", []],
    ["'git' 'add' '-A'", ["add"]],
    ["g\\it add -A", ["add"]],
    ['echo "git add -A && git commit"', []],
    ["# git add -A", []],
    ["git log --grep='git add -A'", []],
  ] as [string, string[]][])("%s", (command, kinds) => {
    expect(classifyGitCommand(command, "/repo").map((o) => o.kind)).toEqual(kinds);
  });

  it("a here-document message (as Claude Code writes commits) with an apostrophe does not hide what follows", () => {
    const cmd =
      "git add src/a && git commit -m \"$(cat <<'EOF'\nFix it\n\nDon't (really) break it.\nEOF\n)\" && git stash";
    expect(classifyGitCommand(cmd, "/repo").map((o) => o.kind)).toEqual(["add", "commit", "stash"]);
    expect(classifyGitCommand(cmd, "/repo")[1]?.pathspecs).toEqual([]);
  });

  it("a quoted message keeps its separators and the message is read", () => {
    const [c] = classifyGitCommand(`git commit -m "fix: a && b; c | d"`, "/repo");
    expect(c?.message).toBe("fix: a && b; c | d");
    expect(c?.pathspecs).toEqual([]);
  });

  it("a message built by the shell is unknown, not a pathspec", () => {
    const [c] = classifyGitCommand(`git commit -m "$(cat m)" -a`, "/repo");
    expect(c?.flags).toContain("all");
    expect(c?.pathspecs).toEqual([]);
    expect(c?.message).toBeNull();
  });

  it("follows cd, and forgets it outside a subshell", () => {
    expect(ops("cd sub && git add .").map((o) => o.cwd)).toEqual(["/repo/sub"]);
    expect(ops("(cd sub && git add .) && git add -A").map((o) => o.cwd)).toEqual(["/repo/sub", "/repo"]);
    expect(ops("cd $DIR && git add .").map((o) => o.cwd)).toEqual([null]);
    expect(ops("cd .. && git -C repo/x add .").map((o) => o.cwd)).toEqual(["/repo/x"]);
  });

  it("redirections and here-documents are not arguments", () => {
    expect(ops("git add a.ts > /dev/null 2>&1")[0]?.pathspecs).toEqual(["a.ts"]);
    expect(ops("git add a.ts 2> err.txt <in")[0]?.pathspecs).toEqual(["a.ts"]);
  });

  it("a dynamic pathspec makes the pathspecs unknown, a glob does not (git reads it as a pathspec)", () => {
    expect(ops('git add "src/$X"')[0]?.pathspecs).toBeNull();
    expect(ops("git add ~/x")[0]?.pathspecs).toBeNull();
    expect(ops("git add src/{a,b}.ts")[0]?.pathspecs).toBeNull();
    expect(ops("git add *.ts")[0]?.pathspecs).toEqual(["*.ts"]);
  });

  it("pathspec modes before the subcommand are kept", () => {
    expect(classifyGitCommand("git --literal-pathspecs add '*.ts'", "/r")[0]?.pathspecMode).toEqual([
      "--literal-pathspecs",
    ]);
  });

  it("the shell reader splits words as the shell does", () => {
    expect(simpleCommands(`a "b c"'d' e\\ f; g`, "/").map((c) => c.words.map((w) => w.text))).toEqual([
      ["a", "b cd", "e f"],
      ["g"],
    ]);
  });
});

describe("a program named like an Object.prototype member is an ordinary program, not a wrapper", () => {
  it.each([
    "toString -a x",
    "constructor git add .",
    "__proto__ git commit -m x",
    "hasOwnProperty x && git add .",
  ])("%s", (command) => {
    expect(() => classifyGitCommand(command, "/repo")).not.toThrow();
  });
  it("still reads the git command after such a program", () => {
    expect(classifyGitCommand("toString x && git add .", "/repo").map((o) => o.kind)).toEqual(["add"]);
  });
});

describe("scopes", () => {
  const peers: PeerScope[] = [
    { intentId: "wki_1", person: "Bo", client: "Codex", model: null, paths: ["src/b", "docs/*.md"] },
  ];

  it.each([
    ["src/a/x.ts", "own"],
    ["src/b/y.ts", "Bo"],
    ["docs/guide.md", "Bo"],
    ["docs/sub/guide.md", "own"], // the protocol's matcher: * stays within one segment
    ["src/c/z.ts", "own"],
    ["README.md", "own"],
    ["src/bb/x.ts", "own"],
  ])("%s belongs to %s", (path, who) => {
    const o = ownerOf(path, { own: ["src/a"], peers });
    expect(o === "own" ? "own" : o.person).toBe(who);
  });

  it("the own scope wins where it covers a path", () => {
    expect(ownerOf("src/b/mine.ts", { own: ["src/b/mine.ts"], peers })).toBe("own");
  });

  it("a directory git clean would delete belongs to the peer whose scope lies inside it", () => {
    const o = ownerOf("src", { own: ["src/a"], peers }, true);
    expect(o === "own" ? "own" : o.person).toBe("Bo");
  });
});

describe("a peer's claim that is costly to compare cannot slow the hook: unsure counts as the peer's", () => {
  // An older adapter or server let this through: 2^95 alternatives as minimatch saw them.
  const bomb: PeerScope = {
    intentId: "wki_9",
    person: "Mallory",
    client: null,
    model: null,
    paths: Array.from({ length: 64 }, (_, i) => `src/b${i}/` + "{a,b}".repeat(95)),
  };
  it.each([
    ["src/b3/anything.ts", "Mallory"],
    ["src/b63/x/y.ts", "Mallory"],
    ["src/c/z.ts", "own"],
    ["lib/x.ts", "own"],
  ])("%s belongs to %s (the pattern counts as its directory)", (path, who) => {
    const budget = { steps: 1e9 };
    const o = ownerOf(path, { own: [], peers: [bomb] }, false, budget);
    expect(o === "own" ? "own" : o.person).toBe(who);
    expect(1e9 - budget.steps).toBeLessThan(1_000); // looked up, never expanded
  });
  it("the refusal says why it was unsure", () => {
    expect(unsureNote([bomb], { steps: 1 })).toMatch(
      /Unsure, so refused: Mallory's claim src\/b0\/\{a,b\}.*over the bound of 128.*counts as its whole directory/,
    );
    expect(unsureNote(peersWithin, { steps: 1 })).toBe("");
  });
  const peersWithin: PeerScope[] = [
    { intentId: "wki_1", person: "Bo", client: null, model: null, paths: ["src/*a*a*b"] },
  ];
  it("past the matching budget, a path counts as the peer's, and the reason says so", () => {
    const budget = { steps: 0 };
    const o = ownerOf("src/ab", { own: [], peers: peersWithin }, false, budget);
    expect(o === "own" ? "own" : o.person).toBe("Bo");
    // Where the anchors alone settle it, no matching is needed and the answer stays exact.
    expect(ownerOf("lib/ab", { own: [], peers: peersWithin }, false, budget)).toBe("own");
    expect(ownerOf("src/ab", { own: [], peers: peersWithin })).toBe("own");
    expect(unsureNote(peersWithin, budget)).toMatch(/took over the matching bound/);
  });
});
