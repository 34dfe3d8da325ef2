import { accepts, intersects, meetsPath, type Budget } from "./glob-nfa.js";
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
  // A directory that holds the glob's base holds all it matches.
  if (!lit.fileLike && within(glob.base, path)) return true;
  return meetsPath(glob.nfa!, path, !lit.fileLike, budget);
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

/** A directory of a claim's anchors (a literal, a degraded pattern's directory, a glob's base), one node a segment. */
interface Node {
  /** Items anchored exactly here. */
  here: number[];
  kids: Map<string, Node> | null;
}

export interface CompiledScope {
  items: Compiled[];
  /** The anchors as a tree of segments: memory linear in the claim, and a walk stops where the paths part. */
  root: Node;
  /** Per item: its anchor's segments ("" has none). */
  segs: string[][];
}

const anchor = (c: Compiled): string => c.literal ?? c.base;
const segments = (path: string): string[] => (path === "" ? [] : path.split("/"));

function index(items: Compiled[], segs = items.map((c) => segments(anchor(c)))): CompiledScope {
  const root: Node = { here: [], kids: null };
  for (let i = 0; i < segs.length; i++) {
    let node = root;
    for (const seg of segs[i]!) {
      node.kids ??= new Map();
      let next = node.kids.get(seg);
      if (!next) node.kids.set(seg, (next = { here: [], kids: null }));
      node = next;
    }
    node.here.push(i);
  }
  return { items, root, segs };
}

/**
 * The items of `s` anchored along `path` (at the root, at each of its
 * directories, at itself) and, with `below`, those anchored below it: the
 * only ones that can share a path with something anchored at `path`. Adds
 * them to `out`; costs one step a node visited, charged to the budget.
 */
export function anchoredAlong(
  s: CompiledScope,
  path: readonly string[],
  below: boolean,
  out: number[],
  budget?: Budget,
): void {
  let node: Node | undefined = s.root;
  let visited = 1;
  for (const i of node.here) out.push(i);
  for (const seg of path) {
    node = node.kids?.get(seg);
    if (!node) break;
    visited++;
    for (const i of node.here) out.push(i);
  }
  if (node && below && node.kids) {
    const todo = [...node.kids.values()];
    while (todo.length) {
      const n = todo.pop()!;
      visited++;
      for (const i of n.here) out.push(i);
      if (n.kids) for (const k of n.kids.values()) todo.push(k);
    }
  }
  if (budget) budget.steps -= visited;
}

const CACHE_LIMIT = 4_096;
/** Compiled claims by their first pattern (a cheap key); the lists are compared pattern by pattern on a hit. */
const cache = new Map<string, CompiledScope[]>();
let cached = 0;
const byList = new WeakMap<readonly string[], CompiledScope>();

const sameList = (s: CompiledScope, patterns: readonly string[]) =>
  s.items.length === patterns.length && s.items.every((c, i) => c.source === patterns[i]);

/**
 * A claim compiled and indexed, cached by its patterns (a peer's claim is
 * compared again at every request, read anew from the database) and by the
 * list itself (a request's own list, compared with every peer in turn).
 */
export function compiledScope(patterns: readonly string[]): CompiledScope {
  let s = byList.get(patterns);
  if (s && sameList(s, patterns)) return s;
  const key = patterns[0] ?? "";
  const bucket = cache.get(key);
  s = bucket?.find((c) => sameList(c, patterns));
  if (!s) {
    if (cached >= CACHE_LIMIT) {
      cache.clear();
      cached = 0;
    }
    s = index(compiledList(patterns));
    const list = cache.get(key) ?? [];
    // Claims sharing a first pattern: a short list, the newest first.
    list.unshift(s);
    if (list.length > 16) list.pop();
    else cached++;
    cache.set(key, list);
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
    found.length = 0;
    anchoredAlong(b, a.segs[i]!, true, found, budget);
    if (!found.length) continue;
    if (budget && budget.steps <= 0) {
      // Out of budget: unsure, so overlapping; one pair says so, at no further cost.
      out.push([i, Math.min(...found)]);
      continue;
    }
    let kept = 0;
    if (budget) budget.steps -= found.length;
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

/**
 * Every pair of claims among `scopes` that overlap, with the pattern pairs
 * they overlap through (indexes: scope a's pattern i, scope b's pattern j),
 * for a < b. One tree of every claim's anchors, so each pattern looks up
 * the few it can meet instead of every claim comparing with every other.
 */
export function overlapsAmong(
  scopes: readonly CompiledScope[],
  budget?: Budget,
): Map<number, Map<number, [number, number][]>> {
  const items: Compiled[] = [];
  const segs: string[][] = [];
  let total = 0;
  for (const s of scopes) total += s.items.length;
  const ownerScope = new Int32Array(total);
  const ownerItem = new Int32Array(total);
  scopes.forEach((s, a) =>
    s.items.forEach((c, i) => {
      ownerScope[items.length] = a;
      ownerItem[items.length] = i;
      items.push(c);
      segs.push(s.segs[i]!);
    }),
  );
  const tree = index(items, segs);
  const out = new Map<number, Map<number, [number, number][]>>();
  const record = (k: number, m: number) => {
    // Oriented as (lower scope, higher scope), each with its own pattern index.
    const [lo, hi] = ownerScope[k]! < ownerScope[m]! ? [k, m] : [m, k];
    const a = ownerScope[lo]!;
    const b = ownerScope[hi]!;
    let row = out.get(a);
    if (!row) out.set(a, (row = new Map()));
    const pairs = row.get(b);
    const pair: [number, number] = [ownerItem[lo]!, ownerItem[hi]!];
    if (pairs) pairs.push(pair);
    else row.set(b, [pair]);
  };
  const near: number[] = [];
  for (let k = 0; k < items.length; k++) {
    // Only along (its directories and its own anchor): a pair whose anchors nest is found once, from the deeper one.
    near.length = 0;
    anchoredAlong(tree, segs[k]!, false, near, budget);
    if (budget && (budget.steps -= near.length) <= 0) return everyPair(scopes);
    const depth = segs[k]!.length;
    for (const m of near) {
      if (ownerScope[m] === ownerScope[k]) continue;
      // Two anchors that are the same path: the pair is seen from both; take it from the lower index.
      if (segs[m]!.length === depth && m < k) continue;
      const x = items[k]!;
      const y = items[m]!;
      if ((x.literal !== null && y.literal !== null) || overlapCompiled(x, y, budget)) record(k, m);
    }
  }
  if (budget && budget.steps <= 0) return everyPair(scopes);
  // Pairs in pattern order, as a claim-against-claim comparison lists them.
  for (const row of out.values())
    for (const pairs of row.values()) pairs.sort((p, q) => p[0] - q[0] || p[1] - q[1]);
  return out;
}

/** Out of budget: unsure, so every two claims overlap, through their first patterns. */
function everyPair(scopes: readonly CompiledScope[]): Map<number, Map<number, [number, number][]>> {
  const out = new Map<number, Map<number, [number, number][]>>();
  for (let a = 0; a < scopes.length; a++) {
    if (!scopes[a]!.items.length) continue;
    const row = new Map<number, [number, number][]>();
    for (let b = a + 1; b < scopes.length; b++) if (scopes[b]!.items.length) row.set(b, [[0, 0]]);
    out.set(a, row);
  }
  return out;
}
