import { ANY_BUT_SLASH, ANYTHING, SLASH_ONLY, type Item, type Ranges } from "./glob-parse.js";

/**
 * A parsed pattern as a Thompson automaton over code points, and the two
 * questions asked of it: does it accept a path (a walk along the path, at
 * most states × characters), and do two automata share a path (a walk over
 * pairs of states, at most the product of their sizes, each pair once). No
 * backtracking and no expansion: `*a*a*a*b`, many `**` and 2^95
 * alternatives all cost what their states cost.
 *
 * Every automaton ends in an optional "/…" tail: a pattern that matches a
 * directory covers what is inside it. Whether the tail is taken is the
 * caller's choice per question.
 *
 * Paths have no empty segments, and an empty alternative can put two
 * slashes side by side ("a/{x,}/b" is "a/x/b" or "a//b", which is "a/b"):
 * a "/" of the pattern right after a "/" of the path is passed over, as
 * minimatch folds "//" (a leading or trailing "/" still matches nothing).
 */

/**
 * Steps a caller allows a series of walks, shared by them: one step a state
 * set entry per character, or a pair of states. A walk that runs out answers
 * "yes" (accepts, continues, intersects): the answer a caller can live with
 * when unsure, since a peer's claim then counts as overlapping.
 */
export interface Budget {
  steps: number;
}

const CHAR = 0;
const SPLIT = 1;
const ACCEPT = 2;

export interface Nfa {
  size: number;
  start: number;
  kind: Uint8Array;
  out1: Int32Array;
  out2: Int32Array;
  /** Per CHAR state: its ranges. */
  sets: (Ranges | null)[];
  /** The pattern's own end, and the end of its "/…" tail. */
  accept: number;
  acceptTail: number;
  /** The tail's first state ("/"): dead unless the tail is taken. */
  tail: number;
  /** States from which `accept` is reachable without the tail (for "could something below this directory match"). */
  live: Uint8Array;
  /** CHAR states that read "/" and nothing else (passed over right after a "/"). */
  slash: Uint8Array;
  /** Per CHAR state, its set's shape: ONE (the range lo..hi), NOT_SLASH, EVERY, or MANY (see `sets`). */
  shape: Uint8Array;
  lo: Int32Array;
  hi: Int32Array;
  /** The literal text every match ends with ("" when none), for a cheap "no"; and it with a "/" after it. */
  suffix: string;
  suffixSlash: string;
  /** Per CHAR state: the set holds "/" / holds something besides "/". */
  hasSlash: Uint8Array;
  hasOther: Uint8Array;
}

const ONE = 0;
const NOT_SLASH = 1;
const EVERY = 2;
const MANY = 3;

