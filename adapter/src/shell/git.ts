import { posix } from "node:path";
import { gitSubcommand } from "../git/classify.js";
import type { Word } from "./reader.js";
import { destination, type Reader } from "./commands.js";
import * as P from "./programs.js";
import { diffPaths } from "./texts.js";
import type { ShellTarget, WriteMode } from "./writes.js";

type Certainty = ShellTarget["certainty"];

/**
 * Git commands that write the working tree with paths: rm and mv remove
 * what they name; checkout, restore, stash push and clean put back or drop
 * it. Whole-tree ones (reset --hard, stash pop, pull, a branch switch) name
 * no path: the Git guard judges them.
 */
export function git(r: Reader, args: Word[], cwd: string | null): boolean {
  const g = gitSubcommand(args, cwd);
  if (!g) return false;
  const { sub, rest, cwd: dir } = g;
  const add = (list: Word[], mode: WriteMode, certainty: Certainty = "named") =>
    r.each(list, dir, mode, certainty);
  const ops = () => P.operands(rest, P.GIT_VALUES);
  const noOperands = () => ops().length === 0;
  if (P.GIT_READERS.has(sub)) {
    const out = P.optionValue(rest, null, "output");
    return out ? add([out], "write") : true;
  }
  switch (sub) {
    case "clone":
    case "worktree":
    case "submodule":
    case "archive":
    case "format-patch":
      return gitOutputs(r, sub, rest, dir);
    case "rm":
      return P.has(rest, "-n", "--dry-run") || add(ops(), "remove");
    case "mv":
      return P.has(rest, "-n", "--dry-run") || add(destination(r, rest, dir, new Set()), "remove");
    case "checkout": {
      const dashes = rest.findIndex((w) => w.text === "--" && !w.dynamic);
      if (dashes !== -1) return add(rest.slice(dashes + 1), "tree");
      if (P.has(rest, "-b", "-B", "--orphan")) return false;
      const o = ops();
      // One word may be a branch or a path (git decides); after a revision, the rest are paths.
      if (o.length === 1) add(o, "tree", o[0]!.text === "." ? "named" : "uncertain");
      else if (o.length > 1) {
        add(o.slice(0, 1), "tree", "uncertain");
        add(o.slice(1), "tree");
      }
      return false;
    }
    case "restore":
      // --staged alone puts back the index, not the files.
      if (!P.has(rest, "--staged", "-S") || P.has(rest, "--worktree", "-W")) add(ops(), "tree");
      return false;
    case "stash": {
      const verb = rest[0] && !rest[0].text.startsWith("-") ? rest[0].text : "push";
      if (verb === "list" || verb === "show") return true;
      if (verb === "push")
        add(P.operands(rest[0]?.text === "push" ? rest.slice(1) : rest, P.GIT_VALUES), "tree");
      return false;
    }
    case "clean":
      if (rest.some((w) => w.text === "--dry-run" || !!P.shortCluster(w.text)?.includes("n"))) return true;
      return add(ops(), "tree");
    case "apply":
      return gitApply(r, rest, dir);
    case "branch":
      return (
        noOperands() &&
        !rest.some((w) => /^-[dDmMcCfu]|^--(delete|move|copy|force|set-upstream|unset|edit)/.test(w.text))
      );
    case "tag":
      return noOperands() || P.has(rest, "-l", "--list");
    case "remote":
      return noOperands() || ["show", "get-url"].includes(ops()[0]!.text);
    case "config":
      return P.has(rest, "--get", "--get-all", "--get-regexp", "--list", "-l");
  }
  return false;
}

/** git clone URL [DIR], worktree add DIR, submodule add URL [DIR]: DIR is filled; archive and format-patch -o. */
function gitOutputs(r: Reader, sub: string, rest: Word[], dir: string | null): false {
  const values = P.set(
    "-o --output -b --branch --origin --depth --reference --template -c --config --jobs -j --filter --separate-git-dir --name -B",
  );
  if (sub === "archive" || sub === "format-patch") {
    const out = P.optionValue(rest, "o", sub === "archive" ? "output" : "output-directory");
    if (out) r.add(out, dir, sub === "archive" ? "write" : "tree");
    return false;
  }
  let ops = P.operands(rest, values);
  if (sub === "worktree" || sub === "submodule") {
    if (ops[0]?.text !== "add") return false;
    ops = ops.slice(1);
  }
  const url = ops[0];
  const target =
    sub === "worktree"
      ? url
      : (ops[1] ??
        (url && { ...url, text: posix.basename(url.text.replace(/\/+$/, "")).replace(/\.git$/, "") }));
  if (target && target.text) r.add(target, dir, "tree");
  return false;
}

export function gitApply(r: Reader, rest: Word[], dir: string | null): boolean {
  if (P.has(rest, "--check", "--stat", "--numstat", "--summary") && !P.has(rest, "--apply")) return true;
  if (P.has(rest, "--cached") && !P.has(rest, "--index")) return false; // the index only
  const files = P.operands(rest, P.GIT_APPLY_VALUES);
  if (files.length > 0 && files[0]!.text !== "-") return false; // a patch file: its paths are unknown here
  const p = rest.find((w) => w.text.startsWith("-p") && w.text.length > 2);
  const strip = p ? Number(p.text.slice(2)) : 1;
  // git apply's paths are the work tree's, from its top.
  for (const body of r.heredocs())
    for (const d of diffPaths(body, Number.isInteger(strip) ? strip : 1))
      r.add(P.word(d.path), dir === null ? null : r.root, d.remove ? "remove" : "write");
  return false;
}
