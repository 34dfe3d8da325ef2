/**
 * Repository paths for the adapter, without zod or minimatch: the hook
 * starts on every tool call, so it carries only what it needs. Semantics
 * follow protocol/src/paths.ts (minimatch with dot:true); the unit test
 * compares the two on a table.
 */

const GLOB_CHARS = /[*?[\]{}]/;
const WINDOWS_ABSOLUTE = /^[A-Za-z]:\//;
export const PATH_CHARS = 512;

export class PathError extends Error {
  readonly code = "INVALID_PATH";
}

export function isGlob(path: string): boolean {
  return GLOB_CHARS.test(path);
}

function invalid(raw: string, why: string): PathError {
  return new PathError(`Invalid path ${JSON.stringify(raw.slice(0, 80))}: ${why}.`);
}

/** Repository-relative POSIX form; absolute paths must lie inside repoRoot. The whole repository is "**". */
export function normalizeRepoPath(raw: string, repoRoot?: string): string {
  if (typeof raw !== "string" || raw.trim() === "") throw invalid(String(raw), "empty path");
  if (raw.includes("\0")) throw invalid(raw, "contains a NUL byte");
  if (raw.length > PATH_CHARS) throw invalid(raw, `longer than ${PATH_CHARS} characters`);
  let p = raw.replace(/\\/g, "/");
  if (p.startsWith("!")) throw invalid(raw, "negated patterns are not scopes");
  if (p.startsWith("/") || WINDOWS_ABSOLUTE.test(p)) {
    const root = repoRoot?.replace(/\\/g, "/").replace(/\/+$/, "");
    if (!root) throw invalid(raw, "absolute paths must be inside the repository");
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
  return out.length === 0 ? "**" : out.join("/");
}

/** "{a,b}c" -> ["ac", "bc"], nested braces included. */
export function braceExpand(pattern: string): string[] {
  let depth = 0;
  let start = -1;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "{") {
      if (depth++ === 0) start = i;
    } else if (c === "}" && depth > 0 && --depth === 0) {
      const body = pattern.slice(start + 1, i);
      const options: string[] = [];
      let level = 0;
      let from = 0;
      for (let j = 0; j < body.length; j++) {
        if (body[j] === "{") level++;
        else if (body[j] === "}") level--;
        else if (body[j] === "," && level === 0) {
          options.push(body.slice(from, j));
          from = j + 1;
        }
      }
      options.push(body.slice(from));
      if (options.length < 2) continue;
      const head = pattern.slice(0, start);
      const tail = pattern.slice(i + 1);
      return options.flatMap((o) => braceExpand(head + o + tail));
    }
  }
  return [pattern];
}

function segmentRegex(seg: string): string {
  let out = "";
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i]!;
    if (c === "*") {
      while (seg[i + 1] === "*") i++;
      out += "[^/]*";
    } else if (c === "?") out += "[^/]";
    else if (c === "[") {
      const end = seg.indexOf("]", i + 2);
      if (end === -1) {
        out += "\\[";
        continue;
      }
      let body = seg.slice(i + 1, end);
      const negate = body.startsWith("!") || body.startsWith("^");
      if (negate) body = body.slice(1);
      out += `[${negate ? "^/" : ""}${body.replace(/\\/g, "\\\\").replace(/\]/g, "\\]")}]`;
      i = end;
    } else out += c.replace(/[.+^${}()|\\\]]/g, "\\$&");
  }
  return out;
}

const cache = new Map<string, RegExp>();

/** A minimatch-compatible (dot:true) regular expression for one glob. */
export function globRegex(pattern: string, caseInsensitive = false): RegExp {
  const key = (caseInsensitive ? "i:" : "s:") + pattern;
  const hit = cache.get(key);
  if (hit) return hit;
  const alternatives = braceExpand(pattern).map((p) => {
    const parts = p.split("/");
    let out = "";
    parts.forEach((seg, i) => {
      const last = i === parts.length - 1;
      if (seg === "**") {
        if (i === 0) out += last ? ".*" : "(?:[^/]+/)*";
        else out += last ? "(?:/[^/]+)+" : "(?:/[^/]+)*";
        return;
      }
      if (i > 0 && !(i === 1 && parts[0] === "**")) out += "/";
      out += segmentRegex(seg);
    });
    return out;
  });
  const re = new RegExp(`^(?:${alternatives.join("|")})$`, caseInsensitive ? "i" : "");
  cache.set(key, re);
  return re;
}

function within(path: string, dir: string): boolean {
  return dir === "" || dir === "**" || path === dir || path.startsWith(dir + "/");
}

/** Does one scope pattern cover the concrete path `target`? A literal covers everything below it. */
export function covers(pattern: string, target: string, caseInsensitive = false): boolean {
  const p = caseInsensitive ? pattern.toLowerCase() : pattern;
  const t = caseInsensitive ? target.toLowerCase() : target;
  if (!isGlob(p)) return within(t, p);
  return globRegex(p).test(t) || globRegex(p + "/**").test(t);
}

export function scopeCovers(scope: readonly string[], target: string, caseInsensitive = false): boolean {
  return scope.some((p) => covers(p, target, caseInsensitive));
}
