import { BOUNDS } from "./bounds.js";
import { CohentError } from "./codes.js";
import type { Budget } from "./glob-nfa.js";
import { assertPathBounds } from "./path-cost.js";
import { compiled, literalBase } from "./path-compile.js";
import {
  anchoredAlong,
  compiledScope,
  coversCompiled,
  overlapCompiled,
  overlapPairs,
  overlapsAmong,
} from "./path-overlap.js";

export { looksLikeFile } from "./path-overlap.js";
export { overRoomBudget, pathCost } from "./path-cost.js";

/**
 * Repository paths: normalization and overlap. A path is either a literal
 * (a file, or a directory that covers everything below it) or a glob.
 * Everything here is pure; the backend and the adapter share it.
 */

const GLOB_CHARS = /[*?[\]{}]/;
const WINDOWS_ABSOLUTE = /^[A-Za-z]:\//;

export function isGlob(path: string): boolean {
  return GLOB_CHARS.test(path);
}

function invalid(raw: string, why: string): CohentError {
  return new CohentError("INVALID_PATH", `Invalid path ${JSON.stringify(raw.slice(0, 80))}: ${why}.`);
}

/**
 * Normalizes one path to repository-relative POSIX form. `repoRoot` (an
 * absolute POSIX path) lets absolute paths inside the repository through;
 * without it every absolute path is refused. "." and "" segments collapse,
 * a trailing slash is dropped, and the whole repository is written "**".
 */
export function normalizeRepoPath(raw: string, repoRoot?: string): string {
  if (typeof raw !== "string" || raw.trim() === "") throw invalid(String(raw), "empty path");
  if (raw.includes("\0")) throw invalid(raw, "contains a NUL byte");
  if (raw.length > BOUNDS.pathChars) throw invalid(raw, `longer than ${BOUNDS.pathChars} characters`);
  let p = raw.replace(/\\/g, "/");
  if (p.startsWith("!")) throw invalid(raw, "negated patterns are not scopes");
  if (p.startsWith("/") || WINDOWS_ABSOLUTE.test(p)) {
    const root = repoRoot?.replace(/\\/g, "/").replace(/\/+$/, "");
    if (!root)
      throw invalid(raw, "absolute paths must be inside the repository; send a repository-relative path");
    if (p === root) return "**";
    if (!p.startsWith(root + "/")) throw invalid(raw, "absolute path outside the repository");
    p = p.slice(root.length + 1);
  }
  const out: string[] = [];
  for (const segment of p.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (out.length === 0) throw invalid(raw, "escapes the repository with ..");
      out.pop();
      continue;
    }
    out.push(segment);
  }
  if (out.length === 0) return "**";
  return out.join("/");
}

/**
 * Normalizes a request's list, dropping duplicates and keeping the
 * first-seen order, and holds it to the path bounds before anything is
 * matched: PATHS_TOO_COMPLEX over them, INVALID_PATH for syntax a scope does
 * not support (path-cost.ts). Every path field of every request comes here.
 */
export function normalizeRepoPaths(raw: readonly string[], repoRoot?: string): string[] {
  const out = [...new Set(raw.map((p) => normalizeRepoPath(p, repoRoot)))];
  assertPathBounds(out);
  return out;
}

export interface MatchOptions {
  caseInsensitive?: boolean;
  /**
   * The matching work a caller allows, shared by every call it passes it to
   * (a request against a whole room). Past it every comparison answers
   * "overlap" and `budget.steps` is 0; see `matchBudget`. Overlap questions
   * without one get their own budget per call; `covers` and `scopeCovers`
   * without one are unbounded (a caller's own scope is bounded by the bounds).
   */
  budget?: MatchBudget;
}

export type MatchBudget = Budget;

/** A fresh budget of BOUNDS.matchSteps: what one request may spend comparing paths. */
export function matchBudget(): MatchBudget {
  return { steps: BOUNDS.matchSteps };
}

