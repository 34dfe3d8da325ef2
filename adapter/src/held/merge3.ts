/**
 * A three-way line merge (diff3), pure, on bytes. Restore uses it to carry
 * an edit made since a catch over the bytes it puts back: `base` is the file
 * as the caught call left it, `ours` as it was before that call, `theirs` as
 * it is now. Lines keep their terminators, so "\r\n" and a missing final
 * newline come out byte for byte. Like diff3 and `git merge-file`, changes
 * that overlap or touch (adjacent lines) are a conflict: restore then keeps
 * both versions rather than guess.
 */

export type Merge3 =
  { clean: true; bytes: Buffer } | { clean: false; why: "conflict" | "binary" | "too-different" };

/**
 * Steps (and kept trace entries) Myers' diff may take per pair of files, past
 * which the pair counts as too different to merge: about 2,200 differing
 * lines, at most ~20 MB of trace, well under a second.
 */
const MAX_WORK = 5_000_000;

/** Splits after each "\n"; the last line may lack one. Latin-1 maps each byte to one char and back, so any encoding survives. */
export function lines(bytes: Buffer): string[] {
  const text = bytes.toString("latin1");
  const out: string[] = [];
  let from = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", from)) {
    out.push(text.slice(from, i + 1));
    from = i + 1;
  }
  if (from < text.length) out.push(text.slice(from));
  return out;
}

/**
 * For each line of `a`, the index of the line of `b` it is matched to by a
 * shortest edit script (Myers), or -1; null when the files are too
 * different (past MAX_WORK). Common head and tail are matched first.
 */
export function matchLines<T>(a: readonly T[], b: readonly T[]): Int32Array | null {
  const m = new Int32Array(a.length).fill(-1);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) m[head] = head++;
  let ta = a.length;
  let tb = b.length;
  while (ta > head && tb > head && a[ta - 1] === b[tb - 1]) m[--ta] = --tb;
  const n = ta - head;
  const k = tb - head;
  if (n === 0 || k === 0) return m;
  const max = n + k;
  const off = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let work = 0;
  let found = -1;
  for (let d = 0; d <= max && found < 0; d++) {
    trace.push(v.slice(off - d - 1, off + d + 2));
    work += 2 * d + 3;
    for (let dg = -d; dg <= d; dg += 2) {
      let x =
        dg === -d || (dg !== d && v[off + dg - 1]! < v[off + dg + 1]!)
          ? v[off + dg + 1]!
          : v[off + dg - 1]! + 1;
      let y = x - dg;
      const from = x;
      while (x < n && y < k && a[head + x] === b[head + y]) {
        x++;
        y++;
      }
      v[off + dg] = x;
      work += 1 + x - from;
      if (x >= n && y >= k) {
        found = d;
        break;
      }
    }
    if (work > MAX_WORK) return null;
  }
  // Walk the trace back from (n, k): each snake's diagonal run is a stretch of matched lines.
  let x = n;
  let y = k;
  for (let d = found; d > 0; d--) {
    const t = trace[d]!; // v as it was before step d, indexed by diagonal + d + 1
    const at = (dg: number) => t[dg + d + 1]!;
    const dg = x - y;
    const down = dg === -d || (dg !== d && at(dg - 1) < at(dg + 1));
    const prev = down ? dg + 1 : dg - 1;
    const px = at(prev);
    const py = px - prev;
    const sx = down ? px : px + 1; // where this step's snake starts
    while (x > sx && y > sx - dg) m[head + --x] = head + --y;
    x = px;
    y = py;
  }
  while (x > 0 && y > 0) m[head + --x] = head + --y;
  return m;
}

const same = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((l, i) => l === b[i]);

/** Merges the change from `base` to `theirs` into `ours` (and the reverse): see the module comment. */
export function merge3(base: Buffer, ours: Buffer, theirs: Buffer): Merge3 {
  if (base.includes(0) || ours.includes(0) || theirs.includes(0)) return { clean: false, why: "binary" };
  const O = lines(base);
  const A = lines(ours);
  const B = lines(theirs);
  // Lines are compared as strings: cheaper than interning them (hashing each costs more than comparing a few).
  const ma = matchLines(O, A);
  const mb = matchLines(O, B);
  if (!ma || !mb) return { clean: false, why: "too-different" };
  const out: string[] = [];
  let io = 0;
  let ia = 0;
  let ib = 0;
  for (;;) {
    // A stable run: base lines matched in both, each right after the last.
    while (io < O.length && ma[io] === ia && mb[io] === ib) {
      out.push(O[io]!);
      io++;
      ia++;
      ib++;
    }
    if (io >= O.length && ia >= A.length && ib >= B.length) break;
    // The next base line matched in both ends the unstable chunk.
    let jo = io;
    while (jo < O.length && (ma[jo]! < 0 || mb[jo]! < 0)) jo++;
    const ja = jo < O.length ? ma[jo]! : A.length;
    const jb = jo < O.length ? mb[jo]! : B.length;
    const co = O.slice(io, jo);
    const ca = A.slice(ia, ja);
    const cb = B.slice(ib, jb);
    if (same(ca, co)) out.push(...cb);
    else if (same(cb, co) || same(ca, cb)) out.push(...ca);
    else return { clean: false, why: "conflict" };
    [io, ia, ib] = [jo, ja, jb];
  }
  return { clean: true, bytes: Buffer.from(out.join(""), "latin1") };
}
