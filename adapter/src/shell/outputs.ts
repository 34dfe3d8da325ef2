import { posix } from "node:path";
import type { Word } from "./reader.js";
import type { Reader } from "./commands.js";
import * as P from "./programs.js";

/**
 * Programs that write where an option or operand says: downloads (curl,
 * wget), archives unpacked into a folder (tar -C, unzip -d, 7z -o),
 * compilers and generators with an output file or folder (tsc --outDir,
 * esbuild --outdir, protoc --x_out, gcc -o …), xxd's and split's outputs,
 * sqlite3's dot-commands. A folder a program fills is a `tree` target: all
 * below it may change. Each takes the reader and says whether the program
 * only reads (null: not one of these programs).
 */

/** One option and its value, read getopt-style. */
interface Opt {
  name: string;
  value: Word | null;
}

/**
 * A command's options and operands: `shorts` the letters that take a value
 * (the rest of their cluster or the next word), `longs` the long names that
 * do (`--name VALUE` or `--name=VALUE`; any `--name=VALUE` keeps its value).
 */
export function getopt(
  args: Word[],
  shorts: string,
  longs: ReadonlySet<string>,
): { opts: Opt[]; operands: Word[] } {
  const opts: Opt[] = [];
  const operands: Word[] = [];
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const t = w.text;
    if (w.dynamic || t === "-" || !t.startsWith("-")) {
      operands.push(w);
      continue;
    }
    if (t === "--") {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (t.startsWith("--")) {
      const eq = t.indexOf("=");
      const name = eq === -1 ? t.slice(2) : t.slice(2, eq);
      if (eq !== -1) opts.push({ name, value: { ...w, text: t.slice(eq + 1) } });
      else if (longs.has(name)) opts.push({ name, value: args[++i] ?? null });
      else opts.push({ name, value: null });
      continue;
    }
    for (let k = 1; k < t.length; k++) {
      const c = t[k]!;
      if (!shorts.includes(c)) {
        opts.push({ name: c, value: null });
        continue;
      }
      const rest = t.slice(k + 1);
      opts.push({ name: c, value: rest ? { ...w, text: rest } : (args[++i] ?? null) });
      break;
    }
  }
  return { opts, operands };
}

const values = (opts: Opt[], ...names: string[]): Word[] =>
  opts.filter((o) => names.includes(o.name) && o.value).map((o) => o.value!);