export function compileNfa(items: readonly Item[]): Nfa {
  const kind: number[] = [];
  const out1: number[] = [];
  const out2: number[] = [];
  const sets: (Ranges | null)[] = [];
  const add = (k: number, a = -1, b = -1, r: Ranges | null = null) => {
    kind.push(k);
    out1.push(a);
    out2.push(b);
    sets.push(r);
    return kind.length - 1;
  };
  const loop = (r: Ranges, next: number) => {
    const split = add(SPLIT, -1, next);
    out1[split] = add(CHAR, split, -1, r);
    return split;
  };
  const accept = add(ACCEPT);
  const acceptTail = add(ACCEPT);
  const tail = add(CHAR, loop(ANYTHING, acceptTail), -1, SLASH_ONLY);
  const end = add(SPLIT, accept, tail);
  // Built back to front: each item's states lead to `next`.
  const seq = (list: readonly Item[], next: number): number => {
    for (let i = list.length - 1; i >= 0; i--) next = one(list[i]!, next);
    return next;
  };
  const one = (item: Item, next: number): number => {
    switch (item.t) {
      case "ch":
        return add(CHAR, next, -1, item.r);
      case "star":
        return loop(ANY_BUT_SLASH, next);
      case "gsall":
        return loop(ANYTHING, next);
      case "gsmid": {
        const slash = add(CHAR, next, -1, SLASH_ONLY);
        return add(SPLIT, loop(ANYTHING, slash), next);
      }
      case "gsend": {
        const rest = loop(ANYTHING, next);
        return add(CHAR, rest, -1, SLASH_ONLY);
      }
      case "alt":
      case "range": {
        const branches =
          item.t === "alt"
            ? item.alts.map((a) => seq(a, next))
            : item.values().map((v) => seq(literalItems(v), next));
        let entry = branches[branches.length - 1]!;
        for (let i = branches.length - 2; i >= 0; i--) entry = add(SPLIT, branches[i]!, entry);
        return entry;
      }
    }
  };
  const start = seq(items, end);
  const size = kind.length;
  const nfa: Nfa = {
    size,
    start,
    kind: Uint8Array.from(kind),
    out1: Int32Array.from(out1),
    out2: Int32Array.from(out2),
    sets,
    accept,
    acceptTail,
    tail,
    live: new Uint8Array(size).fill(1),
    slash: new Uint8Array(size),
    shape: new Uint8Array(size),
    lo: new Int32Array(size),
    hi: new Int32Array(size).fill(-1),
    hasSlash: new Uint8Array(size),
    hasOther: new Uint8Array(size),
    suffix: literalEnd(items),
    suffixSlash: literalEnd(items) + "/",
  };
  for (let s = 0; s < size; s++) {
    const r = sets[s];
    if (!r) continue;
    if (r.length === 2) {
      nfa.lo[s] = r[0]!;
      nfa.hi[s] = r[1]!;
      nfa.slash[s] = r[0] === 47 && r[1] === 47 ? 1 : 0;
    }
    nfa.shape[s] = r.length === 2 ? ONE : r === ANY_BUT_SLASH ? NOT_SLASH : r === ANYTHING ? EVERY : MANY;
    nfa.hasSlash[s] = inRanges(r, 47) ? 1 : 0;
    nfa.hasOther[s] = meetBesidesSlash(r, ANYTHING) ? 1 : 0;
  }
  // Built back to front from `end`, every state leads to `accept` but the tail's own ("/", its loop, its end).
  for (const t of [tail, out1[tail]!, out1[out1[tail]!]!, acceptTail]) nfa.live[t] = 0;
  return nfa;
}

/** The trailing literal characters of a pattern ("src/**\/*.ts" -> ".ts"). */
function literalEnd(items: readonly Item[]): string {
  let end = "";
  for (let i = items.length - 1; i >= 0; i--) {
    const it = items[i]!;
    if (it.t !== "ch" || it.r.length !== 2 || it.r[0] !== it.r[1]) break;
    end = String.fromCodePoint(it.r[0]!) + end;
  }
  return end;
}

function literalItems(s: string): Item[] {
  const out: Item[] = [];
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    out.push({ t: "ch", r: [cp, cp] });
  }
  return out;
}

function inRanges(r: Ranges, c: number): boolean {
  if (r.length === 2) return r[0]! <= c && c <= r[1]!;
  for (let i = 0; i < r.length; i += 2) {
    if (c < r[i]!) return false;
    if (c <= r[i + 1]!) return true;
  }
  return false;
}

/** Does CHAR state `s` read `c`? */
function reads(nfa: Nfa, s: number, c: number): boolean {
  switch (nfa.shape[s]) {
    case ONE:
      return nfa.lo[s]! <= c && c <= nfa.hi[s]!;
    case NOT_SLASH:
      return c !== 47;
    case EVERY:
      return true;
    default:
      return inRanges(nfa.sets[s]!, c);
  }
}

/** Do CHAR states x of a and y of b read a common character besides "/"? */
function meet(a: Nfa, x: number, b: Nfa, y: number): boolean {
  const sa = a.shape[x]!;
  const sb = b.shape[y]!;
  if (sa === ONE && sb === ONE) {
    const lo = Math.max(a.lo[x]!, b.lo[y]!);
    const hi = Math.min(a.hi[x]!, b.hi[y]!);
    return lo <= hi && (lo !== 47 || hi !== 47);
  }
  if (sa === NOT_SLASH || sa === EVERY) return b.hasOther[y] === 1;
  if (sb === NOT_SLASH || sb === EVERY) return a.hasOther[x] === 1;
  return meetBesidesSlash(a.sets[x]!, b.sets[y]!);
}

/** Do two sets share a character other than "/"? */
function meetBesidesSlash(a: Ranges, b: Ranges): boolean {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const lo = Math.max(a[i]!, b[j]!);
    const hi = Math.min(a[i + 1]!, b[j + 1]!);
    if (lo <= hi && (lo !== 47 || hi !== 47)) return true;
    if (a[i + 1]! < b[j + 1]!) i += 2;
    else j += 2;
  }
  return false;
}

