/**
 * What shell/writes.ts reads in text that is not shell words: a one-liner's
 * script (node -e, python -c, awk), here-document bodies fed to a program,
 * a unified diff, and the path-like words of text it could not read at all.
 * Every scan is one pass over its text, so that a hostile command costs its
 * length and no more.
 */

const isLetter = (c: string | undefined) => !!c && ((c >= "a" && c <= "z") || (c >= "A" && c <= "Z"));
const isDigit = (c: string | undefined) => !!c && c >= "0" && c <= "9";
const isSpace = (c: string | undefined) => c === " " || c === "\t" || c === "\n" || c === "\r";

/** A word that names a file: it has a slash, or ends in an extension (`.ts`, `.json`), or is `.`/`..`; no spaces, no URL, no option. */
export function pathLike(t: string): boolean {
  if (t === "" || t.length > 4096 || t[0] === "-") return false;
  if (t === "." || t === "..") return true;
  for (let i = 0; i < t.length; i++) if (isSpace(t[i])) return false;
  if (t.includes("://")) return false;
  if (t.includes("/")) return true;
  const dot = t.lastIndexOf(".");
  const ext = t.slice(dot + 1);
  if (dot === -1 || ext.length === 0 || ext.length > 10 || !isLetter(ext[0])) return false;
  for (const c of ext) if (!isLetter(c) && !isDigit(c) && c !== "_") return false;
  return true;
}

/** The characters that end a word of unread text, by code. */
const BREAKS = new Uint8Array(128);
for (const c of " \t\r\n'\"`;&|()<>=,{}") BREAKS[c.charCodeAt(0)] = 1;

/** The path-like words of a text the reader could not read, at most `max` of them. */
export function pathWords(text: string, max: number): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  let start = -1;
  for (let i = 0; i <= text.length && out.length < max; i++) {
    const code = i === text.length ? 10 : text.charCodeAt(i);
    const brk = code < 128 && BREAKS[code] === 1;
    if (!brk) {
      if (start === -1) start = i;
      continue;
    }
    if (start === -1) continue;
    let w = text.slice(start, i);
    start = -1;
    while (w.startsWith("$")) w = w.slice(1); // $X/a: the visible tail
    if (pathLike(w) && !seen.has(w)) {
      seen.add(w);
      out.push(w);
    }
  }
  return out;
}

/** A script's quoted string literals ('…', "…", `…`), and its text with each literal emptied. */
export function scriptLiterals(text: string): { literals: string[]; code: string } {
  const literals: string[] = [];
  let code = "";
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const q = text[i];
    if (q !== "'" && q !== '"' && q !== "`") continue;
    let j = i + 1;
    let lit = "";
    for (; j < text.length && text[j] !== q; j++) {
      if (text[j] === "\\" && j + 1 < text.length) lit += text[++j];
      else lit += text[j];
    }
    literals.push(lit);
    code += text.slice(from, i) + q + q;
    from = j + 1;
    i = j;
  }
  code += text.slice(from);
  return { literals, code };
}

/** The literals of a script that name files: the uncertain targets of a one-liner that may write. */
export function literalPaths(literals: string[]): string[] {
  const out: string[] = [];
  for (let l of literals) {
    // perl's two-argument open: ">out.txt", "<in.txt", ">>log".
    while (l[0] === ">" || l[0] === "<" || l[0] === "+") l = l.slice(1);
    if (pathLike(l) && l !== "." && l !== ".." && !out.includes(l)) out.push(l);
  }
  return out;
}

const words = (s: string) => new Set(s.split(" "));

