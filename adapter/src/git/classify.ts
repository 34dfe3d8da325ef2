import { posix } from "node:path";
import { simpleCommands, type Word } from "../shell/reader.js";

/**
 * The Git operations in a shell line that stage, commit, discard or
 * overwrite work in the shared checkout. Pure: it reads the words only.
 * What a pathspec matches is never decided here; the checker asks Git.
 */

export type GitOpKind = "add" | "commit" | "stash" | "checkout" | "switch" | "restore" | "reset" | "clean";

export interface GitOp {
  kind: GitOpKind;
  /** The directory git runs in (after cd and -C); null when the shell's cd could not be followed. */
  cwd: string | null;
  /** The git words as the agent typed them, for messages. */
  text: string;
  /** Pathspecs as git receives them; null when the shell decides them at run time ($X, xargs, --pathspec-from-file). */
  pathspecs: string[] | null;
  /** Options that matter, by long name: all, update, force, dry-run, patch, amend, include, staged, worktree, hard, soft, mixed, merge, keep, untracked, ignored, dirs, x, X, create, interactive. */
  flags: string[];
  /** The tree-ish of checkout / reset / restore --source, when one is named. */
  source: string | null;
  /** A checkout/reset word that may be a revision or a path: git decides (the checker asks it). */
  ambiguous: string | null;
  /** commit -m / stash -m, when given literally. */
  message: string | null;
  /** --literal-pathspecs and friends given before the subcommand: the checker passes them on. */
  pathspecMode: string[];
  /** clean -e patterns. */
  excludes: string[];
}

const PATHSPEC_MODES = new Set([
  "--literal-pathspecs",
  "--glob-pathspecs",
  "--noglob-pathspecs",
  "--icase-pathspecs",
]);
const GLOBAL_WITH_ARG = new Set([
  "-C",
  "-c",
  "--git-dir",
  "--work-tree",
  "--namespace",
  "--super-prefix",
  "--config-env",
  "--exec-path",
]);

/** Per subcommand: short options (letter -> long name) and which take an argument. */
interface Syntax {
  short: Record<string, string>;
  /** Long names whose value follows as the next word (when not attached with =). */
  withArg: Set<string>;
  /** Short letters whose value is the rest of the cluster or the next word. */
  shortArg: Set<string>;
}

const SYNTAX: Record<GitOpKind, Syntax> = {
  add: {
    short: {
      A: "all",
      u: "update",
      f: "force",
      n: "dry-run",
      p: "patch",
      i: "interactive",
      N: "intent-to-add",
      v: "verbose",
      e: "edit",
    },
    withArg: new Set(["pathspec-from-file", "chmod"]),
    shortArg: new Set(),
  },
  commit: {
    short: {
      a: "all",
      i: "include",
      o: "only",
      n: "no-verify",
      q: "quiet",
      v: "verbose",
      s: "signoff",
      e: "edit",
      p: "patch",
      z: "null",
    },
    withArg: new Set([
      "message",
      "file",
      "reuse-message",
      "reedit-message",
      "fixup",
      "squash",
      "author",
      "date",
      "template",
      "cleanup",
      "trailer",
      "pathspec-from-file",
    ]),
    shortArg: new Set(["m", "F", "C", "c", "t"]),
  },
  stash: {
    short: { u: "include-untracked", a: "all", k: "keep-index", p: "patch", q: "quiet", S: "staged" },
    withArg: new Set(["message", "pathspec-from-file"]),
    shortArg: new Set(["m"]),
  },
  checkout: {
    short: {
      f: "force",
      p: "patch",
      q: "quiet",
      m: "merge",
      b: "create",
      B: "create",
      t: "track",
      l: "reflog",
    },
    withArg: new Set(["orphan", "pathspec-from-file", "conflict"]),
    shortArg: new Set(["b", "B"]),
  },
  switch: {
    short: { f: "force", c: "create", C: "create", q: "quiet", m: "merge", d: "detach", t: "track" },
    withArg: new Set(["orphan", "conflict"]),
    shortArg: new Set(["c", "C"]),
  },
  restore: {
    short: { S: "staged", W: "worktree", p: "patch", q: "quiet", s: "source", m: "merge" },
    withArg: new Set(["source", "pathspec-from-file", "conflict"]),
    shortArg: new Set(["s"]),
  },
  reset: {
    short: { p: "patch", q: "quiet", N: "intent-to-add" },
    withArg: new Set(["pathspec-from-file"]),
    shortArg: new Set(),
  },
  clean: {
    short: {
      n: "dry-run",
      f: "force",
      d: "dirs",
      x: "x",
      X: "X",
      i: "interactive",
      q: "quiet",
      e: "exclude",
    },
    withArg: new Set(["exclude"]),
    shortArg: new Set(["e"]),
  },
};

