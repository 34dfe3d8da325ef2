/**
 * Which string literals of a one-liner (node -e, python -c, perl -e, ruby
 * -e, php -r) are only read: each use is an argument a known call reads
 * (readFileSync, open without a write mode, a copy's source, File.read,
 * Path(…).read_text …). Any other use (a write call, a call this does not
 * know, a variable) leaves the literal a possible write. A pure scan.
 */

const words = (s: string) => new Set(s.split(" "));

/** Calls whose every argument is read. */
const READ_CALLS = words(
  "readFileSync readFile createReadStream existsSync exists statSync stat lstatSync lstat readdirSync readdir " +
    "accessSync access realpathSync readlinkSync readlink opendir opendirSync watch watchFile require import " +
    "readTextFile readTextFileSync readFileStr file_get_contents file_exists is_file is_dir is_readable filesize " +
    "read_text read_bytes readlines load_file safe_load_file loadtxt genfromtxt read_csv read_json read_excel " +
    "read_parquet read_table isfile isdir islink exists getsize getmtime listdir scandir walk glob iglob foreach " +
    "readable? exist? exists? file? directory? size? lines read binread",
);
/** Calls that read their first argument and write the others (copies). */
const COPY_CALLS = words("copyFileSync copyFile cpSync cp copy copy2 copyfile copytree cp_r install");
/** Calls that read or write by their mode argument. */
const OPEN_CALLS = words("open fopen openSync sysopen");
/** Calls that build a path: the literal's use is the built path's. */
const PATH_CALLS = words(
  "join resolve normalize Path PurePath PosixPath abspath expanduser realpath expand_path",
);
/** Methods of a Path object that only read. */
const PATH_READS = words(
  "read_text read_bytes exists is_file is_dir is_symlink stat lstat iterdir glob rglob resolve absolute samefile " +
    "readlines read lines each_line",
);

/** A mode that writes: 'w', 'a', 'x', '+', perl's '>' and '+<', a pipe. */
function writesMode(l: string): boolean {
  return /[wax+>|]/.test(l);
}

/** The text with each literal's content masked (same length), and where each literal is. */
function mask(text: string): { masked: string; spans: { start: number; end: number; value: string }[] } {
  const spans: { start: number; end: number; value: string }[] = [];
  let masked = "";
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const q = text[i];
    if (q !== "'" && q !== '"' && q !== "`") continue;
    let j = i + 1;
    let value = "";
    for (; j < text.length && text[j] !== q; j++) {
      if (text[j] === "\\" && j + 1 < text.length) value += text[++j];
      else value += text[j];
    }
    masked += text.slice(from, i + 1) + "_".repeat(Math.max(0, Math.min(j, text.length) - i - 1));
    from = j;
    spans.push({ start: i, end: Math.min(j, text.length - 1), value });
    i = j;
  }
  masked += text.slice(from);
  return { masked, spans };
}

const isName = (c: string | undefined) => !!c && /[A-Za-z0-9_?$]/.test(c);

/**
 * The use of the expression starting at `start` (a literal, or a call that
 * builds a path): "read", or "unknown". `depth` bounds the walk up through
 * path builders.
 */
