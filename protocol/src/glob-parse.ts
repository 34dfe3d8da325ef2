/**
 * Scope patterns, parsed without expanding anything. The supported syntax:
 * `*` (within a segment), `**` (a whole segment as written: any number of
 * segments, none included), `?`, classes `[abc]` `[a-z]` `[!…]` `[^…]`,
 * alternatives `{a,b}` (nested, may contain `/`), and ranges `{1..9}`,
 * `{01..10}`, `{1..9..2}`, `{a..e}`. Everything else is a literal character.
 * Extglobs (`+(…)`, `@(…)`, `!(…)`, `*(…)`, `?(…)`) and POSIX classes
 * (`[[:alpha:]]`) are not supported: a scope needs neither.
 *
 * Parsing is linear in the pattern's length: braces are matched in one pass,
 * and an alternative's cost is the sum of its branches, never their product.
 * Pure and zod-free: the hook bundle imports it.
 */

/** Characters one matcher step accepts: sorted, merged code-point ranges [lo, hi, lo, hi, …]. */
export type Ranges = readonly number[];

export type Item =
  /** One character from a set (a literal, `?`, a class, `/`). */
  | { t: "ch"; r: Ranges }
  /** `*`: any characters but `/`. */
  | { t: "star" }
  /** `**` followed by `/`: nothing, or anything ending with `/` (zero or more whole segments). */
  | { t: "gsmid" }
  /** `/**` at the end: `/` and anything after it. */
  | { t: "gsend" }
  /** `**` as the whole pattern, or after a globstar that took the slash: anything. */
  | { t: "gsall" }
  | { t: "alt"; alts: Item[][] }
  /** A range, kept unexpanded: `count` values of at most `width` characters. */
  | { t: "range"; values: () => string[]; count: number; width: number };

export interface Parsed {
  items: Item[];
  /** Matcher states the pattern compiles to (see `cost` in paths-cost.ts). */
  states: number;
  /** Any wildcard, class, alternative or range: not a plain path. */
  glob: boolean;
  /** Why the pattern is outside the supported syntax, or null. */
  unsupported: string | null;
}

const MAX_CODE_POINT = 0x10ffff;
const SLASH = 47;
export const ANY_BUT_SLASH: Ranges = [0, SLASH - 1, SLASH + 1, MAX_CODE_POINT];
export const ANYTHING: Ranges = [0, MAX_CODE_POINT];
export const SLASH_ONLY: Ranges = [SLASH, SLASH];

/** Sorts and merges [lo, hi] pairs, removing `/` (a class never matches it); negated: the complement. */
function normalizeRanges(pairs: number[], negated: boolean): number[] {
  const spans: [number, number][] = [];
  for (let i = 0; i < pairs.length; i += 2)
    if (pairs[i]! <= pairs[i + 1]!) spans.push([pairs[i]!, pairs[i + 1]!]);
  spans.sort((a, b) => a[0] - b[0]);
  const merged: number[] = [];
  for (const [lo, hi] of spans) {
    const last = merged.length - 1;
    if (last > 0 && lo <= merged[last]! + 1) merged[last] = Math.max(merged[last]!, hi);
    else merged.push(lo, hi);
  }
  let out = merged;
  if (negated) {
    out = [];
    let from = 0;
    for (let i = 0; i < merged.length; i += 2) {
      if (merged[i]! > from) out.push(from, merged[i]! - 1);
      from = merged[i + 1]! + 1;
    }
    if (from <= MAX_CODE_POINT) out.push(from, MAX_CODE_POINT);
  }
  // Take "/" out.
  const result: number[] = [];
  for (let i = 0; i < out.length; i += 2) {
    const lo = out[i]!;
    const hi = out[i + 1]!;
    if (lo <= SLASH && SLASH <= hi) {
      if (lo < SLASH) result.push(lo, SLASH - 1);
      if (hi > SLASH) result.push(SLASH + 1, hi);
    } else result.push(lo, hi);
  }
  return result;
}