const LONG_ALIASES: Record<string, string> = {
  "include-untracked": "untracked",
  "discard-changes": "force",
  "ignore-removal": "no-all",
  "no-ignore-removal": "all",
};

interface Parsed {
  flags: Set<string>;
  values: Map<string, string | null>;
  args: Word[];
  /** Words after `--`. */
  afterDashes: Word[] | null;
}

function parseArgs(kind: GitOpKind, words: Word[]): Parsed {
  const syn = SYNTAX[kind];
  const flags = new Set<string>();
  const values = new Map<string, string | null>();
  const args: Word[] = [];
  let afterDashes: Word[] | null = null;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    const t = w.text;
    if (t === "--" && !w.dynamic) {
      afterDashes = words.slice(i + 1);
      break;
    }
    if (t.startsWith("--") && t.length > 2) {
      const eq = t.indexOf("=");
      let name = eq === -1 ? t.slice(2) : t.slice(2, eq);
      name = LONG_ALIASES[name] ?? name;
      if (eq !== -1) values.set(name, w.dynamic ? null : t.slice(eq + 1));
      else if (syn.withArg.has(name)) {
        const v = words[++i];
        values.set(name, v && !v.dynamic ? v.text : null);
      }
      flags.add(name);
      continue;
    }
    if (t.startsWith("-") && t.length > 1) {
      for (let j = 1; j < t.length; j++) {
        const letter = t[j]!;
        const short = syn.short[letter] ?? (letter === "m" ? "message" : letter);
        const name = LONG_ALIASES[short] ?? short;
        if (syn.shortArg.has(letter)) {
          const rest = t.slice(j + 1);
          const v = rest ? w : words[++i];
          values.set(name, v && !v.dynamic ? rest || v.text : null);
          flags.add(name);
          break;
        }
        flags.add(name);
      }
      continue;
    }
    args.push(w);
  }
  return { flags, values, args, afterDashes };
}

const specs = (ws: Word[]): string[] | null => (ws.some((w) => w.dynamic) ? null : ws.map((w) => w.text));

function op(
  kind: GitOpKind,
  cwd: string | null,
  text: string,
  p: Parsed,
  pathspecMode: string[],
  extra: Partial<GitOp> = {},
): GitOp {
  const fromFile = p.flags.has("pathspec-from-file");
  const words = p.afterDashes ? [...p.args, ...p.afterDashes] : p.args;
  return {
    kind,
    cwd,
    text,
    pathspecs: fromFile ? null : specs(words),
    flags: [...p.flags].sort(),
    source: null,
    ambiguous: null,
    message: p.values.get("message") ?? null,
    pathspecMode,
    excludes: [],
    ...extra,
  };
}

/**
 * One git invocation's words (after `git`): its global options read (-C
 * moves the directory), then the subcommand and its words; null without a
 * readable subcommand.
 */
export function gitSubcommand(
  words: Word[],
  cwd: string | null,
): { sub: string; rest: Word[]; cwd: string | null; pathspecMode: string[] } | null {
  let dir = cwd;
  const pathspecMode: string[] = [];
  let i = 0;
  for (; i < words.length; i++) {
    const w = words[i]!;
    const t = w.text;
    if (!t.startsWith("-")) break;
    if (PATHSPEC_MODES.has(t)) pathspecMode.push(t);
    if (t === "-C") {
      const d = words[++i];
      dir = !d || d.dynamic || dir === null ? null : posix.resolve(dir, d.text);
    } else if (GLOBAL_WITH_ARG.has(t)) i++;
  }
  const sub = words[i];
  if (!sub || sub.dynamic) return null;
  return { sub: sub.text, rest: words.slice(i + 1), cwd: dir, pathspecMode };
}

