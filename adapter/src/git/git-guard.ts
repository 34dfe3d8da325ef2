import { existsSync, realpathSync } from "node:fs";
import { posix, resolve } from "node:path";
import { matchBudget } from "@cohent/protocol/paths";
import {
  git,
  nulList,
  isSafeRevision,
  inert,
  ownerOf,
  unsureNote,
  type PeerScope,
  type Scopes,
} from "@cohent/client";
import { classifyGitCommand, type GitOp } from "./classify.js";

export { classifyGitCommand, type GitOp } from "./classify.js";
export { ownerOf, unsureNote, type PeerScope, type Scopes } from "@cohent/client";

/**
 * The Git guard: a shell command that would stage, commit, discard or
 * overwrite a change inside an active peer's scope is refused, naming the
 * peer and the paths, with the command that does what the agent meant for
 * its own paths only. Which paths an operation takes is always Git's
 * answer (add --dry-run, diff --name-only, ls-files, clean -n), never a
 * guess at pathspec rules. Changes in the caller's own scope, and changes
 * nobody claimed, are the caller's.
 *
 * Use: `classifyGitCommand(command, cwd)` is pure and cheap; only when it
 * finds operations does a caller need the peers (the service's `scopes`
 * read) and `checkGitCommand`, which runs read-only git (optional
 * locks off) and fails open when git cannot answer.
 */

export type Effect = "stage" | "commit" | "stash" | "discard" | "overwrite" | "unstage" | "remove";

export interface GitConflict {
  /** The git command as typed. */
  op: string;
  effect: Effect;
  peer: PeerScope;
  paths: string[];
}

export type GitGuardVerdict =
  | { allowed: true; ops: GitOp[] }
  | { allowed: false; ops: GitOp[]; conflicts: GitConflict[]; reason: string; instead: string[] };

export interface GitGuardInput extends Scopes {
  /** The checkout's real top level. */
  root: string;
  /** The shell's working directory. */
  cwd: string;
  command: string;
  signal?: AbortSignal;
}

interface Repo {
  root: string;
  head: string | null;
  signal?: AbortSignal;
}

async function lines(cwd: string, args: string[], repo: Repo): Promise<string[]> {
  const r = await git(cwd, args, repo.signal ? { signal: repo.signal } : {});
  return nulList(r.stdout);
}

/** HEAD, or the empty tree in a repository without commits. */
async function baseOf(repo: Repo): Promise<string> {
  if (repo.head) return repo.head;
  const r = await git(repo.root, ["hash-object", "-t", "tree", "--stdin"], { input: "" });
  return r.stdout.trim();
}

const DIFF = [
  "diff",
  "--name-only",
  "-z",
  "--no-renames",
  "--no-ext-diff",
  "--no-textconv",
  "--no-relative",
  "--no-color",
];

/** Paths whose content differs between `what` (a revision, "--cached <rev>", or the index when empty) and the pathspecs' files. */
async function diff(
  dir: string,
  mode: string[],
  what: string[],
  spec: string[],
  repo: Repo,
): Promise<string[]> {
  return lines(dir, [...mode, ...DIFF, ...what, "--", ...spec], repo);
}

/** A revision git accepts as a tree-ish, or null (then the word is a path, as git itself decides). */
async function treeish(dir: string, word: string): Promise<string | null> {
  if (!isSafeRevision(word)) return null;
  const r = await git(dir, ["rev-parse", "--verify", "--quiet", "--end-of-options", `${word}^{tree}`]);
  return r.code === 0 ? word : null;
}

interface Taken {
  effect: Effect;
  paths: string[];
  dirs?: boolean;
}

/** What one operation takes, discards or overwrites, asked of git in the operation's own directory. */
async function takenBy(
  o: GitOp,
  dir: string,
  prefix: string,
  staged: Set<string>,
  repo: Repo,
): Promise<{ taken: Taken[]; source: string | null }> {
  let source: string | null = o.source;
  const taken = await takenFrom(o, dir, prefix, staged, repo, (s) => (source = s));
  return { taken, source };
}