interface ClassSpan {
  end: number;
  r: Ranges;
}

const cpAt = (p: string, i: number): number => p.codePointAt(i)!;
const cpLen = (cp: number): number => (cp > 0xffff ? 2 : 1);

/**
 * A class starting at `i` ("["), or null when the "[" is a literal: no
 * closing "]" in the same segment. A POSIX class inside is reported.
 */
function parseClass(p: string, i: number): ClassSpan | "posix" | null {
  let j = i + 1;
  let negated = false;
  if (p[j] === "!" || p[j] === "^") {
    negated = true;
    j++;
  }
  const pairs: number[] = [];
  let first = true;
  while (j < p.length) {
    const c = cpAt(p, j);
    if (c === SLASH) return null;
    if (c === 93 /* ] */ && !first) return { end: j + 1, r: normalizeRanges(pairs, negated) };
    if (c === 91 /* [ */ && p[j + 1] === ":" && /^\[:[a-z]+:\]/.test(p.slice(j, j + 12))) return "posix";
    let hi = c;
    j += cpLen(c);
    if (p[j] === "-" && j + 1 < p.length && p[j + 1] !== "]") {
      hi = cpAt(p, j + 1);
      if (hi === SLASH) return null;
      j += 1 + cpLen(hi);
    }
    pairs.push(c, hi); // a reversed range (z-a) matches nothing
    first = false;
  }
  return null;
}

const NUMERIC = /^(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?$/;
const ALPHA = /^([a-zA-Z])\.\.([a-zA-Z])(?:\.\.(-?\d+))?$/;
const PADDED = /^-?0\d/;

/** A `{x..y[..step]}` body, counted without expanding it (brace-expansion's rules: zero-padding, descending ranges). */
function parseRange(body: string): Item | null {
  const n = NUMERIC.exec(body);
  const a = n ? null : ALPHA.exec(body);
  const m = n ?? a;
  if (!m) return null;
  const from = n ? Number(m[1]) : m[1]!.charCodeAt(0);
  const to = n ? Number(m[2]) : m[2]!.charCodeAt(0);
  const step = Math.max(Math.abs(Number(m[3] ?? 1)), 1);
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || !Number.isSafeInteger(step)) return null;
  const count = Math.floor(Math.abs(to - from) / step) + 1;
  const pad = n && (PADDED.test(m[1]!) || PADDED.test(m[2]!)) ? Math.max(m[1]!.length, m[2]!.length) : 0;
  const width = n ? Math.max(String(from).length, String(to).length, pad) : 1;
  const values = () => {
    const out: string[] = [];
    const dir = to >= from ? step : -step;
    for (let v = from, k = 0; k < count; v += dir, k++) {
      if (!n) {
        out.push(String.fromCharCode(v));
        continue;
      }
      let s = String(Math.abs(v));
      if (s.length < pad - (v < 0 ? 1 : 0)) s = "0".repeat(pad - (v < 0 ? 1 : 0) - s.length) + s;
      out.push(v < 0 ? "-" + s : s);
    }
    return out;
  };
  return { t: "range", values, count, width };
}

/** The states an item compiles to (kept in step with glob-nfa.ts). */
export function itemStates(item: Item): number {
  switch (item.t) {
    case "ch":
      return 1;
    case "star":
    case "gsall":
      return 2;
    case "gsmid":
    case "gsend":
      return 4;
    case "alt":
      return item.alts.reduce((s, a) => s + a.reduce((x, i) => x + itemStates(i), 0), 0) + item.alts.length;
    case "range":
      return item.count * (item.width + 1);
  }
}

