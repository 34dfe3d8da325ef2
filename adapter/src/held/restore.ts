import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  writeFileSync,
  type Stats,
} from "node:fs";
import { basename, dirname, isAbsolute, join, relative, sep } from "node:path";
import { normalizeRepoPath, scopeCovers } from "@cohent/protocol/paths";
import { readJournal, updateJournal, type Catch } from "./catches.js";
import { DEFAULT_MAX_BYTES, statKey, type HeldChange } from "./snapshot.js";
import { getObject, lstatQuiet, removeQuietly, sha256, stashDir } from "./stash.js";
import { merge3 } from "./merge3.js";

/**
 * `restore`: puts back what a caught call changed, as it was before the
 * call. A file edited since the catch (most often by its holder, over the
 * caught bytes) is not lost: that edit is merged over the bytes put back
 * (held/merge3.ts: base = as the call left it, ours = before it, theirs = now)
 * where it does not touch the call's change; otherwise the file goes back
 * as before the call and the edited version is kept in the stash
 * (kept/<catch>/<path>, never in the work tree, where it could be
 * committed, built or caught as a write), and the message says which, per
 * file, and where. Never throws.
 */

export interface RestoreResult {
  /** Every file put back (plain, merged, or with its edited version kept). */
  restored: string[];
  /** Files whose edit since the catch was merged over the bytes put back. */
  merged: string[];
  /** Files whose version at the restore was kept in the stash, with where (relative to the checkout when inside it). */
  kept: { path: string; at: string }[];
  notRestorable: string[];
  message: string;
}

type Outcome =
  | { ok: true; how: "restored" }
  | { ok: true; how: "merged"; kept: string }
  /** Back as before the call; the edited version kept (null: it had been deleted since), and why no merge. */
  | { ok: true; how: "replaced"; kept: string | null; why: string }
  | { ok: false; why: string };

/** The file as it is: null when absent, "not a file" for a folder or a link, else its stat. */
function current(abs: string): Stats | "not a file" | null {
  const st = lstatQuiet(abs);
  return st ? (st.isFile() ? st : "not a file") : null;
}

function readQuiet(abs: string): Buffer | null {
  try {
    return readFileSync(abs);
  } catch {
    return null;
  }
}

/** Is a present file still as the caught call left it (`after`: its hash, or its stat past the bound)? */
function unchangedSince(bytes: Buffer | null, st: Stats, after: string | null): boolean {
  if (after === null) return false;
  if (after.startsWith("stat:")) return after === `stat:${statKey(st)}`;
  return bytes !== null && after === `sha256:${sha256(bytes)}`;
}

/**
 * Does the file's folder lie in the checkout? A folder replaced since by a
 * link to elsewhere must not make restore write or remove outside it.
 */
function insideCheckout(root: string, abs: string): boolean {
  try {
    const top = realpathSync(root);
    let dir = dirname(abs);
    while (!existsSync(dir) && dir !== dirname(dir)) dir = dirname(dir); // a deleted folder: its nearest parent
    const real = realpathSync(dir);
    return real === top || real.startsWith(top + sep);
  } catch {
    return false;
  }
}

/** Where a kept file is shown: relative to the checkout when inside it (the stash in .git/), else absolute. */
function shown(root: string, abs: string): string {
  const rel = relative(root, abs);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel.split(sep).join("/") : abs;
}

/** Keeps a file's version at the restore under kept/<catch>/<path> (a second, different one gets ".2"…); null when it cannot. */
function keepVersion(root: string, dir: string, id: string, path: string, bytes: Buffer): string | null {
  const base = join(dir, "kept", id, path);
  try {
    mkdirSync(dirname(base), { recursive: true });
    for (let n = 1; n < 100; n++) {
      const file = n === 1 ? base : `${base}.${n}`;
      const there = readQuiet(file);
      if (there?.equals(bytes)) return shown(root, file);
      if (there) continue;
      writeFileSync(file, bytes, { flag: "wx" });
      return shown(root, file);
    }
  } catch {
    /* not kept */
  }
  return null;
}

/**
 * Writes `bytes` over `abs` atomically, mode kept. `expect`: the bytes the
 * file must still hold (an edit landing meanwhile is not overwritten).
 */
