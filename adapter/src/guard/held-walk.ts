import type { Stats, Dirent } from "node:fs";
import { globBase, isGlob, normalizeRepoPath, scopeCovers } from "@cohent/protocol/paths";
import { DIRECT, type FsView } from "./held-live.js";

/**
 * The files under held paths: a literal file, a folder walked whole, a glob
 * walked from its literal base and matched with the protocol's matcher
 * (the same scopeCovers the guard uses), bounded in files and entries.
 */

/** The adapter's own per-machine state under .cohent/: written while a call runs, never by it. */
const OWN_STATE = ["held", "spawn-free"];

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
function skippedName(dir: string, name: string): boolean {
  if (name === ".git" || name === "node_modules") return true;
  return dir === ".cohent" && (name.startsWith("runtime.json") || OWN_STATE.includes(name));
}

/** Valid held paths, normalized and deduplicated, shortest first (a folder walked in full is not walked again below). */
/** The last list normalized, and its answer: a long-lived guard asks with the same claims call after call. */
let lastClaims: { key: string; out: string[] } | null = null;

export function claimsOf(held: readonly string[]): string[] {
  const key = held.join("\0");
  if (lastClaims?.key === key) return lastClaims.out.slice();
  const out = new Set<string>();
  for (const h of held) {
    try {
      out.add(normalizeRepoPath(h));
    } catch {
      /* not a repository path: nothing of it lies in the checkout */
    }
  }
  const sorted = [...out].sort((a, b) => a.length - b.length || (a < b ? -1 : 1));
  lastClaims = { key, out: sorted };
  return sorted.slice();
}

export interface Walk {
  files: Map<string, Stats>;
  absent: string[];
  complete: boolean;
}

/** The regular files under the held paths (symbolic links are not followed nor recorded), bounded. */
export function walkHeld(
  root: string,
  claims: readonly string[],
  maxFiles: number,
  fs: FsView = DIRECT,
): Walk {
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