/** Parses one normalized pattern (repository-relative, "/"-separated). Never throws. */
export function parsePattern(p: string): Parsed {
  const n = p.length;
  // Pass 1: classes, left to right; braces inside a class are its members.
  const classes = new Map<number, ClassSpan>();
  let unsupported: string | null = null;
  for (let i = 0; i < n; i++) {
    if (p[i] !== "[") continue;
    const c = parseClass(p, i);
    if (c === "posix") {
      unsupported =
        "POSIX character classes ([[:alpha:]]) are not supported; write the characters, e.g. [a-z]";
      continue;
    }
    if (c) {
      classes.set(i, c);
      i = c.end - 1;
    }
  }
  // Pass 2: braces, with a stack. A pair with a top-level comma is an alternative, one with a range body a
  // range; any other pair, and an unmatched brace, is literal.
  const close = new Map<number, number>();
  const commas = new Map<number, number[]>();
  const stack: number[] = [];
  for (let i = 0; i < n; i++) {
    const cls = classes.get(i);
    if (cls) {
      i = cls.end - 1;
      continue;
    }
    const ch = p[i];
    if (ch === "{") {
      stack.push(i);
      commas.set(i, []);
    } else if (ch === "," && stack.length) commas.get(stack[stack.length - 1]!)!.push(i);
    else if (ch === "}" && stack.length) close.set(stack.pop()!, i);
  }
  let glob = classes.size > 0;

  const parse = (from: number, to: number): Item[] => {
    const items: Item[] = [];
    const push = (item: Item) => {
      // `**` and `*` side by side are one `*`; two `*` items are one.
      if (item.t === "star" && items[items.length - 1]?.t === "star") return;
      items.push(item);
    };
    let i = from;
    while (i < to) {
      const cls = classes.get(i);
      if (cls) {
        push({ t: "ch", r: cls.r });
        i = cls.end;
        continue;
      }
      const ch = p[i]!;
      const end = close.get(i);
      if (ch === "{" && end !== undefined) {
        const cs = commas.get(i)!;
        if (cs.length) {
          const bounds = [i, ...cs, end];
          const alts: Item[][] = [];
          for (let k = 0; k + 1 < bounds.length; k++) alts.push(parse(bounds[k]! + 1, bounds[k + 1]!));
          push({ t: "alt", alts });
          glob = true;
          i = end + 1;
          continue;
        }
        const range = parseRange(p.slice(i + 1, end));
        if (range) {
          push(range);
          glob = true;
          i = end + 1;
          continue;
        }
      }
      if (ch === "*") {
        let j = i;
        while (p[j] === "*") j++;
        if (p[j] === "(")
          unsupported ??= "extglob patterns (*(…), +(…), ?(…), @(…), !(…)) are not supported; use {a,b}";
        glob = true;
        const segment = (i === 0 || p[i - 1] === "/") && (j === n || p[j] === "/");
        const whole = j - i >= 2 && segment;
        if (!whole && segment) {
          // A "*" segment is not empty ("a/*/b" does not match "a/b").
          push({ t: "ch", r: ANY_BUT_SLASH });
          push({ t: "star" });
        } else if (!whole) push({ t: "star" });
        else if (j < n) {
          items.push({ t: "gsmid" });
          j++; // the globstar takes its slash
        } else if (items.length && items[items.length - 1]!.t === "ch" && p[i - 1] === "/") {
          items.pop(); // the "/" before it: "a/**" is "a" then "/…"
          items.push({ t: "gsend" });
        } else items.push({ t: "gsall" });
        i = j;
        continue;
      }
      if ((ch === "?" || ch === "+" || ch === "@" || ch === "!") && p[i + 1] === "(")
        unsupported ??= "extglob patterns (*(…), +(…), ?(…), @(…), !(…)) are not supported; use {a,b}";
      if (ch === "?") {
        push({ t: "ch", r: ANY_BUT_SLASH });
        glob = true;
        i++;
        continue;
      }
      const cp = cpAt(p, i);
      push({ t: "ch", r: [cp, cp] });
      i += cpLen(cp);
    }
    return items;
  };
  const items = parse(0, n);
  const states = items.reduce((s, it) => s + itemStates(it), 0);
  return { items, states, glob, unsupported };
}
