import type { Stats, Dirent } from "node:fs";
import { globBase, isGlob, normalizeRepoPath, scopeCovers } from "@cohent/protocol/paths";
import { DIRECT, noteCheckout, OWN_STATE, ownState, type FsView } from "./live.js";

/**
 * The files under held paths: a literal file, a folder walked whole, a glob
 * walked from its literal base and matched with the protocol's matcher
 * (the same scopeCovers the guard uses), bounded in files and entries.
 */

/** Never the held files: Git's and packages' folders, the adapter's session state and marks, and the stash itself. */
function skipped(rel: string): boolean {
  if (rel.startsWith(".cohent/")) {
    if (rel.startsWith(".cohent/runtime.json")) return true;
    if (OWN_STATE.some((d) => rel === `.cohent/${d}` || rel.startsWith(`.cohent/${d}/`))) return true;
  }
  for (const seg of rel.split("/")) if (seg === ".git" || seg === "node_modules") return true;
  return false;
}

/** skipped() for an entry of a folder that it passed. */
const skippedName = (dir: string, name: string): boolean =>
  name === ".git" || name === "node_modules" || (dir === ".cohent" && ownState(name));

/** Valid held paths, normalized and deduplicated, shortest first (a folder walked in full is not walked again below). */
/** The last lists normalized, and their answers: a long-lived guard asks with the same few lists call after call. */
const lastClaims = new Map<string, string[]>();

export function claimsOf(held: readonly string[]): string[] {
  const key = held.join("\0");
  const kept = lastClaims.get(key);
  if (kept) return kept.slice();
  const out = new Set<string>();
  for (const h of held) {
    try {
      out.add(normalizeRepoPath(h));
    } catch {
      /* not a repository path: nothing of it lies in the checkout */
    }
  }
  const sorted = [...out].sort((a, b) => a.length - b.length || (a < b ? -1 : 1));
  if (lastClaims.size >= 4) lastClaims.delete(lastClaims.keys().next().value!);
  lastClaims.set(key, sorted);
  return sorted.slice();
}

export interface Walk {
  files: Map<string, Stats>;
  absent: string[];
  complete: boolean;
}

/** The last walk through a view that promised nothing changed during it (held/live.ts), with that promise. */
let lastWalk: { key: string; version: number; walk: Walk } | null = null;

/**
 * The regular files under the held paths (symbolic links are not followed
 * nor recorded), bounded. In a long-lived guard, while the live view has
 * seen no event since the last walk over the same paths, that walk is the
 * answer: a call then costs what changed, not what is held. The walk
 * returned is shared: callers read it, never change it.
 */
export function walkHeld(
  root: string,
  claims: readonly string[],
  maxFiles: number,
  fs: FsView = DIRECT,
): Walk {
  const v0 = fs.version?.();
  if (v0 === undefined) return walkNow(root, claims, maxFiles, fs);
  noteCheckout(root.endsWith("/") ? root.slice(0, -1) : root);
  const key = `${root}\0${maxFiles}\0${claims.join("\0")}`;
  if (lastWalk?.key === key && lastWalk.version === v0) return lastWalk.walk;
  const walk = walkNow(root, claims, maxFiles, fs);
  lastWalk = fs.version!() === v0 ? { key, version: v0, walk } : null;
  return walk;
}

function walkNow(root: string, claims: readonly string[], maxFiles: number, fs: FsView): Walk {
  // Claims are normalized repository paths and root is absolute: plain concatenation, no path.join per file.
  root = root.endsWith("/") ? root.slice(0, -1) : root;
  const files = new Map<string, Stats>();
  const absent: string[] = [];
  const walked = new Set<string>();
  const maxVisit = maxFiles * 5;
  let visited = 0;
  let complete = true;

  const addFile = (rel: string, st?: Stats) => {
    if (files.has(rel)) return;
    if (files.size >= maxFiles) return void (complete = false);
    st ??= fs.lstat(`${root}/${rel}`);
    if (st?.isFile()) files.set(rel, st);
  };

  // `pattern` null: every file below is held; else only those the glob covers.
  const walkDir = (start: string, pattern: string | null) => {
    const stack: [string, boolean][] = [[start, pattern === null]];
    while (stack.length) {
      const [dir, all] = stack.pop()!;
      if (all) {
        if (walked.has(dir)) continue;
        walked.add(dir);
      }
      let entries: Dirent[];
      try {
        entries = fs.readdir(dir === "" ? root : `${root}/${dir}`);
      } catch {
        continue; // gone, or not a folder
      }
      for (const e of entries) {
        if (++visited > maxVisit || files.size >= maxFiles) return void (complete = false);
        // The walk starts from paths skipped() passed: one entry's name decides (no split per entry).
        if (skippedName(dir, e.name)) continue;
        const rel = dir === "" ? e.name : `${dir}/${e.name}`;
        // Only files held are stat'ed: a glob walk passes most of what it lists.
        if (e.isDirectory()) stack.push([rel, all || scopeCovers([pattern!], rel)]);
        else if (e.isFile() && (all || scopeCovers([pattern!], rel))) addFile(rel);
      }
    }
  };

  // Literal files (and absent paths) first: a folder or glob that fills the bound leaves them in.
  const later: [string, string | null][] = [];
  for (const claim of claims) {
    if (isGlob(claim)) {
      const base = globBase(claim);
      if (!skipped(base)) later.push([base, claim === "**" ? null : claim]);
      continue;
    }
    if (skipped(claim)) continue;
    const st = fs.lstat(`${root}/${claim}`);
    if (!st) absent.push(claim);
    else if (st.isDirectory()) later.push([claim, null]);
    else if (st.isFile()) addFile(claim, st);
  }
  for (const [dir, pattern] of later) walkDir(dir, pattern);
  return { files, absent, complete };
}