/** One git invocation's words (after `git`) into an operation, or null when it stages, commits and discards nothing. */
function classifyGit(words: Word[], cwd: string | null, xargs: boolean): GitOp | null {
  const inv = gitSubcommand(words, cwd);
  if (!inv) return null;
  const { cwd: dir, pathspecMode, rest } = inv;
  const kind = inv.sub as GitOpKind;
  if (!(kind in SYNTAX)) return null;
  // xargs appends words from its input: pathspecs nobody can read beforehand.
  if (xargs) rest.push({ text: "", dynamic: true, assign: false });
  const text = ["git", ...words.map((w) => (w.dynamic ? "…" : w.text))].join(" ").trim();
  switch (kind) {
    case "add": {
      const p = parseArgs(kind, rest);
      return p.flags.has("dry-run") ? null : op(kind, dir, text, p, pathspecMode);
    }
    case "commit": {
      const p = parseArgs(kind, rest);
      return p.flags.has("dry-run") ? null : op(kind, dir, text, p, pathspecMode);
    }
    case "stash": {
      const first = rest[0];
      const verb = !first || first.text.startsWith("-") ? "push" : first.text;
      if (verb !== "push" && verb !== "save") return null;
      const p = parseArgs(kind, first && !first.text.startsWith("-") ? rest.slice(1) : rest);
      // `stash save [message]` takes no pathspecs: its words are the message.
      if (verb === "save")
        return op(kind, dir, text, { ...p, args: [], afterDashes: null }, pathspecMode, {
          message: p.args.map((w) => w.text).join(" ") || null,
        });
      return op(kind, dir, text, p, pathspecMode);
    }
    case "checkout":
    case "reset": {
      const p = parseArgs(kind, rest);
      if (kind === "checkout" && (p.flags.has("create") || p.flags.has("orphan"))) return null;
      if (kind === "reset" && p.flags.has("soft") && !p.afterDashes && p.args.length <= 1) return null;
      // With `--`, the word before it is the tree-ish; without, git decides whether the first word is a revision.
      if (p.afterDashes) {
        const tree = p.args[0];
        return op(kind, dir, text, { ...p, args: [] }, pathspecMode, {
          source: tree ? (tree.dynamic ? "…" : tree.text) : null,
        });
      }
      const [first, ...others] = p.args;
      if (!first)
        return kind === "checkout" && !p.flags.has("force") ? null : op(kind, dir, text, p, pathspecMode);
      if (first.dynamic) return op(kind, dir, text, { ...p, args: [first] }, pathspecMode);
      return op(kind, dir, text, { ...p, args: others }, pathspecMode, { ambiguous: first.text });
    }
    case "switch": {
      const p = parseArgs(kind, rest);
      return p.flags.has("force") ? op(kind, dir, text, { ...p, args: [] }, pathspecMode) : null;
    }
    case "restore": {
      const p = parseArgs(kind, rest);
      return op(kind, dir, text, p, pathspecMode, {
        source: p.values.get("source") ?? (p.flags.has("source") ? "…" : null),
      });
    }
    case "clean": {
      const p = parseArgs(kind, rest);
      if (p.flags.has("dry-run") || p.flags.has("interactive")) return null;
      return op(kind, dir, text, p, pathspecMode, {
        excludes: p.values.has("exclude") ? [p.values.get("exclude") ?? ""] : [],
      });
    }
  }
  return null;
}

/** Wrappers that run the rest of their words as a command. */
const WRAPPERS: Record<string, Set<string>> = {
  env: new Set(["-u", "--unset", "-C", "--chdir", "-S"]),
  command: new Set(),
  exec: new Set(["-a"]),
  nohup: new Set(),
  time: new Set(),
  builtin: new Set(),
  sudo: new Set(["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U"]),
  nice: new Set(["-n"]),
  timeout: new Set(["-s", "-k", "--signal", "--kill-after"]),
  xargs: new Set(["-I", "-n", "-L", "-P", "-d", "-E", "-s", "-a"]),
};

/**
 * A simple command's words with the wrappers that run the rest of them
 * (env, sudo, timeout, xargs …) and leading NAME=value assignments taken
 * off: the program that really runs, first. `xargs` says that words from its
 * input are appended, which nobody can read beforehand.
 */
export function unwrapCommand(words: Word[]): { words: Word[]; xargs: boolean } {
  let xargs = false;
  for (let guard = 0; guard < 8; guard++) {
    while (words.length && words[0]!.assign) words = words.slice(1);
    const prog = words[0];
    if (!prog || prog.dynamic) break;
    const name = posix.basename(prog.text);
    const takes = Object.hasOwn(WRAPPERS, name) ? WRAPPERS[name] : undefined;
    if (!takes) break;
    if (name === "xargs") xargs = true;
    let j = 1;
    for (; j < words.length; j++) {
      const t = words[j]!.text;
      if (t === "--") {
        j++;
        break;
      }
      if (words[j]!.assign && name === "env") continue;
      if (!t.startsWith("-")) break;
      if (takes.has(t)) j++;
    }
    // `timeout 10 git …`: the duration comes first.
    if (name === "timeout" && words[j] && /^[0-9.]+[smhd]?$/.test(words[j]!.text)) j++;
    words = words.slice(j);
  }
  return { words, xargs };
}

/**
 * Every stage / commit / discard operation in a shell line, in order.
 * `cwd` is the shell's working directory (absolute in the hook).
 */
export function classifyGitCommand(command: string, cwd = "/"): GitOp[] {
  const ops: GitOp[] = [];
  for (const cmd of simpleCommands(command, cwd)) {
    const { words, xargs } = unwrapCommand(cmd.words);
    const prog = words[0];
    if (!prog || prog.dynamic || posix.basename(prog.text) !== "git") continue;
    const found = classifyGit(words.slice(1), cmd.cwd, xargs);
    if (found) ops.push(found);
  }
  return ops;
}
