import { posix } from "node:path";
import type { Word } from "./reader.js";

/**
 * The program tables and option readers of shell/writes.ts: which programs
 * only read, which write nothing a command names (builds, installs), and
 * how the writers' options are spelled. Sets and string tests only: a
 * regular expression costs its compile on first use in every hook process.
 */

export const set = (words: string) => new Set(words.split(" "));
export const word = (text: string): Word => ({ text, dynamic: false, assign: false });

/** Programs that only read files (their output goes to stdout, or a redirect the reader sees). */
export const READERS = set(
  "cat tac nl head tail less more bat batcat grep egrep fgrep zgrep rg ag ack ls ll la dir exa eza lsd tree " +
    "file stat wc du df which whereis type command hash echo printf true false : pwd date cal whoami id uname " +
    "hostname printenv locale getconf cut tr jq xxd od hexdump strings diff cmp comm colordiff md5sum sha1sum " +
    "sha256sum sha512sum shasum cksum b2sum basename dirname realpath readlink column fold fmt expand unexpand " +
    "paste join rev seq sleep test [ [[ ] ]] tput clear history man help ps pgrep uptime free nproc tokei cloc " +
    "export unset set shift local declare typeset readonly alias unalias read wait exit return trap umask ulimit " +
    "jobs sort uniq sed awk gawk mawk nawk " +
    // Test runners, type checkers and linters: they read the tree (caches and reports aside).
    "vitest jest mocha ava tap pytest py.test tox nox unittest phpunit rspec mypy pyright flake8 pylint " +
    "shellcheck hadolint prettier eslint black ruff gofmt rustfmt isort tsc vue-tsc yq fd fdfind curl",
);

/** Programs that write, but no path the command names: builds, installs, services, other machines. */
export const TARGETLESS = set(
  "make gmake cmake ninja bazel meson npm pnpm yarn bun pip pip3 pipx uv poetry pipenv conda mamba cargo " +
    "go mvn gradle gradlew ant sbt dotnet docker docker-compose podman kubectl helm terraform brew apt apt-get " +
    "dnf yum apk gem bundle composer rustup nvm corepack webpack vite rollup esbuild next turbo nx lerna gh glab " +
    "ssh kill pkill killall open xdg-open source . wget tar unzip jupyter alembic flask django-admin",
);

/** Programs that run the text of a word (node -e, python -c, perl -e, deno eval …); versions dropped (python3.12). */
export const INTERPRETERS = set(
  "node nodejs bun deno python pypy perl ruby php osascript pwsh powershell lua Rscript tsx ts-node",
);
export const SHELLS = set("sh bash zsh dash ksh fish");
export const AWKS = set("awk gawk mawk nawk");
export const EDITORS = set(
  "ed ex vi vim nvim view gvim rvim vimdiff nvi evim nano pico emacs emacsclient joe micro",
);
export const REMOVERS = set("rm rmdir unlink shred srm");
export const PERMISSIONS = set("chmod chown chgrp chattr setfacl chflags");
/** Options of chmod and friends that take no value (the first other word is the mode or owner). */
export const PERMISSION_FLAGS = set(
  "-R -v -f -c -h -H -L -P --recursive --verbose --silent --quiet --changes --no-dereference --dereference " +
    "--preserve-root --no-preserve-root",
);
export const COMPRESSORS = set("gzip gunzip bzip2 bunzip2 xz unxz zstd lz4");
export const RUNNERS = set("npx pnpx bunx uvx");
/** Readers that run the project's code: a test run names no write, but its tests may write anything. */
export const TEST_RUNNERS = set("vitest jest mocha ava tap pytest py.test tox nox unittest phpunit rspec");
/** Package managers' subcommands that only read. */
export const PM_READS = set(
  "ls list view info show outdated why audit bin root prefix help search explain query config --version -v -V " +
    "freeze check doctor whoami",
);
export const TEST_SCRIPTS = set("test t tst");
export const GIT_READERS = set(
  "diff log show blame status grep ls-files ls-tree ls-remote rev-parse rev-list cat-file describe shortlog " +
    "show-ref merge-base name-rev whatchanged annotate count-objects version help var check-ignore check-attr " +
    "cherry range-diff for-each-ref show-branch difftool fsck verify-commit verify-tag",
);
/** Operators that run the command after them: find -exec … ; / +. */
export const FIND_EXEC = set("-exec -execdir -ok -okdir");
export const FIND_PRINT = set("-fprint -fprint0 -fprintf -fls");