async function takenFrom(
  o: GitOp,
  dir: string,
  prefix: string,
  staged: Set<string>,
  repo: Repo,
  resolved: (source: string) => void,
): Promise<Taken[]> {
  const f = new Set(o.flags);
  const mode = o.pathspecs === null ? [] : o.pathspecMode;
  let spec = o.pathspecs ?? [":/"];
  const base = await baseOf(repo);
  let source = o.source;
  if (o.ambiguous !== null) {
    const tree = await treeish(dir, o.ambiguous);
    if (tree) resolved((source = tree));
    else spec = o.pathspecs === null ? spec : [o.ambiguous, ...spec];
  }
  const whole = spec.length === 0;
  const all = whole ? [":/"] : spec;
  const modeAll = whole ? [] : mode;
  if (source !== null && !isSafeRevision(source)) source = null;
  switch (o.kind) {
    case "add": {
      if (whole && !f.has("all") && !f.has("update") && !f.has("patch") && o.pathspecs !== null) return [];
      const how =
        o.pathspecs === null
          ? ["--all"]
          : f.has("update") || f.has("patch")
            ? ["--update"]
            : f.has("no-all")
              ? ["--no-all"]
              : ["--all"];
      const r = await git(dir, [
        ...modeAll,
        "add",
        "--dry-run",
        "--ignore-missing",
        ...how,
        ...(f.has("force") ? ["--force"] : []),
        "--",
        ...all,
      ]);
      const paths = r.stdout
        .split("\n")
        .map((l) => /^(?:add|remove) '(.*)'$/.exec(l)?.[1])
        .filter((p): p is string => !!p);
      return [{ effect: "stage", paths }];
    }
    case "commit": {
      const out = new Set<string>();
      const only = !whole && !f.has("include");
      if (!only) for (const p of staged) out.add(p);
      if (f.has("all")) for (const p of await diff(repo.root, [], [base], [":/"], repo)) out.add(p);
      if (!whole) for (const p of await diff(dir, mode, [base], spec, repo)) out.add(p);
      return [{ effect: "commit", paths: [...out] }];
    }
    case "stash": {
      const out = new Set<string>(
        f.has("staged")
          ? await diff(dir, modeAll, ["--cached", base], all, repo)
          : await diff(dir, modeAll, [base], all, repo),
      );
      if (f.has("untracked") || f.has("all")) {
        for (const p of await lines(
          dir,
          [
            ...modeAll,
            "ls-files",
            "-z",
            "--full-name",
            "--others",
            ...(f.has("all") ? [] : ["--exclude-standard"]),
            "--",
            ...all,
          ],
          repo,
        ))
          out.add(p);
      }
      return [{ effect: "stash", paths: [...out] }];
    }
    case "switch":
      return [{ effect: "discard", paths: await diff(repo.root, [], [base], [":/"], repo) }];
    case "checkout": {
      if (whole)
        return f.has("force")
          ? [{ effect: "discard", paths: await diff(repo.root, [], [base], [":/"], repo) }]
          : [];
      if (source === null) return [{ effect: "discard", paths: await diff(dir, mode, [], spec, repo) }];
      const paths = new Set([
        ...(await diff(dir, mode, [source], spec, repo)),
        ...(await diff(dir, mode, ["--cached", source], spec, repo)),
      ]);
      return [{ effect: "overwrite", paths: [...paths] }];
    }
    case "restore": {
      if (whole) return [];
      const staged = f.has("staged");
      const worktree = f.has("worktree") || !staged;
      const from = source ?? base;
      const out: Taken[] = [];
      if (staged)
        out.push({ effect: "unstage", paths: await diff(dir, mode, ["--cached", from], spec, repo) });
      if (worktree)
        out.push({
          effect: "discard",
          paths: await diff(dir, mode, staged || source ? [from] : [], spec, repo),
        });
      return out;
    }
    case "reset": {
      const from = source ?? base;
      if (!whole)
        return [{ effect: "unstage", paths: await diff(dir, mode, ["--cached", from], spec, repo) }];
      if (f.has("hard") || f.has("merge")) {
        const paths = new Set([
          ...(await diff(repo.root, [], [base], [":/"], repo)),
          ...(source ? await diff(repo.root, [], [from], [":/"], repo) : []),
        ]);
        return [{ effect: "discard", paths: [...paths] }];
      }
      if (f.has("soft") || f.has("keep")) return [];
      return [{ effect: "unstage", paths: await diff(repo.root, [], ["--cached", from], [":/"], repo) }];
    }
    case "clean": {
      const args = [
        ...mode,
        "clean",
        "--dry-run",
        ...(f.has("dirs") ? ["-d"] : []),
        ...(f.has("x") ? ["-x"] : []),
        ...(f.has("X") ? ["-X"] : []),
      ];
      for (const e of o.excludes) args.push("-e", e);
      const r = await git(dir, [...args, "--", ...(o.pathspecs === null ? [":/"] : spec)]);
      const paths = r.stdout
        .split("\n")
        .map((l) => /^Would remove (.*)$/.exec(l)?.[1])
        .filter((p): p is string => !!p)
        .map((p) => posix.normalize(posix.join(prefix, p)).replace(/\/$/, ""));
      return [{ effect: "remove", paths, dirs: true }];
    }
  }
}