// Scratch space shared by every walk: a stamp per state (or pair) instead of a fresh set each time.
let stamps = new Uint32Array(1024);
let stamp = 0;
let stack = new Int32Array(1024);
function scratch(size: number): void {
  if (stamps.length < size) stamps = new Uint32Array(Math.max(size, stamps.length * 2));
  if (stack.length < size) stack = new Int32Array(Math.max(size, stack.length * 2));
  if (++stamp === 0xffffffff) {
    stamps.fill(0);
    stamp = 1;
  }
}

/** What starting a walk costs, in steps of the budget (setting up costs about as much as a few steps). */
const WALK_SETUP = 4;

// The current and next state sets of a walk along a path.
let cur = new Int32Array(256);
let nxt = new Int32Array(256);

/**
 * Adds the CHAR and ACCEPT states reachable from `s` without reading to
 * `into` after its first `n` entries (stamped); returns the new count.
 * `afterSlash`: the path's last character was "/", so a "/" of the pattern
 * is passed over.
 */
function closure(
  nfa: Nfa,
  s: number,
  tailOk: boolean,
  afterSlash: boolean,
  into: Int32Array,
  n: number,
): number {
  // Most steps land on a state that reads: no walk needed.
  if (nfa.kind[s] !== SPLIT && !(afterSlash && nfa.slash[s]) && s !== nfa.tail) {
    if (stamps[s] !== stamp) {
      stamps[s] = stamp;
      into[n++] = s;
    }
    return n;
  }
  let top = 0;
  stack[top++] = s;
  while (top) {
    const x = stack[--top]!;
    if (stamps[x] === stamp) continue;
    stamps[x] = stamp;
    if (x === nfa.tail && !tailOk) continue;
    if (nfa.kind[x] === SPLIT) {
      stack[top++] = nfa.out2[x]!;
      stack[top++] = nfa.out1[x]!;
    } else if (afterSlash && nfa.slash[x]) stack[top++] = nfa.out1[x]!;
    else into[n++] = x;
  }
  return n;
}

/**
 * Walks `text` (by code points) from the start, with the tail or not:
 * the states reached are `cur[0..n)`, n the returned count (0 when no path
 * continues), -1 when the budget ran out. At most the text's length times
 * the automaton's size steps.
 */
function run(nfa: Nfa, text: string, tailOk: boolean, budget?: Budget): number {
  if (cur.length < nfa.size) {
    cur = new Int32Array(nfa.size * 2);
    nxt = new Int32Array(nfa.size * 2);
  }
  scratch(nfa.size * 2);
  if (budget) budget.steps -= WALK_SETUP;
  let n = closure(nfa, nfa.start, tailOk, false, cur, 0);
  const len = text.length;
  for (let i = 0; i < len && n > 0; i++) {
    let c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < len) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
        i++;
      }
    }
    if (++stamp === 0xffffffff) {
      stamps.fill(0);
      stamp = 1;
    }
    if (budget && (budget.steps -= n) <= 0) return -1;
    let m = 0;
    for (let k = 0; k < n; k++) {
      const st = cur[k]!;
      if (nfa.kind[st] === CHAR && reads(nfa, st, c))
        m = closure(nfa, nfa.out1[st]!, tailOk, c === 47, nxt, m);
    }
    const t = cur;
    cur = nxt;
    nxt = t;
    n = m;
  }
  return n;
}

/** Does the automaton accept `text` (with the "/…" tail: `text` or a directory above it matches)? */
export function accepts(nfa: Nfa, text: string, tailOk: boolean, budget?: Budget): boolean {
  if (text === "" || text.endsWith("/")) return false;
  // Every match ends with the pattern's literal ending: a cheap "no" first.
  const end = nfa.suffix;
  if (end && !text.endsWith(end) && !(tailOk && text.includes(nfa.suffixSlash))) return false;
  if (budget && budget.steps <= 0) return true;
  const n = run(nfa, text, tailOk, budget);
  if (n < 0) return true;
  for (let k = 0; k < n; k++) if (cur[k] === nfa.accept || (tailOk && cur[k] === nfa.acceptTail)) return true;
  return false;
}