function writeOver(abs: string, bytes: Buffer, mode: number, expect: Buffer | null): string | null {
  const tmp = join(dirname(abs), `.${basename(abs)}.cohent-restore-${process.pid}.tmp`);
  try {
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(tmp, bytes, { mode });
    chmodSync(tmp, mode); // writeFileSync's mode is masked by the umask
    if (expect && !readQuiet(abs)?.equals(expect)) {
      removeQuietly(tmp);
      return "changed again while being restored";
    }
    renameSync(tmp, abs);
    return null;
  } catch (err) {
    removeQuietly(tmp);
    return `could not be written (${(err as NodeJS.ErrnoException).code ?? "error"})`;
  }
}

const NO_MERGE: Record<string, string> = {
  conflict: "that edit touches the lines the caught call changed",
  binary: "it is not text",
  "too-different": "it differs too much to merge line by line",
};

/** Puts one file back as it was before the caught call (see the module comment). */
function restoreOne(root: string, dir: string, c: Catch, ch: HeldChange, force: boolean): Outcome {
  const abs = join(root, ch.path);
  if (!insideCheckout(root, abs)) return { ok: false, why: "its folder now leads outside the checkout" };
  const now = current(abs);
  if (now === "not a file") return { ok: false, why: "is no longer a file" };
  const theirs = now === null ? null : readQuiet(abs);
  if (now !== null && theirs === null) return { ok: false, why: "could not be read" };
  const asLeft = now === null ? ch.after === null : unchangedSince(theirs, now, ch.after);
  if (ch.change === "created") {
    if (now === null) return { ok: true, how: "restored" }; // already gone
    if (asLeft)
      return removeQuietly(abs) ? { ok: true, how: "restored" } : { ok: false, why: "could not be removed" };
    const kept = keepVersion(root, dir, c.id, ch.path, theirs!);
    if (!kept) return { ok: false, why: "edited since the catch, and that version could not be kept" };
    if (!removeQuietly(abs)) return { ok: false, why: "could not be removed" };
    return { ok: true, how: "replaced", kept, why: "the caught call had created it" };
  }
  if (!ch.before) return { ok: false, why: "its bytes were past the snapshot's bound, so not kept" };
  if (theirs && sha256(theirs) === ch.before) return { ok: true, how: "restored" }; // already as before
  const bytes = getObject(dir, ch.before);
  if (!bytes) return { ok: false, why: "its bytes are no longer in the stash" };
  const mode = now ? now.mode & 0o7777 : (ch.mode ?? 0o644);
  const put = (data: Buffer, out: Outcome): Outcome => {
    const failed = writeOver(abs, data, mode, theirs);
    return failed ? { ok: false, why: failed } : out;
  };
  if (asLeft) return put(bytes, { ok: true, how: "restored" });
  // Deleted since the catch: nothing later to keep.
  if (theirs === null) return put(bytes, { ok: true, how: "replaced", kept: null, why: "" });
  // Edited since the catch: that version is kept first, whatever comes next.
  const kept = keepVersion(root, dir, c.id, ch.path, theirs);
  if (!kept) return { ok: false, why: "edited since the catch, and that version could not be kept" };
  const replaced = (why: string) => put(bytes, { ok: true, how: "replaced", kept, why });
  if (force) return replaced("a restore was forced");
  // The call's deletion left an empty base: anything in the file now was written since.
  const base =
    ch.change === "deleted"
      ? Buffer.alloc(0)
      : ch.after?.startsWith("sha256:")
        ? getObject(dir, ch.after.slice("sha256:".length))
        : null;
  if (!base)
    return replaced("the bytes the caught call left were not kept, so there is nothing to merge against");
  if (theirs.length > DEFAULT_MAX_BYTES) return replaced("it is too large to merge");
  const m = merge3(base, bytes, theirs);
  if (!m.clean) return replaced(NO_MERGE[m.why]!);
  return put(m.bytes, { ok: true, how: "merged", kept });
}

const listed = (paths: string[]) =>
  paths.slice(0, 20).join(", ") + (paths.length > 20 ? ` and ${paths.length - 20} more` : "");