export const CP_VALUES = set("-S --suffix -t --target-directory");
export const INSTALL_VALUES = set("-S --suffix -t --target-directory -m --mode -o --owner -g --group");
export const RSYNC_VALUES = set("-e --rsh -f --filter --exclude --include -T --temp-dir --exclude-from");
export const TRUNCATE_VALUES = set("-s --size -r --reference");
export const TOUCH_VALUES = set("-d --date -t -r --reference");
export const MKDIR_VALUES = set("-m --mode --context");
export const PATCH_VALUES = set("-i --input -p -B -D -F -z -V -r -d --directory");
export const PRETTIER_VALUES = set(
  "--config --ignore-path --plugin --parser --log-level --loglevel --cache-location --stdin-filepath",
);
export const ESLINT_VALUES = set(
  "-c --config --ext --rule --format -f --ignore-path --ignore-pattern --parser --parser-options --plugin " +
    "--resolve-plugins-relative-to --rulesdir --max-warnings --cache-location",
);
export const BLACK_VALUES = set(
  "-l --line-length -t --target-version --config --include --exclude --extend-exclude --force-exclude",
);
export const GIT_VALUES = set(
  "-m --message -s --source -b -B -e --exclude --orphan --conflict --pathspec-from-file -F --file",
);

export const has = (words: Word[], ...flags: string[]) => words.some((w) => flags.includes(w.text));

/** The words of a command that are operands, not options; `withValue` lists the options whose value is the next word. */
export function operands(words: Word[], withValue: ReadonlySet<string> = new Set()): Word[] {
  const out: Word[] = [];
  let dashes = false;
  for (let i = 0; i < words.length; i++) {
    const t = words[i]!.text;
    if (dashes || words[i]!.dynamic || !t.startsWith("-") || t === "-") out.push(words[i]!);
    else if (t === "--") dashes = true;
    else if (withValue.has(t)) i++;
  }
  return out;
}

/** The value of an option (-t DIR, -tDIR, -vt DIR, --target-directory=DIR, --target-directory DIR); undefined when absent. */
export function optionValue(words: Word[], short: string | null, long: string | null): Word | undefined {
  for (let i = 0; i < words.length; i++) {
    const t = words[i]!.text;
    if (t === "--") return undefined;
    if (long && t === `--${long}`) return words[i + 1];
    if (long && t.startsWith(`--${long}=`)) return { ...words[i]!, text: t.slice(long.length + 3) };
    // A short option, alone or last in a cluster (-t DIR, -sSo FILE), or with its value attached (-tDIR).
    const k = short && t.length > 1 && t[0] === "-" && t[1] !== "-" ? t.indexOf(short) : -1;
    if (k > 0) return k === t.length - 1 ? words[i + 1] : { ...words[i]!, text: t.slice(k + 1) };
  }
  return undefined;
}

/** A program's name without a trailing version (python3.12 -> python). */
export function unversioned(name: string): string {
  let end = name.length;
  while (end > 1 && ((name[end - 1]! >= "0" && name[end - 1]! <= "9") || name[end - 1] === ".")) end--;
  return name.slice(0, end);
}

const isLetter = (c: string | undefined) => !!c && ((c >= "a" && c <= "z") || (c >= "A" && c <= "Z"));