/** Calls a read-only one-liner makes: reading files, printing, pure computation (node, python, perl, ruby, php). */
const READ_CALLS = words(
  "require readFileSync readFile readdirSync readdir statSync stat lstatSync lstat existsSync exists accessSync " +
    "realpathSync readlinkSync log error info warn dir table parse stringify keys values entries map filter forEach " +
    "reduce find findIndex some every join split slice trim trimEnd trimStart toString String Number Boolean Array " +
    "Object JSON parseInt parseFloat includes indexOf lastIndexOf startsWith endsWith match matchAll replace " +
    "replaceAll toUpperCase toLowerCase padStart padEnd repeat concat sort reverse flat flatMap isArray from then " +
    "resolve relative dirname basename extname normalize cwd Date Math max min abs round floor ceil assign freeze " +
    "Set Map has get add substring substr charAt charCodeAt fromCharCode encodeURIComponent decodeURIComponent " +
    "Buffer toJSON at isFile isDirectory push pop shift unshift splice toFixed test RegExp Symbol " +
    "print open len str int float bool repr sorted list dict set tuple range enumerate zip load loads dumps read " +
    "readline readlines read_text read_bytes is_file is_dir isfile isdir islink listdir scandir walk glob rglob " +
    "iterdir getsize getmtime splitlines strip lstrip rstrip format items upper lower Path PurePath relative_to " +
    "joinpath abspath realpath getcwd decode encode any all sum reversed hasattr isinstance type hex ord chr search " +
    "findall fullmatch compile sub group groups safe_load literal_eval __import__ exit " +
    "printf say close chomp chop defined each die warn length sprintf lc uc scalar wantarray lines " +
    "puts p pp each_line select reject to_s to_i to_a inspect " +
    "echo print_r var_dump file_get_contents json_decode json_encode count explode implode file array_keys " +
    "if for while switch catch function return typeof await async with elif not and or in is lambda",
);

/** Names that write, called with or without parentheses (perl and ruby drop them). */
const WRITE_WORDS = words(
  "writeFileSync writeFile appendFileSync appendFile createWriteStream rmSync rm rmdirSync rmdir unlinkSync " +
    "unlink renameSync rename copyFileSync copyFile cpSync cp mkdirSync mkdir mkdtemp truncateSync truncate " +
    "ftruncate symlinkSync symlink linkSync link chmodSync chmod chownSync chown utimesSync utimes write " +
    "write_text write_bytes writelines remove removedirs rmtree move copy copy2 copyfile copytree makedirs touch " +
    "system popen spawn spawnSync exec execSync execFile execFileSync fork subprocess child_process Popen " +
    "check_call check_output syswrite rm_rf rm_r rm_f mv cp_r mkdir_p ln_s ln_sf delete file_put_contents fwrite " +
    "fputs writeTextFile Command",
);

/** A file-mode literal that writes: 'w', 'a', 'x', 'r+', 'wb' (open, fopen, openSync), perl's '>' and '+<', a pipe. */
function writesMode(l: string): boolean {
  if (l[0] === ">" || l.startsWith("+<") || l.startsWith("+>") || l[0] === "|" || l.endsWith("|"))
    return true;
  if (l.length === 0 || l.length > 4) return false;
  let writes = false;
  for (const c of l) {
    if (!"rwabxts+".includes(c)) return false;
    if ("wax+".includes(c)) writes = true;
  }
  return writes;
}

/**
 * Whether a one-liner only reads: every call is to a known reader or pure
 * function, no name that writes appears, and no file mode writes. Anything
 * else (an API this does not know, a computed call) may write.
 */
export function scriptOnlyReads(text: string): boolean {
  if (text.length > 65536) return false;
  const { literals, code: raw } = scriptLiterals(text);
  // Printing (process.stdout.write, sys.stdout.write) writes no file.
  const code = raw.replaceAll("stdout.write", "stdout.print").replaceAll("stderr.write", "stderr.print");
  if (literals.some(writesMode)) return false;
  // A computed call (fs['writeFileSync'](…)), perl's in-place variable, a shell-out.
  if (code.includes("](") || code.includes(")(") || code.includes("$^I") || text.includes("`")) return false;
  for (let i = 0; i < code.length; i++) {
    const c = code[i]!;
    if (!isLetter(c) && c !== "_") continue;
    let j = i + 1;
    while (j < code.length && (isLetter(code[j]) || isDigit(code[j]) || code[j] === "_")) j++;
    const name = code.slice(i, j);
    let k = j;
    while (isSpace(code[k])) k++;
    if (WRITE_WORDS.has(name) || (code[k] === "(" && !READ_CALLS.has(name))) return false;
    i = j - 1;
  }
  return true;
}