/**
 * Puts back what a caught call changed under `path` (a file, a folder: every
 * file below it, "." for all): each file as the latest catch that names it
 * found it before the call, or, with `catchId`, every file of that catch
 * under `path`. A modified or deleted file gets its bytes back (atomically,
 * its mode kept), a created one is removed; a file edited since the catch
 * gets that edit merged over them, or is kept in the stash (`force`: always
 * kept, never merged). Never throws.
 */
export function restoreHeld(
  root: string,
  path: string,
  opts: { catchId?: string; force?: boolean; now?: number } = {},
): RestoreResult {
  const none = (message: string): RestoreResult => ({
    restored: [],
    merged: [],
    kept: [],
    notRestorable: [],
    message,
  });
  let target: string;
  try {
    target = normalizeRepoPath(path, root);
  } catch (err) {
    return none(`Cannot restore ${path}: ${(err as Error).message}`);
  }
  const dir = stashDir(root);
  const catches = readJournal(dir).catches;
  const picks = new Map<string, { c: Catch; ch: HeldChange }>();
  const chosen = opts.catchId ? catches.filter((c) => c.id === opts.catchId) : catches;
  if (opts.catchId && chosen.length === 0) return none(`No catch ${opts.catchId} (see the list of catches).`);
  // Oldest first: a later catch of the same file replaces an earlier one.
  for (const c of chosen)
    for (const ch of c.changes) if (scopeCovers([target], ch.path)) picks.set(ch.path, { c, ch });
  if (picks.size === 0) return none(`No caught write under ${target} to restore.`);

  const plain: string[] = [];
  const later: string[] = []; // one sentence per file edited or deleted since the catch
  const out = none("");
  const failed: { path: string; why: string }[] = [];
  for (const { c, ch } of picks.values()) {
    const o = restoreOne(root, dir, c, ch, opts.force === true);
    if (!o.ok) {
      failed.push({ path: ch.path, why: o.why });
      continue;
    }
    out.restored.push(ch.path);
    if (o.how === "restored") plain.push(ch.path);
    else if (o.how === "merged") {
      out.merged.push(ch.path);
      out.kept.push({ path: ch.path, at: o.kept });
      later.push(
        `Merged ${ch.path}: it had been edited since the catch, and that edit is now applied over the bytes from before the caught call (${c.id}); the file as it was before this restore is kept at ${o.kept}.`,
      );
    } else if (o.kept === null)
      later.push(
        `${ch.path} had been deleted since the catch: it is back as before the caught call (${c.id}).`,
      );
    else {
      out.kept.push({ path: ch.path, at: o.kept });
      const back =
        ch.change === "created" ? "removed, as before the caught call" : "back as before the caught call";
      later.push(
        `${ch.path} had been edited since the catch and was not merged (${o.why}): it is ${back} (${c.id}), and the edited version is kept at ${o.kept}; re-apply that edit from it (diff ${ch.path} ${o.kept}).`,
      );
    }
  }
  if (out.restored.length) {
    const at = opts.now ?? Date.now();
    const keptAt = new Map(out.kept.map((k) => [k.path, k.at]));
    try {
      updateJournal(dir, (j) => {
        for (const c of j.catches)
          for (const p of out.restored)
            if (picks.get(p)!.c.id === c.id) {
              (c.restored ??= {})[p] = at;
              if (keptAt.has(p)) (c.kept ??= {})[p] = keptAt.get(p)!;
            }
      });
    } catch {
      /* the files are back; only the listing's marks are missing */
    }
  }
  const parts: string[] = [];
  if (plain.length) {
    const ids = [...new Set(plain.map((p) => picks.get(p)!.c.id))];
    parts.push(
      `Restored ${plain.length} file(s) as before the caught call (${ids.join(", ")}): ${listed(plain)}.`,
    );
  }
  parts.push(...later.slice(0, 20));
  if (later.length > 20) parts.push(`And ${later.length - 20} more edited since the catch (see --list).`);
  if (out.kept.length)
    parts.push("If those files are a peer's, tell it: the edit since the catch is most likely its own.");
  if (failed.length) parts.push(`Not restored: ${listed(failed.map((f) => `${f.path} (${f.why})`))}.`);
  out.notRestorable = failed.map((f) => f.path);
  out.message = parts.join(" ");
  return out;
}