/** A cluster of short options (-pi, -lc): its letters, or null for anything else. */
export function shortCluster(t: string): string | null {
  if (t.length < 2 || t[0] !== "-" || t[1] === "-") return null;
  let end = 1;
  while (isLetter(t[end])) end++;
  return t.slice(1, end);
}

/** -e, -c, -p, -r (php), their clusters (-pe, -lc), --eval, --print, -Command, `deno eval`. */
export function isEvalFlag(t: string): boolean {
  if (t === "eval" || t === "-Command" || t === "-command") return true;
  if (t === "--eval" || t === "--print" || t.startsWith("--eval=") || t.startsWith("--print=")) return true;
  const letters = shortCluster(t);
  return !!letters && letters.length === t.length - 1 && "ecpr".includes(letters[letters.length - 1]!);
}

/**
 * An interpreter's one-liner: its script word and the words after it (the
 * script's arguments: `python -c "…open(sys.argv[1],'w')…" out`), or null
 * when it runs a script file (the first plain word before any eval flag).
 */
export function oneLiner(name: string, args: Word[]): Word[] | null {
  if (!INTERPRETERS.has(unversioned(name))) return null;
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!.text;
    if (isEvalFlag(t)) {
      const eq = t.indexOf("=");
      // --eval=CODE carries the script itself.
      if (t.startsWith("--") && eq !== -1)
        return [{ ...args[i]!, text: t.slice(eq + 1) }, ...args.slice(i + 1)];
      return args.slice(i + 1);
    }
    if (!t.startsWith("-")) return null;
  }
  return null;
}

/**
 * sed's options: in place (-i, -i.bak, --in-place, BSD `-i ''`), its
 * scripts (-e, or the first operand) and whether one is a file (-f), and its
 * file operands (the first operand is the script unless -e / -f gave one).
 */
export function sedArgs(args: Word[]): {
  inPlace: boolean;
  files: Word[];
  scripts: Word[];
  scriptFile: boolean;
} {
  let inPlace = false;
  let script = false;
  let scriptFile = false;
  const scripts: Word[] = [];
  let dashes = false;
  const ops: Word[] = [];
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const t = w.text;
    if (dashes || w.dynamic || !t.startsWith("-") || t === "-") {
      ops.push(w);
      continue;
    }
    if (t === "--") dashes = true;
    else if (t.startsWith("--")) {
      if (t.startsWith("--in-place")) inPlace = true;
      else if (t === "--expression" || t === "--file") {
        script = true;
        if (t === "--file") scriptFile = true;
        else if (args[i + 1]) scripts.push(args[i + 1]!);
        i++;
      } else if (t.startsWith("--expression=") || t.startsWith("--file=")) {
        script = true;
        if (t.startsWith("--file=")) scriptFile = true;
        else scripts.push({ ...w, text: t.slice(13) });
      } else if (t === "--line-length") i++;
    } else
      for (let k = 1; k < t.length; k++) {
        const c = t[k];
        if (c === "i") {
          inPlace = true;
          // BSD sed: `-i ''` (an empty suffix as its own word).
          if (k === t.length - 1 && args[i + 1]?.text === "" && !args[i + 1]!.dynamic) i++;
          break; // the rest of the cluster is the backup suffix
        }
        if (c === "e" || c === "f" || c === "l") {
          if (c !== "l") script = true;
          if (c === "f") scriptFile = true;
          const value = k === t.length - 1 ? args[i + 1] : { ...w, text: t.slice(k + 1) };
          if (c === "e" && value) scripts.push(value);
          if (k === t.length - 1) i++;
          break;
        }
      }
  }
  if (!script && ops[0]) scripts.push(ops[0]);
  return { inPlace, files: script ? ops : ops.slice(1), scripts, scriptFile };
}

/**
 * perl's and ruby's options: in place (-i, -pi, -i.bak), the -e script, and
 * the operands (the script file first when there is no -e).
 */