function use(m: string, start: number, spans: Map<number, string>, depth: number): "read" | "unknown" {
  if (depth > 4) return "unknown";
  let i = start - 1;
  while (i >= 0 && /\s/.test(m[i]!)) i--;
  // The argument's place: after `(`, or after commas at the call's own depth.
  let arg = 0;
  let level = 0;
  for (; i >= 0; i--) {
    const c = m[i]!;
    if (c === ")" || c === "]" || c === "}") level++;
    else if (c === "(" || c === "[" || c === "{") {
      if (level === 0) break;
      level--;
    } else if (c === "," && level === 0) arg++;
    else if (level === 0 && (c === ";" || c === "\n" || c === "=")) return "unknown";
  }
  if (i < 0 || m[i] !== "(") return "unknown";
  const open = i;
  let j = open - 1;
  while (j >= 0 && m[j] === " ") j--;
  const nameEnd = j + 1;
  while (j >= 0 && isName(m[j])) j--;
  const name = m.slice(j + 1, nameEnd);
  let callStart = j + 1;
  // A receiver (fs.readFileSync, File.read, os.path.join, require('fs').readFileSync).
  while (m[callStart - 1] === "." && isName(m[callStart - 2])) {
    let k = callStart - 2;
    while (k >= 0 && isName(m[k])) k--;
    callStart = k + 1;
  }
  if (!name) return "unknown";
  if (READ_CALLS.has(name)) return "read";
  const args = callArgs(m, open, spans);
  if (COPY_CALLS.has(name)) return arg === 0 ? "read" : "unknown";
  if (OPEN_CALLS.has(name)) {
    // open('x'), open('x', 'r'), fopen('x', 'rb'); perl's open(F, '<x') and open(F, '<', 'x').
    if (arg === 0)
      return args[1] === undefined ? "read" : args[1] !== null && !writesMode(args[1]) ? "read" : "unknown";
    const self = args[arg];
    if (arg === 1 && args.length === 2 && self !== null && self !== undefined)
      return /^\s*(<|[^>+|])/.test(self) && !self.trimEnd().endsWith("|") ? "read" : "unknown";
    if (arg === 2 && args[1] !== null && args[1] !== undefined && /^<(?!\+)/.test(args[1])) return "read";
    return "unknown";
  }
  if (PATH_CALLS.has(name)) {
    // Path('x').read_text(): the method after the call decides; else the built path is used where the call stands.
    const close = closing(m, open);
    if (close !== -1 && m[close + 1] === ".") {
      let k = close + 2;
      while (isName(m[k])) k++;
      const method = m.slice(close + 2, k);
      if (PATH_READS.has(method)) return "read";
      if (method === "open" && m[k] === "(") {
        const margs = callArgs(m, k, spans);
        return margs.length === 0 || (margs[0] !== null && !writesMode(margs[0]!)) ? "read" : "unknown";
      }
      return "unknown";
    }
    return use(m, callStart, spans, depth + 1);
  }
  return "unknown";
}

/** The index of the `)` closing the `(` at `open`, or -1. */
function closing(m: string, open: number): number {
  let level = 0;
  for (let i = open; i < m.length; i++) {
    if (m[i] === "(") level++;
    else if (m[i] === ")" && --level === 0) return i;
  }
  return -1;
}

/** A call's arguments: each a literal's value, or null when it is not a plain literal (a `mode='w'` keyword's literal counts). */
function callArgs(m: string, open: number, spans: Map<number, string>): (string | null)[] {
  const close = closing(m, open);
  if (close === -1) return [null];
  const out: (string | null)[] = [];
  let level = 0;
  let from = open + 1;
  const piece = (a: number, b: number) => {
    const t = m.slice(a, b).trim();
    if (t === "") return;
    // Python's keywords other than the mode (encoding='utf8') are not positional.
    if (/^[A-Za-z_]+\s*=[^=]/.test(t) && !/^(?:mode|flags)\s*=/.test(t)) return;
    const kw = /^(?:mode|flags|flag)\s*[=:]\s*/.exec(t);
    const body = kw ? t.slice(kw[0].length) : t;
    const at = a + m.slice(a, b).indexOf(body[0]!);
    const q = body[0];
    out.push(
      (q === "'" || q === '"' || q === "`") && body.length >= 2 && body.endsWith(q)
        ? (spans.get(at) ?? null)
        : null,
    );
  };
  for (let i = open + 1; i < close; i++) {
    const c = m[i]!;
    if (c === "(" || c === "[" || c === "{") level++;
    else if (c === ")" || c === "]" || c === "}") level--;
    else if (c === "," && level === 0) {
      piece(from, i);
      from = i + 1;
    }
  }
  piece(from, close);
  return out;
}

/** The literals of a script that are only read (every use a read). */
export function readLiterals(text: string): Set<string> {
  if (text.length > 65536) return new Set();
  const { masked, spans } = mask(text);
  const at = new Map(spans.map((s) => [s.start, s.value]));
  const read = new Set<string>();
  const written = new Set<string>();
  for (const s of spans) (use(masked, s.start, at, 0) === "read" ? read : written).add(s.value);
  for (const w of written) read.delete(w);
  return read;
}
