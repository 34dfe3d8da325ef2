import { BOUNDS } from "./bounds.js";
import { compileNfa, type Nfa } from "./glob-nfa.js";
import { parsePattern } from "./glob-parse.js";

/**
 * A pattern ready to compare: a literal (compared as a string) or a glob
 * with its automaton. Compiled once per pattern and kept (a bounded cache:
 * a room's claims are compared again at every request).
 *
 * A pattern that does not fit, a stored claim from before the bounds or from
 * a peer's older adapter, is never matched as written: it stands for its
 * literal base directory, which covers everything the pattern could match
 * (every match begins with it), so the answer can only err towards "overlap".
 */
export interface Compiled {
  /** The pattern as given (folded when the repository is case-insensitive). */
  source: string;
  /** A plain path, compared as a string; for a degraded glob, its base directory ("" is the repository). */
  literal: string | null;
  nfa: Nfa | null;
  /** Literal leading segments of a glob ("src/a" for "src/a/**\/*.ts"); the literal itself for a literal. */
  base: string;
  /**
   * Taken for a file, with nothing below it: a literal whose last segment has
   * an extension ("checkout.ts"); a glob whose last segment ends in a literal
   * one ("*.ts"), when compared with another glob. Never a degraded pattern.
   */
  fileLike: boolean;
  /** Matcher states (0 for a literal). */
  cost: number;
  /** Why the pattern is compared as its base directory instead, or null. */
  degraded: string | null;
}

const FILE_SEGMENT = /^[^.].*\.[A-Za-z0-9]+$/;
const GLOB_SYNTAX = /[*?[\]{}]/;

/** Literal leading segments of a pattern: up to the first segment with any glob syntax. */
export function literalBase(pattern: string): string {
  const segments = pattern.split("/");
  const base: string[] = [];
  for (const s of segments) {
    if (GLOB_SYNTAX.test(s)) break;
    base.push(s);
  }
  return base.join("/");
}

function lastSegmentIsFile(pattern: string): boolean {
  const last = pattern.slice(pattern.lastIndexOf("/") + 1);
  if (!FILE_SEGMENT.test(last)) return false;
  // The extension must be plain text at the end, not inside a class or an alternative.
  const dot = last.lastIndexOf(".");
  return last.lastIndexOf("}") < dot && last.lastIndexOf("]") < dot;
}

/**
 * A literal whose last segment has an extension ("checkout.ts") is taken
 * for a file; any other literal ("app/checkout") for a directory, which
 * covers everything below it.
 */
export function looksLikeFile(literal: string): boolean {
  return FILE_SEGMENT.test(literal.slice(literal.lastIndexOf("/") + 1));
}

function plain(source: string): Compiled {
  return {
    source,
    literal: source,
    nfa: null,
    base: source,
    fileLike: looksLikeFile(source),
    cost: 0,
    degraded: null,
  };
}

function degrade(source: string, why: string): Compiled {
  const base = literalBase(source);
  return { source, literal: base, nfa: null, base, fileLike: false, cost: 0, degraded: why };
}

/** Compiles one normalized pattern. Never throws and never costs more than the bound. */
export function compilePattern(source: string): Compiled {
  if (source.length > BOUNDS.pathChars) return degrade(source, `longer than ${BOUNDS.pathChars} characters`);
  // The whole repository: the directory "" covers every path.
  if (source === "**")
    return { source, literal: "", nfa: null, base: "", fileLike: false, cost: 0, degraded: null };
  // No glob syntax at all: a plain path (an extglob-looking "+(a|b)" without it would degrade to itself anyway).
  if (!GLOB_SYNTAX.test(source)) return plain(source);
  const parsed = parsePattern(source);
  if (parsed.unsupported) return degrade(source, parsed.unsupported);
  if (!parsed.glob) return plain(source);
  if (parsed.states > BOUNDS.pathCost)
    return degrade(source, `costs ${parsed.states} matcher states, over the bound of ${BOUNDS.pathCost}`);
  return {
    source,
    literal: null,
    nfa: compileNfa(parsed.items),
    base: literalBase(source),
    fileLike: lastSegmentIsFile(source),
    cost: parsed.states,
    degraded: null,
  };
}

// A room of 200 claims of 64 patterns is 12,800 patterns; the cache holds a few such rooms.
const CACHE_LIMIT = 65_536;
const cache = new Map<string, Compiled>();

/** `compilePattern`, cached by pattern (the cache starts over when full: memory, not state). */
export function compiled(pattern: string): Compiled {
  let c = cache.get(pattern);
  if (!c) {
    if (cache.size >= CACHE_LIMIT) cache.clear();
    c = compilePattern(pattern);
    cache.set(pattern, c);
  }
  return c;
}

/**
 * A whole claim's patterns compiled. When they together cost more than a
 * request may (a claim stored before the bounds), the costliest stand for
 * their base directories until the rest fits.
 */
export function compiledList(patterns: readonly string[]): Compiled[] {
  const out = patterns.map(compiled);
  let total = 0;
  for (const c of out) total += c.cost;
  if (total <= BOUNDS.pathsCost) return out;
  const order = out.map((_, i) => i).sort((a, b) => out[b]!.cost - out[a]!.cost || a - b);
  for (const i of order) {
    if (total <= BOUNDS.pathsCost) break;
    total -= out[i]!.cost;
    out[i] = degrade(
      out[i]!.source,
      `the claim's patterns together cost over the bound of ${BOUNDS.pathsCost}`,
    );
  }
  return out;
}