async function topLevelOf(dir: string): Promise<{ top: string; prefix: string } | null> {
  if (!existsSync(dir)) return null;
  const r = await git(dir, ["rev-parse", "--show-toplevel", "--show-prefix"]);
  if (r.code !== 0) return null;
  const [top, prefix] = r.stdout.split("\n");
  try {
    return { top: realpathSync(top!), prefix: prefix ?? "" };
  } catch {
    return null;
  }
}

/** Shell-quotes a word for a command the agent can paste. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_\-./=:,@%+]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

function who(p: PeerScope): string {
  const agent = [inert(p.client), inert(p.model)].filter(Boolean).join(" ");
  return `${inert(p.person)}${agent ? ` (${agent})` : ""}, ${inert(p.intentId, 40)}`;
}

function list(paths: string[], max = 12): string {
  return paths.slice(0, max).join(", ") + (paths.length > max ? ` and ${paths.length - max} more` : "");
}

const VERB: Record<Effect, string> = {
  stage: "stage",
  commit: "commit",
  stash: "stash away",
  discard: "discard",
  overwrite: "overwrite",
  unstage: "unstage",
  remove: "delete",
};

/** The command that does what `o` meant, for the caller's own paths only. */
function insteadFor(
  o: GitOp,
  mine: string[],
  commitMessage: string | null,
  hasCommit: boolean,
  root: string,
  cwd: string,
): string | null {
  // Paths are repository-relative: from a subdirectory, the command names the top level.
  const script = cwd === root ? ".cohent/cohent.mjs" : posix.relative(cwd, `${root}/.cohent/cohent.mjs`);
  if (hasCommit) return `node ${shellQuote(script)} commit -m ${shellQuote(commitMessage ?? "…")}`;
  if (mine.length === 0) return null;
  const paths = mine.map(shellQuote).join(" ");
  const f = new Set(o.flags);
  const git = cwd === root ? "git" : `git -C ${shellQuote(root)}`;
  switch (o.kind) {
    case "add":
      return `${git} add -- ${paths}`;
    case "stash":
      return `${git} stash push${o.message ? ` -m ${shellQuote(o.message)}` : ""} -- ${paths}`;
    case "checkout":
      return `${git} checkout${o.source ? ` ${shellQuote(o.source)}` : ""} -- ${paths}`;
    case "restore":
      return `${git} restore${f.has("staged") ? " --staged" : ""}${f.has("worktree") ? " --worktree" : ""}${o.source ? ` --source=${shellQuote(o.source)}` : ""} -- ${paths}`;
    case "reset":
      return f.has("hard") || f.has("merge")
        ? `${git} restore --source=HEAD --staged --worktree -- ${paths}`
        : `${git} restore --staged -- ${paths}`;
    case "switch":
      return `${git} restore --source=HEAD --staged --worktree -- ${paths}`;
    case "clean":
      return `${git} clean -f${f.has("dirs") ? " -d" : ""} -- ${paths}`;
    case "commit":
      return null;
  }
}

