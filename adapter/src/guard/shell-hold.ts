import { normalizeRepoPath, scopeOverlap } from "@cohent/protocol/paths";
import type { ScopeConflict } from "@cohent/protocol";
import type { PeerScope } from "../git/git-guard.js";
import type { ShellWrites } from "./shell-writes.js";

/**
 * A shell command's writes as the guard holds them (shell-writes.ts reads
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

export function holdOf(w: ShellWrites, root: string): ShellHold {
  const named = new Set<string>();
  const uncertain = new Set<string>();
  let whole = false;
  let targetError: string | null = null;
  for (const t of w.targets) {
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
