import { minimatch, type MinimatchOptions } from "minimatch";
import { BOUNDS } from "./bounds.js";
import { CohentError } from "./codes.js";

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

/** Normalizes a list, dropping duplicates and keeping the first-seen order. */
export function normalizeRepoPaths(raw: readonly string[], repoRoot?: string): string[] {
  return [...new Set(raw.map((p) => normalizeRepoPath(p, repoRoot)))];
}

export interface MatchOptions {
  caseInsensitive?: boolean;
}

function mmOptions(opts: MatchOptions, partial = false): MinimatchOptions {
  return { dot: true, nocase: !!opts.caseInsensitive, partial };
}

function fold(p: string, opts: MatchOptions): string {
  return opts.caseInsensitive ? p.toLowerCase() : p;
}

/** Literal leading segments of a glob: "src/a/**\/*.ts" -> "src/a". */
export function globBase(pattern: string): string {
  const segments = pattern.split("/");
  const base: string[] = [];
  for (const s of segments) {
    if (isGlob(s)) break;
    base.push(s);
  }
  return base.join("/");
}

/** `path` equals `dir` or lies below it. An empty dir is the repository root. */
function within(path: string, dir: string): boolean {
  return dir === "" || path === dir || path.startsWith(dir + "/");
}

/** Does the scope pattern cover the concrete path `target`? */
export function covers(pattern: string, target: string, opts: MatchOptions = {}): boolean {
  const p = fold(pattern, opts);
  const t = fold(target, opts);
  if (!isGlob(p)) return within(t, p);
  return minimatch(t, p, mmOptions(opts)) || minimatch(t, p + "/**", mmOptions(opts));
}

/** Is `target` covered by any pattern of a declared scope? */
export function scopeCovers(scope: readonly string[], target: string, opts: MatchOptions = {}): boolean {
  return scope.some((p) => covers(p, target, opts));
}

/** Literal chunks of a pattern ("*.spec.ts" -> ".spec.ts"), used to build witnesses. */
function literalChunks(pattern: string): string[] {
  return pattern
    .split(/[*?/]|\[[^\]]*\]|[{},]/)
    .filter((c) => c.length > 0 && !c.includes("[") && !c.includes("]"));
}

const MAX_WITNESSES = 512;

/**
 * Concrete paths that `pattern` matches, shaped towards `other` so that a
 * shared match is likely to be among them when one exists: each `*` is
 * filled with "x" or a literal chunk of the other pattern (".spec.ts"), and
 * each `**` with nothing, one segment, or the rest of the other's base.
 */
function witnesses(pattern: string, other: string): string[] {
  const fillers = ["x", ...literalChunks(other).flatMap((c) => [c, "x" + c, c + "x"])].slice(0, 16);
  const otherBase = globBase(other);
  const out = new Set<string>();
  for (const expanded of minimatch.braceExpand(pattern)) {
    const segments = expanded.split("/");
    const globstars = segments.filter((s) => s === "**").length;
    const choices = Math.min(3 ** globstars, 81);
    for (const filler of fillers) {
      for (let mask = 0; mask < choices; mask++) {
        let m = mask;
        const parts: string[] = [];
        for (const s of segments) {
          if (s === "**") {
            const pick = m % 3;
            m = Math.floor(m / 3);
            const prefix = parts.join("/");
            if (pick === 1) parts.push("x");
            if (pick === 2 && otherBase.startsWith(prefix ? prefix + "/" : "")) {
              parts.push(
                ...otherBase
                  .slice(prefix ? prefix.length + 1 : 0)
                  .split("/")
                  .filter(Boolean),
              );
            }
            continue;
          }
          parts.push(
            s
              .replace(/\[!?\^?([^\]])[^\]]*\]/g, (_all, first: string) => first)
              .replace(/\*+/g, filler)
              .replace(/\?/g, "x"),
          );
        }
        out.add(parts.filter(Boolean).join("/"));
        if (out.size >= MAX_WITNESSES) return [...out];
      }
    }
  }
  return [...out];
}

/**
 * A literal whose last segment has an extension ("checkout.ts") is taken
 * for a file; any other literal ("app/checkout") for a directory, which
 * covers everything below it.
 */
export function looksLikeFile(literal: string): boolean {
  const last = literal.slice(literal.lastIndexOf("/") + 1);
  return /^[^.].*\.[A-Za-z0-9]+$/.test(last);
}

/**
 * Do two scope patterns share a path? Exact for literals and directory
 * prefixes, and for a literal against a glob (minimatch's partial match
 * answers "could something under this directory match"). Two globs
 * overlap when a witness path of one matches the other.
 */
export function patternsOverlap(a: string, b: string, opts: MatchOptions = {}): boolean {
  const x = fold(a, opts);
  const y = fold(b, opts);
  const gx = isGlob(x);
  const gy = isGlob(y);
  if (!gx && !gy) return within(x, y) || within(y, x);
  if (!gx || !gy) {
    const [lit, glob] = gx ? [y, x] : [x, y];
    const asFile = looksLikeFile(lit);
    return (
      minimatch(lit, glob, mmOptions(opts)) ||
      // a directory: could the glob match something below it, or does the glob lie inside it?
      (!asFile && (minimatch(lit, glob, mmOptions(opts, true)) || within(globBase(glob), lit))) ||
      // the glob matches a directory above `lit`, which covers it
      lit
        .split("/")
        .some(
          (_, i, all) =>
            i < all.length - 1 && minimatch(all.slice(0, i + 1).join("/"), glob, mmOptions(opts)),
        )
    );
  }
  const bx = globBase(x);
  const by = globBase(y);
  if (!within(bx, by) && !within(by, bx)) return false;
  const matches = (path: string, glob: string) => minimatch(path, glob, mmOptions(opts));
  return witnesses(x, y).some((w) => matches(w, y)) || witnesses(y, x).some((w) => matches(w, x));
}

/** The pairs of patterns through which two scopes overlap; empty when they do not. */
export function scopeOverlap(
  mine: readonly string[],
  theirs: readonly string[],
  opts: MatchOptions = {},
): { mine: string; theirs: string }[] {
  const pairs: { mine: string; theirs: string }[] = [];
  for (const m of mine)
    for (const t of theirs) if (patternsOverlap(m, t, opts)) pairs.push({ mine: m, theirs: t });
  return pairs;
}