/**
 * Checks one shell command against the scopes. Commands with no staging,
 * committing or discarding Git operation are allowed without running git.
 * Operations in another repository (cd elsewhere, git -C /other) are not
 * this checkout's business.
 */
export async function checkGitCommand(input: GitGuardInput): Promise<GitGuardVerdict> {
  const ops = classifyGitCommand(input.command, input.cwd);
  if (ops.length === 0) return { allowed: true, ops };
  const headR = await git(input.root, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]);
  const repo: Repo = {
    root: input.root,
    head: headR.code === 0 ? headR.stdout.trim() : null,
    ...(input.signal ? { signal: input.signal } : {}),
  };
  // What the index holds as the command proceeds: a commit after `git add -A` commits both.
  const staged = new Set(await diff(input.root, [], ["--cached", await baseOf(repo)], [":/"], repo));
  const alreadyStaged = new Set(staged);
  const conflicts: GitConflict[] = [];
  const instead = new Set<string>();
  const commitOp = ops.find((o) => o.kind === "commit");
  const budget = matchBudget();
  const unstage = new Set<string>();
  for (const o of ops) {
    const dir = o.cwd === null ? input.root : resolve(input.cwd, o.cwd);
    const where = await topLevelOf(dir);
    if (!where) continue;
    if (where.top !== input.root) continue;
    const runIn = o.cwd === null ? input.root : dir;
    const { taken, source } = await takenBy(
      o.cwd === null ? { ...o, pathspecs: null } : o,
      runIn,
      o.cwd === null ? "" : where.prefix,
      staged,
      repo,
    );
    const mine: string[] = [];
    for (const t of taken) {
      const byPeer = new Map<PeerScope, string[]>();
      for (const p of t.paths) {
        const owner = ownerOf(p, input, t.dirs, budget);
        if (owner === "own") mine.push(p);
        else {
          byPeer.set(owner, [...(byPeer.get(owner) ?? []), p]);
          if (o.kind === "commit" && alreadyStaged.has(p)) unstage.add(p);
        }
      }
      for (const [peer, paths] of byPeer)
        conflicts.push({ op: o.text, effect: t.effect, peer, paths: paths.sort() });
      if (t.effect === "stage") for (const p of t.paths) staged.add(p);
      if (t.effect === "commit" || t.effect === "unstage" || t.effect === "stash")
        for (const p of t.paths) staged.delete(p);
    }
    if (conflicts.some((c) => c.op === o.text)) {
      const hasCommit = !!commitOp && (o.kind === "add" || o.kind === "commit");
      const cmd = insteadFor(
        { ...o, source },
        [...new Set(mine)].sort(),
        commitOp?.message ?? null,
        hasCommit,
        input.root,
        input.cwd,
      );
      if (cmd) instead.add(cmd);
    }
  }
  if (conflicts.length === 0) return { allowed: true, ops };
  if (unstage.size)
    instead.add(
      `${input.cwd === input.root ? "git" : `git -C ${shellQuote(input.root)}`} restore --staged -- ${[...unstage].sort().map(shellQuote).join(" ")}  (only if you staged them yourself: it unstages the peer's paths, their changes stay in the working tree)`,
    );
  const what = conflicts
    .map(
      (c) =>
        `\`${inert(c.op, 200)}\` would ${VERB[c.effect]} changes in the scope of ${who(c.peer)}: ${list(c.paths)}`,
    )
    .join("; ");
  const todo = instead.size
    ? ` Do this instead, for your own changes only: ${[...instead].join(" ; ")}`
    : " None of the changes it touches are yours: leave them to their owner.";
  return {
    allowed: false,
    ops,
    conflicts,
    reason: `git command refused: ${what}.${todo}${unsureNote(
      conflicts.map((c) => c.peer),
      budget,
    )}`,
    instead: [...instead],
  };
}