/** Did the comparisons sharing this budget run out (so that some answered "overlap" unsure)? */
export const exhausted = (b: MatchBudget): boolean => b.steps <= 0;

function fold(p: string, opts: MatchOptions): string {
  return opts.caseInsensitive ? p.toLowerCase() : p;
}

const foldAll = (list: readonly string[], opts: MatchOptions) =>
  opts.caseInsensitive ? list.map((p) => p.toLowerCase()) : list;

/** Literal leading segments of a glob: "src/a/**\/*.ts" -> "src/a". */
export function globBase(pattern: string): string {
  return literalBase(pattern);
}

/**
 * Why a pattern is compared as its literal base directory instead of as
 * written (it is over the path bounds or uses syntax a scope does not
 * support: a claim stored before the bounds, or a peer's older adapter), or
 * null when it is matched as written. Such a pattern can only make answers
 * err towards "overlap".
 */
export function overBound(pattern: string, opts: MatchOptions = {}): string | null {
  return compiled(fold(pattern, opts)).degraded;
}

/** Does the scope pattern cover the concrete path `target` (the pattern matches it, or a directory above it)? */
export function covers(pattern: string, target: string, opts: MatchOptions = {}): boolean {
  return coversCompiled(compiled(fold(pattern, opts)), fold(target, opts), opts.budget);
}

/** Is `target` covered by any pattern of a declared scope? */
export function scopeCovers(scope: readonly string[], target: string, opts: MatchOptions = {}): boolean {
  if (!scope.length) return false;
  const t = fold(target, opts);
  // Only a pattern anchored at the target or in a directory above it can cover it.
  const s = compiledScope(foldAll(scope, opts));
  const along: number[] = [];
  anchoredAlong(s, t.split("/"), false, along, opts.budget);
  return along.some((j) => coversCompiled(s.items[j]!, t, opts.budget));
}

/** Do two scope patterns share a path? */
export function patternsOverlap(a: string, b: string, opts: MatchOptions = {}): boolean {
  return overlapCompiled(compiled(fold(a, opts)), compiled(fold(b, opts)), opts.budget ?? matchBudget());
}

/** The pairs of patterns through which two scopes overlap; empty when they do not. */
export function scopeOverlap(
  mine: readonly string[],
  theirs: readonly string[],
  opts: MatchOptions = {},
): { mine: string; theirs: string }[] {
  if (!mine.length || !theirs.length) return [];
  const budget = opts.budget ?? matchBudget();
  if (budget.steps <= 0) return [{ mine: mine[0]!, theirs: theirs[0]! }]; // unsure: overlapping
  const a = compiledScope(foldAll(mine, opts));
  const b = compiledScope(foldAll(theirs, opts));
  return overlapPairs(a, b, budget).map(([i, j]) => ({ mine: mine[i]!, theirs: theirs[j]! }));
}

/**
 * Which of several scopes overlap which, all at once (the Control Room's
 * page): for each pair a < b that overlaps, the patterns of a and of b it
 * overlaps through. One budget for all of it: opts.budget, else a request's
 * (matchSteps) for each scope, as if each had asked once.
 */
export function scopesOverlapping(
  scopes: readonly (readonly string[])[],
  opts: MatchOptions = {},
): { a: number; b: number; mine: string[]; theirs: string[] }[] {
  const compiledScopes = scopes.map((s) => compiledScope(foldAll(s, opts)));
  const found = overlapsAmong(
    compiledScopes,
    opts.budget ?? { steps: BOUNDS.matchSteps * Math.max(1, scopes.length) },
  );
  const out: { a: number; b: number; mine: string[]; theirs: string[] }[] = [];
  for (const [a, row] of found)
    for (const [b, pairs] of row)
      out.push({
        a,
        b,
        mine: [...new Set(pairs.map(([i]) => i).sort((x, y) => x - y))].map((i) => scopes[a]![i]!),
        theirs: [...new Set(pairs.map(([, j]) => j).sort((x, y) => x - y))].map((j) => scopes[b]![j]!),
      });
  return out;
}