export function perlArgs(args: Word[]): { inPlace: boolean; script: Word | null; files: Word[] } {
  let inPlace = false;
  let script: Word | null = null;
  let i = 0;
  for (; i < args.length; i++) {
    const w = args[i]!;
    const t = w.text;
    if (w.dynamic || !t.startsWith("-") || t === "-") break;
    if (t === "--") {
      i++;
      break;
    }
    if (t.startsWith("--")) continue;
    for (let k = 1; k < t.length; k++) {
      const c = t[k]!;
      if (c === "i") {
        inPlace = true;
        break; // the rest is the backup suffix
      }
      if (c === "e" || c === "E") {
        const rest = t.slice(k + 1);
        script = rest ? { ...w, text: rest } : (args[++i] ?? null);
        break;
      }
      // Options whose value is the rest of the cluster.
      if ("IMmxl0dDFC".includes(c)) break;
    }
  }
  const rest = args.slice(i);
  return { inPlace, script, files: script ? rest : rest.slice(1) };
}

/** The words after a runner's own options (npx -y pkg …, uv run --with x cmd …): the command it runs. */
export function afterRunnerOptions(args: Word[], withValue: ReadonlySet<string>): Word[] {
  let i = 0;
  while (i < args.length && args[i]!.text.startsWith("-") && !args[i]!.dynamic) {
    if (args[i]!.text === "--") return args.slice(i + 1);
    if (withValue.has(args[i]!.text)) i++;
    i++;
  }
  return args.slice(i);
}
/** Prefixes unwrapCommand does not take off, with their options that take a value. */
export const MORE_WRAPPERS: Record<string, Set<string>> = {
  stdbuf: set("-i -o -e"),
  doas: set("-u -C"),
  ionice: set("-c -n -p"),
  unbuffer: new Set(),
  caffeinate: set("-t -w"),
  setsid: new Set(),
  chronic: new Set(),
};
export const SCP_VALUES = set("-P -i -o -F -c -l -S -J");
export const GO_READS = set("test vet list version env doc help");
export const CARGO_READS = set("test check clippy tree metadata search version --version doc");
export const GIT_APPLY_VALUES = set("--directory --exclude --include -C --whitespace --build-fake-ancestor");
export const RUNNER_VALUES = set(
  "-p --package -c --call --with --python --from -w --workspace --filter -C --cwd -n --name --env-file",
);

/** A package name without its version (prettier@3, @scope/pkg@1.2). */
export function packageName(t: string): string {
  const at = t.lastIndexOf("@");
  return at > 0 ? t.slice(0, at) : t;
}

/** `node …/cohent.mjs init`, `npx cohent init`, `cohent init`: init rewrites every guard file, and a person runs it. */
export function runsInit(prog: string, args: Word[]): boolean {
  const words = args.map((w) => w.text);
  const afterOptions = (from: number) => {
    let i = from;
    while (i < words.length && words[i]!.startsWith("-")) i++;
    return i;
  };
  if (prog === "node" || prog === "nodejs" || prog === "bun") {
    const i = words.findIndex((w) => {
      const base = posix.basename(w);
      return base === "cohent.mjs" || base === "cohent.cjs" || base === "cohent.js";
    });
    return i !== -1 && words[i + 1] === "init";
  }
  if (prog === "cohent") return words[afterOptions(0)] === "init";
  const runner =
    prog === "npx" || prog === "pnpx" || prog === "bunx"
      ? 0
      : (prog === "npm" || prog === "pnpm" || prog === "yarn") &&
          ["exec", "dlx", "x"].includes(words[0] ?? "")
        ? 1
        : -1;
  if (runner === -1) return false;
  let i = afterOptions(runner);
  if (words[i] === "--") i++;
  const pkg = words[i] ?? "";
  if (pkg !== "cohent" && !pkg.startsWith("cohent@")) return false;
  const j = words[i + 1] === "--" ? i + 2 : i + 1;
  return words[j] === "init";
}