/**
 * The automaton against a plain path, in one walk along it: does it match
 * the path or a directory above it, or (`directory`: the path covers what
 * is below it) could it match something below the path?
 */
export function meetsPath(nfa: Nfa, path: string, directory: boolean, budget?: Budget): boolean {
  const end = nfa.suffix;
  const mayCover = path !== "" && (!end || path.endsWith(end) || path.includes(nfa.suffixSlash));
  if (!mayCover && !directory) return false;
  if (budget && budget.steps <= 0) return true;
  const n = run(nfa, path, true, budget);
  if (n < 0) return true;
  if (mayCover)
    for (let k = 0; k < n; k++) if (cur[k] === nfa.accept || cur[k] === nfa.acceptTail) return true;
  if (!directory) return false;
  // Below it: a "/" read by one of the pattern's own states (not its tail's), then anything on to the end.
  if (++stamp === 0xffffffff) {
    stamps.fill(0);
    stamp = 1;
  }
  for (let k = 0; k < n; k++) {
    const st = cur[k]!;
    if (nfa.kind[st] !== CHAR || !nfa.live[st] || !nfa.hasSlash[st]) continue;
    const m = closure(nfa, nfa.out1[st]!, false, true, nxt, 0);
    for (let i = 0; i < m; i++) if (nfa.live[nxt[i]!]) return true;
  }
  return false;
}

/**
 * Do two automata accept a common path? `tailA`/`tailB`: whether each may
 * take its "/…" tail (a pattern that can match a directory covers what is
 * inside it). Walks triples (state of a, state of b, last character was
 * "/"), each at most once: at most 2 × a.size × b.size steps.
 */
export function intersects(a: Nfa, tailA: boolean, b: Nfa, tailB: boolean, budget?: Budget): boolean {
  if (budget && budget.steps <= 0) return true;
  let steps = budget ? budget.steps - WALK_SETUP : Infinity;
  const nb = b.size;
  const limit = a.size * nb * 2;
  scratch(limit);
  if (stack.length < limit) stack = new Int32Array(limit);
  // Each triple is stamped when pushed, so the stack never holds more than `limit` entries.
  const st = stack;
  const seen = stamps;
  const mark = stamp;
  const ka = a.kind;
  const kb = b.kind;
  let top = 0;
  let k = (a.start * nb + b.start) << 1;
  seen[k] = mark;
  st[top++] = k;
  while (top) {
    if (--steps <= 0) {
      budget!.steps = 0;
      return true;
    }
    k = st[--top]!;
    const f = k & 1;
    const xy = k >>> 1;
    const x = (xy / nb) | 0;
    const y = xy - x * nb;
    if ((x === a.tail && !tailA) || (y === b.tail && !tailB)) continue;
    // Up to two successors, pushed below when not yet seen.
    let n1 = -1;
    let n2 = -1;
    if (ka[x] === SPLIT) {
      n1 = ((a.out1[x]! * nb + y) << 1) | f;
      n2 = ((a.out2[x]! * nb + y) << 1) | f;
    } else if (kb[y] === SPLIT) {
      n1 = ((x * nb + b.out1[y]!) << 1) | f;
      n2 = ((x * nb + b.out2[y]!) << 1) | f;
    } else if (f && a.slash[x]) n1 = ((a.out1[x]! * nb + y) << 1) | f;
    else if (f && b.slash[y]) n1 = ((x * nb + b.out1[y]!) << 1) | f;
    else if (ka[x] === ACCEPT || kb[y] === ACCEPT) {
      // A path ends on a character that is not "/".
      const doneA = x === a.accept || (tailA && x === a.acceptTail);
      const doneB = y === b.accept || (tailB && y === b.acceptTail);
      if (doneA && doneB && !f) {
        if (budget) budget.steps = steps;
        return true;
      }
    } else {
      const next = (a.out1[x]! * nb + b.out1[y]!) << 1;
      if (meet(a, x, b, y)) n1 = next;
      if (!f && a.hasSlash[x] && b.hasSlash[y]) n2 = next | 1;
    }
    if (n1 >= 0 && seen[n1] !== mark) {
      seen[n1] = mark;
      st[top++] = n1;
    }
    if (n2 >= 0 && seen[n2] !== mark) {
      seen[n2] = mark;
      st[top++] = n2;
    }
  }
  if (budget) budget.steps = steps;
  return false;
}