/** The file a URL's path ends in (what `curl -O` and `wget` name it), or null. */
function urlFile(url: string): string | null {
  const m = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*(\/[^?#]*)?/i.exec(url);
  if (!m) return null;
  const name = posix.basename(m[1] ?? "");
  return name || null;
}

const under = (dir: Word | undefined, name: string): Word =>
  dir ? { ...dir, text: `${dir.text.replace(/\/+$/, "")}/${name}` } : P.word(name);

const CURL_SHORTS = "oDcKdHuUrAeEbFTxXmwYyzCQtP";
const CURL_LONGS = P.set(
  "output dump-header cookie-jar trace trace-ascii stderr libcurl etag-save hsts alt-svc output-dir config " +
    "data data-binary data-raw data-urlencode data-ascii header user proxy-user range user-agent referer cert " +
    "key cookie form form-string upload-file proxy request max-time write-out url connect-timeout retry " +
    "cacert capath resolve connect-to interface json variable",
);
const CURL_WRITES = ["o", "output", "D", "dump-header", "c", "cookie-jar", "trace", "trace-ascii", "stderr"];

function curl(r: Reader, args: Word[], cwd: string | null): boolean {
  const { opts, operands } = getopt(args, CURL_SHORTS, CURL_LONGS);
  let reads = true;
  for (const w of values(opts, ...CURL_WRITES, "libcurl", "etag-save", "hsts", "alt-svc")) {
    if (w.text === "-" || w.text === "%") continue;
    r.add(w, cwd, "write");
    reads = false;
  }
  // -O names the file after the URL (or the server, with -J): uncertain, in --output-dir.
  if (opts.some((o) => o.name === "O" || o.name === "remote-name" || o.name === "remote-name-all")) {
    const dir = values(opts, "output-dir")[0];
    for (const u of operands) {
      const name = u.dynamic ? null : urlFile(u.text);
      if (name) r.add(under(dir, name), cwd, "write", "uncertain");
    }
    reads = false;
  }
  return reads;
}

const WGET_SHORTS = "OoaPeiBTtwUQlDARIX";
const WGET_LONGS = P.set(
  "output-document output-file append-output directory-prefix execute input-file base timeout tries wait " +
    "user-agent quota level domains accept reject include-directories exclude-directories header user password " +
    "post-data post-file body-data method load-cookies save-cookies",
);

function wget(r: Reader, args: Word[], cwd: string | null): boolean {
  const { opts, operands } = getopt(args, WGET_SHORTS, WGET_LONGS);
  const has = (...n: string[]) => opts.some((o) => n.includes(o.name));
  let reads = true;
  const add = (ws: Word[], mode: "write" | "append") => {
    for (const w of ws)
      if (w.text !== "-") {
        r.add(w, cwd, mode);
        reads = false;
      }
  };
  add(values(opts, "o", "output-file", "save-cookies"), "write");
  add(values(opts, "a", "append-output"), "append");
  const doc = values(opts, "O", "output-document");
  if (doc.length) {
    add(doc, "write");
    return reads;
  }
  if (has("spider")) return reads;
  const dir = values(opts, "P", "directory-prefix")[0];
  if (dir) r.add(dir, cwd, "tree");
  for (const u of operands) {
    if (u.dynamic) continue;
    // Recursive: a folder named after the host (unless -nd); else the URL's file, index.html for a folder.
    const host = /^[a-z][a-z0-9+.-]*:\/\/([^/?#:]+)/i.exec(u.text)?.[1] ?? u.text.split("/")[0]!;
    if (has("r", "recursive", "m", "mirror")) r.add(under(dir, host), cwd, "tree", "uncertain");
    else r.add(under(dir, urlFile(u.text) ?? "index.html"), cwd, "write", "uncertain");
  }
  return false;
}

/** tar extracting: into -C DIR (a tree), and the members it names. Null when not extracting. */
export function tarExtract(r: Reader, args: Word[], cwd: string | null): false {
  const first = args[0];
  const bundle = first && !first.dynamic && !first.text.startsWith("-") ? first.text : "";
  const rest = bundle ? args.slice(1) : args;
  // The old style (`tar xzf a.tgz -C dir`): the bundle's value letters take the next words.
  let i = 0;
  for (const c of bundle) if ("fCbTXgHKNLVIF".includes(c)) i++;
  const { opts, operands } = getopt(
    rest.slice(i),
    "fCbTXgHKNLVIF",
    P.set("file directory exclude files-from exclude-from transform xform use-compress-program to-command"),
  );
  const dirs = values(opts, "C", "directory");
  if (bundle.includes("C")) {
    const at = [...bundle].filter((c) => "fCbTXgHKNLVIF".includes(c)).indexOf("C");
    if (rest[at]) dirs.push(rest[at]);
  }
  for (const d of dirs) r.add(d, cwd, "tree");
  const dir = dirs[dirs.length - 1];
  // With --strip-components the members land elsewhere: the folder stands for them.
  const strip = opts.some((o) => o.name === "strip-components");
  const members = strip ? [] : operands.filter((w) => !w.text.includes("*"));
  for (const m of members)
    r.add(under(dir, m.text.replace(/^\/+/, "")), cwd, "write", dir?.dynamic ? "uncertain" : "named");
  return false;
}

function unzip(r: Reader, args: Word[], cwd: string | null): boolean {
  const { opts, operands } = getopt(args, "dPx", new Set());
  if (opts.some((o) => "lptvcz".includes(o.name) && o.name.length === 1)) return true;
  const dir = values(opts, "d")[0];
  if (dir) r.add(dir, cwd, "tree");
  for (const m of operands.slice(1)) r.add(under(dir, m.text), cwd, "write");
  return false;
}

function sevenZip(r: Reader, args: Word[], cwd: string | null): boolean {
  const verb = args[0]?.text ?? "";
  if (verb === "l" || verb === "t" || verb === "h" || verb === "i") return true;
  for (const w of args)
    if (w.text.startsWith("-o") && w.text.length > 2) r.add({ ...w, text: w.text.slice(2) }, cwd, "tree");
  // a, u, d, rn: the archive is written.
  if ("audr".includes(verb[0] ?? "x") && verb.length <= 2) {
    const archive = P.operands(args.slice(1))[0];
    if (archive) r.add(archive, cwd, "write");
  }
  return false;
}

/** Compilers and generators: the options naming the folder they fill (tree) and the file they write. */
interface Outputs {
  tree?: string[];
  write?: string[];
  /** Option names compare without case (tsc). */
  fold?: boolean;
}

const OUTPUTS: Record<string, Outputs> = {
  tsc: {
    tree: ["--outDir", "--declarationDir"],
    write: ["--outFile", "--out", "--tsBuildInfoFile"],
    fold: true,
  },
  "vue-tsc": { tree: ["--outDir", "--declarationDir"], write: ["--outFile"], fold: true },
  esbuild: { tree: ["--outdir"], write: ["--outfile", "--metafile"] },
  babel: { tree: ["-d", "--out-dir"], write: ["-o", "--out-file"] },
  swc: { tree: ["-d", "--out-dir"], write: ["-o", "--out-file"] },
  tsup: { tree: ["-d", "--out-dir"] },
  rollup: { tree: ["-d", "--dir"], write: ["-o", "--file"] },
  webpack: { tree: ["-o", "--output-path"] },
  "webpack-cli": { tree: ["-o", "--output-path"] },
  vite: { tree: ["--outDir"] },
  parcel: { tree: ["--dist-dir"] },
  javac: { tree: ["-d", "-s", "-h"] },
  kotlinc: { tree: ["-d"] },
  gcc: { write: ["-o", "-MF"] },
  "g++": { write: ["-o", "-MF"] },
  cc: { write: ["-o", "-MF"] },
  "c++": { write: ["-o", "-MF"] },
  clang: { write: ["-o", "-MF"] },
  "clang++": { write: ["-o", "-MF"] },
  rustc: { write: ["-o"], tree: ["--out-dir"] },
  cargo: { tree: ["--target-dir", "--out-dir", "--artifact-dir"] },
  pip: { tree: ["-t", "--target", "-d", "--dest", "-w", "--wheel-dir", "--prefix", "--root"] },
  build: { tree: ["-o", "--outdir"] },
  pandoc: { write: ["-o", "--output"] },
  "openapi-generator": { tree: ["-o", "--output"] },
  "openapi-generator-cli": { tree: ["-o", "--output"] },
  buf: { tree: ["-o", "--output"] },
  mkdocs: { tree: ["-d", "--site-dir"] },
  hugo: { tree: ["-d", "--destination"] },
  jekyll: { tree: ["-d", "--destination"] },
  openssl: { write: ["-out", "-keyout"] },
  gpg: { write: ["-o", "--output"] },
  iconv: { write: ["-o", "--output"] },
  base64: { write: ["-o", "--output"] },
  npm: { tree: ["--pack-destination"] },
  pnpm: { tree: ["--pack-destination"] },
  yarn: { write: ["--out", "--filename"] },
  gh: { tree: ["-D", "--dir"], write: ["-O", "--output"] },
};

/** The values of the options named (`-o V`, `-oV` for a one-letter one, `--name V`, `--name=V`). */
function named(args: Word[], names: string[], fold: boolean): Word[] {
  const out: Word[] = [];
  const eq = (a: string, b: string) => (fold ? a.toLowerCase() === b.toLowerCase() : a === b);
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const t = w.text;
    if (w.dynamic || !t.startsWith("-")) continue;
    if (t === "--") break;
    for (const n of names) {
      if (eq(t, n)) {
        if (args[i + 1]) out.push(args[++i]!);
      } else if (n.startsWith("--") && t.length > n.length && eq(t.slice(0, n.length + 1), n + "="))
        out.push({ ...w, text: t.slice(n.length + 1) });
      else if (n.length === 2 && !t.startsWith("--") && t.startsWith(n) && t.length > 2)
        out.push({ ...w, text: t.slice(2) });
      else continue;
      break;
    }
  }
  return out;
}

/** protoc: each `--NAME_out=[OPTIONS:]DIR` fills DIR; -o / --descriptor_set_out writes a file. */
function protoc(r: Reader, args: Word[], cwd: string | null): false {
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const m = /^--([A-Za-z0-9_]+)_out(?:=(.*))?$/.exec(w.text);
    if (!m || w.dynamic) continue;
    let value = m[2] ?? args[++i]?.text;
    if (value === undefined) continue;
    if (m[1] === "descriptor_set") {
      r.add({ ...w, text: value }, cwd, "write");
      continue;
    }
    const colon = value.lastIndexOf(":");
    if (colon !== -1) value = value.slice(colon + 1);
    r.add({ ...w, text: value }, cwd, "tree");
  }
  for (const o of named(args, ["-o"], false)) r.add(o, cwd, "write");
  return false;
}

/** xxd [options] [infile [outfile]]: the second operand is written. */
function xxd(r: Reader, args: Word[], cwd: string | null): boolean {
  const { operands } = getopt(args, "cglosn", P.set("cols groupsize len seek offset name"));
  const out = operands[1];
  if (!out || out.text === "-") return true;
  r.add(out, cwd, "write");
  return false;
}

/** split and csplit write PREFIX followed by a suffix: the files PREFIX*. */
function split(r: Reader, name: string, args: Word[], cwd: string | null): false {
  const csplit = name === "csplit";
  const { opts, operands } = getopt(
    args,
    csplit ? "fbn" : "abCdlnt",
    P.set(
      "prefix suffix-format digits suffix-length bytes line-bytes lines number additional-suffix separator filter",
    ),
  );
  const prefix = csplit ? (values(opts, "f", "prefix")[0]?.text ?? "xx") : (operands[1]?.text ?? "x");
  const dyn = csplit ? !!values(opts, "f", "prefix")[0]?.dynamic : !!operands[1]?.dynamic;
  r.add({ text: `${prefix}*`, dynamic: dyn, assign: false }, cwd, "write");
  return false;
}

const SQLITE_WRITES = new Set([".output", ".once", ".save", ".backup", ".excel"]);
const SQLITE_VALUES = P.set("-init -separator -newline -nullvalue -vfs -maxsize -mmap -pagecache -lookaside");

/** sqlite3: its database (may be written), and dot-commands that write files or run a shell. */
function sqlite(r: Reader, args: Word[], cwd: string | null, depth: number): false {
  // Its options are spelled with one dash (-cmd, -init).
  const texts: string[] = [];
  const operands: Word[] = [];
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!.text;
    if (args[i]!.dynamic || !t.startsWith("-")) operands.push(args[i]!);
    else if (t === "-cmd" || t === "--cmd") texts.push(args[++i]?.text ?? "");
    else if (SQLITE_VALUES.has(t)) i++;
  }
  const [db, ...sql] = operands;
  if (db && db.text !== ":memory:") r.add(db, cwd, "write", "uncertain");
  texts.push(...sql.map((w) => w.text));
  if (r.stdin !== null) texts.push(r.stdin);
  else texts.push(...r.heredocs());
  for (const text of texts)
    for (const raw of text.split("\n")) {
      const line = raw.trim();
      if (!line.startsWith(".")) continue;
      const words = line.split(/\s+/).map((w) => w.replace(/^(['"])(.*)\1$/, "$2"));
      const cmd = words[0]!;
      if (SQLITE_WRITES.has(cmd)) {
        const file = words
          .slice(1)
          .filter((w) => !w.startsWith("-"))
          .pop();
        if (file) r.add(P.word(file), cwd, "write");
      } else if ((cmd === ".shell" || cmd === ".system") && depth < 4)
        r.line(line.slice(cmd.length), cwd, depth + 1);
    }
  return false;
}

/** sphinx-build SOURCE OUTPUT: the output folder. */
function sphinx(r: Reader, args: Word[], cwd: string | null): false {
  const out = P.operands(args, P.set("-b -d -c -D -A -t -j -w"))[1];
  if (out) r.add(out, cwd, "tree");
  return false;
}

/** gh repo clone REPO [DIR]: DIR, else the repository's name. */
function ghClone(r: Reader, args: Word[], cwd: string | null): boolean | null {
  if (args[0]?.text !== "repo" || args[1]?.text !== "clone") return null;
  const ops = P.operands(args.slice(2));
  const dir = ops[1] ?? (ops[0] && { ...ops[0], text: posix.basename(ops[0].text).replace(/\.git$/, "") });
  if (dir) r.add(dir, cwd, "tree");
  return false;
}

/** docker cp SRC DEST: a destination on this machine (no `container:` before it). */
function docker(r: Reader, args: Word[], cwd: string | null): false {
  if (args[0]?.text !== "cp" && !(args[0]?.text === "container" && args[1]?.text === "cp")) return false;
  const ops = P.operands(args.slice(args[0]!.text === "cp" ? 1 : 2));
  const dest = ops[ops.length - 1];
  if (ops.length === 2 && dest && !/^[^/]+:/.test(dest.text)) r.add(dest, cwd, "tree");
  return false;
}

/**
 * The programs of this file; null for any other. `name` is the program's
 * name, `args` its words after it.
 */
export function outputs(
  r: Reader,
  name: string,
  args: Word[],
  cwd: string | null,
  depth: number,
): boolean | null {
  switch (name) {
    case "curl":
      return curl(r, args, cwd);
    case "wget":
      return wget(r, args, cwd);
    case "unzip":
      return unzip(r, args, cwd);
    case "7z":
    case "7za":
    case "7zz":
      return sevenZip(r, args, cwd);
    case "protoc":
    case "grpc_tools.protoc":
      return protoc(r, args, cwd);
    case "xxd":
      return xxd(r, args, cwd);
    case "split":
    case "csplit":
      return split(r, name, args, cwd);
    case "sqlite3":
      return sqlite(r, args, cwd, depth);
    case "sphinx-build":
      return sphinx(r, args, cwd);
    case "docker":
    case "podman":
      return docker(r, args, cwd);
    case "gh":
      return ghClone(r, args, cwd);
  }
  return null;
}

/**
 * The output options of a compiler or generator (OUTPUTS): added as
 * targets; true when it named one. Other programs: false.
 */
export function outputOptions(r: Reader, name: string, args: Word[], cwd: string | null): boolean {
  const key = Object.hasOwn(OUTPUTS, name) ? name : P.unversioned(name);
  const o = Object.hasOwn(OUTPUTS, key) ? OUTPUTS[key]! : undefined;
  if (!o) return false;
  const trees = named(args, o.tree ?? [], !!o.fold);
  const files = named(args, o.write ?? [], !!o.fold);
  for (const w of trees) r.add(w, cwd, "tree");
  for (const w of files) if (w.text !== "-") r.add(w, cwd, "write");
  return trees.length + files.length > 0;
}
