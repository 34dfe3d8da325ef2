import { statSync } from "node:fs";
import { join, relative } from "node:path";
import { recordOwnWrites, type Writer } from "./read-after.js";
import { recordKnown, recordRead, type KnownFile } from "./read-record.js";

/**
 * The shell watch's part in the stale-write check (held/call.ts calls it):
 * - before a call, the files the command's readers take are what the
 *   session now read (`cat src/x.ts`, `sed -n 1,40p src/x.ts`: a shell is
 *   how Codex reads; readWords): the snapshot's by the hash it already has, any other file of
 *   the checkout by its bytes now (a file nobody holds yet is read too, and
 *   a peer may claim and change it next). The snapshot's files the command
 *   does not name are not: a snapshot is not a read, and would make a
 *   peer's change look read;
 * - after it, the files its watch found changed that no other session's
 *   guarded edit explains: the session's own writes, noted in the journal
 *   by the bytes each was left with (not the whole scope it could have written).
 * Never throws.
 */

/** The words of a command that may name files: split at blanks, quotes and shell operators. Pure. */
export const commandWords = (command: string): Set<string> =>
  new Set(command.split(/[\s'"`;|&<>()]+/).filter(Boolean));

/** Programs that show a file's bytes to whoever runs them: their file arguments are read. */
const READERS = new Set([
  "cat",
  "head",
  "tail",
  "less",
  "more",
  "sed",
  "awk",
  "grep",
  "egrep",
  "fgrep",
  "rg",
  "nl",
  "wc",
  "diff",
  "cmp",
  "od",
  "xxd",
  "hexdump",
  "strings",
  "bat",
  "view",
  "vi",
  "vim",
  "nano",
  "jq",
]);
/** Words before the program that do not name it. */
const PREFIX = /^([A-Za-z_][A-Za-z0-9_]*=.*|sudo|env|command|exec|nice|time)$/;

/**
 * The words of a command that its readers take: of each simple command (split at `;`, `&`, `|`,
 * newlines and parentheses) whose program is a reader, its arguments. A file merely named (`ls x`,
 * `git add x`, `echo x`) is not read: counting it would let a mention clear a stale write. Pure.
 */
export function readWords(command: string): Set<string> {
  const out = new Set<string>();
  for (const part of command.split(/[;&|\n()]+/)) {
    const ws = [...commandWords(part)];
    let i = 0;
    while (i < ws.length && PREFIX.test(ws[i]!)) i++;
    const program = ws[i]?.split("/").pop();
    if (!program || !READERS.has(program)) continue;
    for (const w of ws.slice(i + 1)) out.add(w);
  }
  return out;
}

/** Whether the command's words name the file `path` of the checkout at `root`, run in `cwd`. Pure. */
export function namesPath(
  words: ReadonlySet<string>,
  root: string,
  path: string,
  cwd: string | null,
): boolean {
  if (words.has(path) || words.has(`./${path}`) || words.has(join(root, path))) return true;
  if (!cwd) return false;
  const rel = relative(cwd, join(root, path));
  return words.has(rel) || words.has(`./${rel}`);
}

/** Before a watched shell call: the snapshot's files the command names, as read by the session (their bytes before the call). */
export function recordShellSnapshot(
  root: string,
  sessionId: string,
  command: string | null,
  cwd: string | null,
  files: readonly KnownFile[],
  at = Date.now(),
): void {
  if (!command) return;
  const words = readWords(command);
  if (words.size === 0) return;
  // Each word as the checkout path it would name (namesPath's forms), once: a lookup per held file, not a join.
  const paths = new Set<string>();
  for (const w of words) {
    const bare = w.startsWith("./") ? w.slice(2) : w;
    paths.add(bare);
    if (w.startsWith(`${root}/`)) paths.add(w.slice(root.length + 1));
    if (cwd && !w.startsWith("/")) paths.add(relative(root, join(cwd, w)));
  }
  const named = files.filter((f) => paths.has(f.path) && namesPath(words, root, f.path, cwd));
  if (named.length) recordKnown(root, sessionId, named, "read", at);
  const inSnapshot = new Set(files.map((f) => f.path));
  const others = [...paths].filter((p) => !inSnapshot.has(p) && namedFile(root, p));
  if (others.length) recordRead(root, sessionId, others, "read", { at });
}

/** Whether `path` (a word the command may mean as a checkout path) is a file of the checkout, outside .git. */
function namedFile(root: string, path: string): boolean {
  if (!path || path.startsWith("..") || path.startsWith("/") || path === ".git" || path.startsWith(".git/"))
    return false;
  try {
    return statSync(join(root, path)).isFile();
  } catch {
    return false;
  }
}

/** After a watched shell call: what its watch found changed (and no other session's edit explains) is this session's own write. */
export function recordShellWrites(
  root: string,
  s: Writer,
  changes: readonly { path: string }[],
  at = Date.now(),
): void {
  if (changes.length === 0) return;
  try {
    recordOwnWrites(root, s, [...new Set(changes.map((c) => c.path))], "shell", { at });
  } catch {
    /* see recordAfterCall */
  }
}