/** An awk program that writes: print/printf into a file or a pipe, system(), or `-i inplace`. */
export function awkWrites(program: string): boolean {
  const { code } = scriptLiterals(program);
  if (code.includes("system") || code.includes("|")) return true;
  for (let i = code.indexOf("print"); i !== -1; i = code.indexOf("print", i + 5)) {
    for (let j = i + 5; j < code.length; j++) {
      const c = code[j];
      if (c === ";" || c === "}" || c === "\n") break;
      if (c === ">") return true;
    }
  }
  return false;
}

/** The bodies of the here-documents of a command, in order, at most `max` (a program reading one reads that text). */
export function heredocBodies(src: string, max: number): string[] {
  const out: string[] = [];
  const pending: string[] = [];
  let next = src.indexOf("<<");
  let i = 0;
  while (i < src.length && out.length < max) {
    const nl = src.indexOf("\n", i);
    const lineEnd = nl === -1 ? src.length : nl;
    if (next !== -1 && next < i) next = src.indexOf("<<", i);
    while (next !== -1 && next < lineEnd) {
      let k = next + 2;
      if (src[k] === "<") {
        next = src.indexOf("<<", k + 1);
        continue;
      }
      if (src[k] === "-") k++;
      while (src[k] === " " || src[k] === "\t") k++;
      const q = src[k];
      let delim = "";
      if (q === "'" || q === '"') {
        const e = src.indexOf(q, k + 1);
        if (e !== -1 && e < lineEnd) {
          delim = src.slice(k + 1, e);
          k = e + 1;
        }
      } else {
        let e = k;
        while (e < lineEnd && !" \t;&|<>()".includes(src[e]!)) e++;
        delim = src.slice(src[k] === "\\" ? k + 1 : k, e);
        k = e;
      }
      if (delim) pending.push(delim);
      next = src.indexOf("<<", k);
    }
    if (nl === -1) break;
    i = nl + 1;
    for (const delim of pending.splice(0)) {
      if (out.length >= max) break;
      const start = i;
      for (;;) {
        const n2 = src.indexOf("\n", i);
        const end = n2 === -1 ? src.length : n2;
        let line = src.slice(i, end);
        while (line[0] === "\t") line = line.slice(1);
        if (line === delim || n2 === -1) {
          out.push(src.slice(start, line === delim ? i : src.length));
          i = n2 === -1 ? src.length : n2 + 1;
          break;
        }
        i = n2 + 1;
      }
    }
  }
  return out;
}

/** The files a unified diff writes ("+++ b/x") or deletes ("+++ /dev/null" after "--- a/x"), `strip` leading components off. */
export function diffPaths(text: string, strip: number): { path: string; remove: boolean }[] {
  const out: { path: string; remove: boolean }[] = [];
  const clean = (s: string) => {
    const tab = s.indexOf("\t");
    let p = (tab === -1 ? s : s.slice(0, tab)).trim();
    if (p.length > 1 && p[0] === '"' && p.endsWith('"')) p = p.slice(1, -1);
    if (p === "/dev/null") return null;
    const parts = p.split("/");
    return parts.length > strip ? parts.slice(strip).join("/") : null;
  };
  let minus: string | null = null;
  for (const line of text.split("\n")) {
    if (line.startsWith("--- ")) minus = clean(line.slice(4));
    else if (line.startsWith("+++ ")) {
      const plus = clean(line.slice(4));
      if (plus !== null) out.push({ path: plus, remove: false });
      else if (minus !== null) out.push({ path: minus, remove: true });
      minus = null;
    }
  }
  return out;
}
