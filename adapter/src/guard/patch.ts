/**
 * Edit targets of an apply_patch body, and apply_patch sent through a
 * shell (a heredoc arrives as a shell call, but it is an edit all the same).
 */

const PATCH_HEADER = /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$/;

/** Every path named by "*** Add File:", "*** Update File:", "*** Delete File:" and "*** Move to:". */
export function patchTargets(patch: string): string[] {
  const out: string[] = [];
  for (const line of patch.split(/\r?\n/)) {
    const m = PATCH_HEADER.exec(line.trimEnd());
    const target = m?.[1]?.trim();
    if (target && !out.includes(target)) out.push(target);
  }
  return out;
}

const APPLY_PATCH_CALL = /(?:^|[\s;&|()`'"])(?:[\w./-]*\/)?apply_patch(?=$|[\s<;&|)'"`])/;

/**
 * A shell command that invokes apply_patch is an edit. Returns its targets
 * (possibly none, when the patch body cannot be read), or null when the
 * command does not call apply_patch.
 */
export function shellPatchTargets(command: string): string[] | null {
  if (!APPLY_PATCH_CALL.test(command)) return null;
  return patchTargets(command);
}

/** One file's part of an apply_patch body. */
export interface PatchFile {
  op: "add" | "update" | "delete";
  path: string;
  /** Update only: the file's new name ("*** Move to:"). */
  moveTo: string | null;
  /** The body lines under the header (added lines for add, chunks for update). */
  lines: string[];
}

const FILE_HEADER = /^\*\*\* (Add File|Update File|Delete File): (.+)$/;

/** The files of an apply_patch body, in order, with their body lines. */
export function patchFiles(patch: string): PatchFile[] {
  const out: PatchFile[] = [];
  let current: PatchFile | null = null;
  for (const raw of patch.split(/\r?\n/)) {
    const line = raw.trimEnd();
    const header = FILE_HEADER.exec(line);
    if (header) {
      const op = header[1] === "Add File" ? "add" : header[1] === "Update File" ? "update" : "delete";
      current = { op, path: header[2]!.trim(), moveTo: null, lines: [] };
      out.push(current);
      continue;
    }
    if (line === "*** End Patch" || line === "*** Begin Patch") {
      current = null;
      continue;
    }
    if (!current) continue;
    const move = /^\*\*\* Move to: (.+)$/.exec(line);
    if (move && current.op === "update" && current.lines.length === 0) current.moveTo = move[1]!.trim();
    else if (line !== "*** End of File") current.lines.push(raw);
  }
  return out;
}

/** Finds `pattern` in `lines` from `from`: exactly, then ignoring trailing, then surrounding whitespace (as apply_patch does). */
function seek(lines: string[], pattern: string[], from: number): number {
  for (const norm of [(s: string) => s, (s: string) => s.trimEnd(), (s: string) => s.trim()]) {
    for (let i = from; i + pattern.length <= lines.length; i++)
      if (pattern.every((p, k) => norm(lines[i + k]!) === norm(p))) return i;
  }
  return -1;
}

/**
 * The text an "*** Update File" body makes of `text`, as apply_patch
 * computes it; null when a chunk does not apply (the tool would fail, or
 * match where this reading cannot follow it).
 */
export function applyUpdate(text: string, body: string[]): string | null {
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  const chunks: { context: string | null; old: string[]; new: string[] }[] = [];
  let chunk: (typeof chunks)[number] | null = null;
  for (const raw of body) {
    if (raw.startsWith("@@")) {
      const context = raw.slice(2).trim();
      chunk = { context: context || null, old: [], new: [] };
      chunks.push(chunk);
      continue;
    }
    if (!chunk) chunks.push((chunk = { context: null, old: [], new: [] }));
    const mark = raw[0];
    const rest = raw.slice(1);
    if (mark === "-") chunk.old.push(rest);
    else if (mark === "+") chunk.new.push(rest);
    else if (mark === " " || raw === "") {
      chunk.old.push(rest);
      chunk.new.push(rest);
    } else return null;
  }
  const edits: { at: number; remove: number; insert: string[] }[] = [];
  let at = 0;
  for (const c of chunks) {
    if (c.context !== null) {
      const i = seek(lines, [c.context], at);
      if (i === -1) return null;
      at = i + 1;
    }
    if (c.old.length === 0) {
      edits.push({ at: lines.length, remove: 0, insert: c.new });
      continue;
    }
    let old = c.old;
    let insert = c.new;
    let i = seek(lines, old, at);
    if (i === -1 && old[old.length - 1] === "") {
      old = old.slice(0, -1);
      if (insert[insert.length - 1] === "") insert = insert.slice(0, -1);
      i = seek(lines, old, at);
    }
    if (i === -1) return null;
    edits.push({ at: i, remove: old.length, insert });
    at = i + old.length;
  }
  for (const e of edits.sort((a, b) => b.at - a.at)) lines.splice(e.at, e.remove, ...e.insert);
  return lines.join("\n") + "\n";
}
