import { normalizeRepoPath, scopeOverlap } from "@cohent/protocol/paths";
import type { ScopeConflict } from "@cohent/protocol";
import type { PeerScope } from "../git/git-guard.js";
import type { ShellWrites } from "./writes.js";

/**
 * A shell command's writes as the guard holds them (shell/writes.ts reads
 * them). A named write inside the checkout is an edit's target: claimed on
 * the fly, refused on a peer's claim, outside the scope or before an
 * intent. An uncertain one (a path in a one-liner's script, a word built
 * at run time) is refused only where a peer holds it: it may be a read, and
 * what it does write the check after the call sees. Pure.
 */

export interface ShellHold {
  /** Named write targets inside the checkout, repository-relative. */
  named: string[];
  /** Uncertain write targets inside the checkout, repository-relative. */
  uncertain: string[];
  /** The command writes the checkout as a whole (`git checkout -- .`, `rm -rf .`): every peer's claim is in its way. */
  whole: boolean;
  /** Known to only read and to run none of the project's code: nothing needs watching. */
  readOnly: boolean;
  /** A named target that is not a repository path. */
  targetError: string | null;
}

/** Paths never held: Git's own folder and installed packages (also when Git does not ignore them). */
const NEVER_HELD = /(^|\/)(\.git|node_modules)(\/|$)/;

/**
 * Where a target leads through symbolic links: the guard asks the file
 * system, a test gives a table. `real(abs, last)` is the real path (the last
 * part followed too when `last`), or null when it is the same; `root()` the
 * checkout's real root.
 */
export interface RealPaths {
  real(abs: string, last: boolean): string | null;
  root(): string | null;
}

/** Targets whose links are followed: past it, the rest are held by their names only. */
const MAX_LINKS = 256;

/** The repository path of an absolute path inside `root`, or null. */
function inside(abs: string, root: string): string | null {
  if (abs !== root && !abs.startsWith(root + "/")) return null;
  try {
    return normalizeRepoPath(abs, root);
  } catch {
    return null;
  }
}

/**
 * The command's writes as held. With `links`, a target that is a symbolic
 * link, or lies under one, is held as its real path too when that is inside
 * the checkout (a link in the agent's own scope to a peer's file); removing
 * a link does not follow it.
 */
export function holdOf(w: ShellWrites, root: string, links?: RealPaths): ShellHold {
  const named = new Set<string>();
  const uncertain = new Set<string>();
  let whole = false;
  let targetError: string | null = null;
  let followed = 0;
  for (const t of w.targets) {
    if (links && t.abs !== null && followed++ < MAX_LINKS) {
      const real = links.real(t.abs, t.mode !== "remove");
      const realRoot = real === null ? null : links.root();
      const rel = real === null || realRoot === null ? null : inside(real, realRoot);
      if (rel !== null && rel !== "**" && !NEVER_HELD.test(rel))
        (t.certainty === "named" ? named : uncertain).add(rel);
    }
    if (t.rel === null || t.abs === null) continue;
    if (t.rel === "") {
      // Removing or rewriting the checkout itself; creating or appending to "." writes nothing of it.
      if (t.mode === "remove" || t.mode === "tree") whole = true;
      continue;
    }
    let rel: string;
    try {
      rel = normalizeRepoPath(t.abs, root);
    } catch (err) {
      if (t.certainty === "named") targetError ??= (err as Error).message;
      continue;
    }
    if (NEVER_HELD.test(rel)) continue;
    (t.certainty === "named" ? named : uncertain).add(rel);
  }
  for (const p of named) uncertain.delete(p);
  return {
    named: [...named],
    uncertain: [...uncertain],
    whole,
    readOnly: w.readOnly && !w.runsCode,
    targetError,
  };
}

/**
 * The peers whose claims these paths overlap, as the service words a
 * refused claim (ScopeConflict), so that the refusal reads like an edit's.
 * `whole`: every peer with a claim.
 */
export function peerConflicts(
  paths: readonly string[],
  whole: boolean,
  peers: readonly PeerScope[],
): ScopeConflict[] {
  const out: ScopeConflict[] = [];
  for (const p of peers) {
    if (p.paths.length === 0) continue;
    const pairs = whole ? p.paths.map((t) => ({ mine: ".", theirs: t })) : scopeOverlap(paths, p.paths);
    if (pairs.length === 0) continue;
    out.push({
      intentId: p.intentId,
      person: p.person,
      client: p.client,
      model: p.model,
      objective: null,
      paths: [...new Set(pairs.map((x) => x.mine))],
      theirPaths: [...new Set(pairs.map((x) => x.theirs))],
    });
  }
  return out;
}
