import { accepts, continuesBelow, intersects, type Budget } from "./glob-nfa.js";
import { compiledList, type Compiled } from "./path-compile.js";

export { looksLikeFile } from "./path-compile.js";

/**
 * Overlap of compiled patterns and claims. A literal covers itself and
 * what is below it; a glob covers its matches and what is below them. A
 * claim is indexed by its literal paths, so that comparing two claims looks
 * each literal up by its directories instead of pairing it with every
 * pattern of the other claim: claims are mostly file paths, and a room holds
 * many claims.
 */

/** `path` equals `dir` or lies below it. An empty dir is the repository root. */
export function within(path: string, dir: string): boolean {
  return dir === "" || path === dir || (path.startsWith(dir) && path.charCodeAt(dir.length) === 47);
}

export function coversCompiled(c: Compiled, target: string, budget?: Budget): boolean {
  if (c.literal !== null) return within(target, c.literal);
  return within(target, c.base) && accepts(c.nfa!, target, true, budget);
}

/** A literal against a glob: exact. A literal taken for a file has nothing below it; a degraded pattern is a directory. */
function literalMeetsGlob(lit: Compiled, glob: Compiled, budget?: Budget): boolean {
  const path = lit.literal!;
  if (!within(path, glob.base) && !within(glob.base, path)) return false;
  if (accepts(glob.nfa!, path, true, budget)) return true;
  return !lit.fileLike && (within(glob.base, path) || continuesBelow(glob.nfa!, path, budget));
}

/**
 * Do two compiled patterns share a path? Exact for literals against
 * literals and against globs. Two globs overlap when their automata share a
 * path, each taken for a directory too unless its last segment ends in an
 * extension ("src/**\/*.ts" names files).
 */
export function overlapCompiled(x: Compiled, y: Compiled, budget?: Budget): boolean {
  if (budget && budget.steps-- <= 0) return true;
  if (x.literal !== null && y.literal !== null)
    return within(x.literal, y.literal) || within(y.literal, x.literal);
  if (x.literal !== null) return literalMeetsGlob(x, y, budget);
  if (y.literal !== null) return literalMeetsGlob(y, x, budget);
  if (!within(x.base, y.base) && !within(y.base, x.base)) return false;
  if (x.fileLike && y.fileLike) {
    // Two sets of files: a common one ends with both literal endings.
    const a = x.nfa!.suffix;
    const b = y.nfa!.suffix;
    if (!a.endsWith(b) && !b.endsWith(a)) return false;
  }
  return intersects(x.nfa!, !x.fileLike, y.nfa!, !y.fileLike, budget);
}

export interface CompiledScope {
  items: Compiled[];
  /** Each item's anchor (a literal, a degraded pattern's directory, a glob's base) -> the items anchored there. */
  at: Map<string, number[]>;
  /** Each directory strictly above an anchor -> the items anchored below it. */
  below: Map<string, number[]>;
  /** Per item: the directories its anchor lies in, and the anchor ("a/b" -> "", "a", "a/b"). */
  dirs: string[][];
}

/** The directories a path lies in, and the path itself: "a/b" -> "", "a", "a/b". */
function selfAndAbove(path: string): string[] {
  const out = [""];
  if (path === "") return out;
  for (let k = path.indexOf("/"); k >= 0; k = path.indexOf("/", k + 1)) out.push(path.slice(0, k));
  out.push(path);
  return out;
}

function add(map: Map<string, number[]>, key: string, i: number): void {
  const list = map.get(key);
  if (list) list.push(i);
  else map.set(key, [i]);
}

const anchor = (c: Compiled): string => c.literal ?? c.base;

function index(items: Compiled[]): CompiledScope {
  const scope: CompiledScope = { items, at: new Map(), below: new Map(), dirs: [] };
  items.forEach((c, i) => {
    const dirs = selfAndAbove(anchor(c));
    scope.dirs.push(dirs);
    add(scope.at, dirs[dirs.length - 1]!, i);
    for (let k = 0; k < dirs.length - 1; k++) add(scope.below, dirs[k]!, i);
  });
  return scope;
}

const CACHE_LIMIT = 4_096;
const cache = new Map<string, CompiledScope>();
const byList = new WeakMap<readonly string[], CompiledScope>();

/**
 * A claim compiled and indexed, cached by its patterns (a peer's claim is
 * compared again at every request) and by the list itself (a request's own
 * list, compared with every peer in turn).
 */
export function compiledScope(patterns: readonly string[]): CompiledScope {
  let s = byList.get(patterns);
  if (s && s.items.length === patterns.length && s.items.every((c, i) => c.source === patterns[i])) return s;
  const key = patterns.join("\n");
  s = cache.get(key);
  if (!s) {
    if (cache.size >= CACHE_LIMIT) cache.clear();
    s = index(compiledList(patterns));
    cache.set(key, s);
  }
  byList.set(patterns, s);
  return s;
}

const found: number[] = [];

/**
 * The pairs (i of a, j of b) of patterns that overlap, in order of i then j.
 * Two patterns can only share a path when one's anchor (literal, or glob
 * base) lies in the other's, so each pattern of `a` looks up b's patterns
 * anchored along its anchor and below it: no pass over every pair. Two
 * literals so found overlap; any other pair is compared. With a budget,
 * every comparison past it answers "overlap" (past it, a pattern of `a` is
 * paired with the first candidate only).
 */
export function overlapPairs(a: CompiledScope, b: CompiledScope, budget?: Budget): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < a.items.length; i++) {
    const x = a.items[i]!;
    const dirs = a.dirs[i]!;
    found.length = 0;
    for (const dir of dirs) {
      const at = b.at.get(dir);
      if (at) for (const j of at) found.push(j);
    }
    const under = b.below.get(dirs[dirs.length - 1]!);
    if (under) for (const j of under) found.push(j);
    if (!found.length) continue;
    if (budget && budget.steps <= 0) {
      // Out of budget: unsure, so overlapping; one pair says so, at no further cost.
      out.push([i, Math.min(...found)]);
      continue;
    }
    let kept = 0;
    for (const j of found) {
      const y = b.items[j]!;
      if ((x.literal !== null && y.literal !== null) || overlapCompiled(x, y, budget)) found[kept++] = j;
    }
    found.length = kept;
    if (kept > 1) found.sort((p, q) => p - q);
    for (const j of found) out.push([i, j]);
  }
  return out;
}
