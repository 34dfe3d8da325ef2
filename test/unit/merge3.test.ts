import { describe, expect, it } from "vitest";
import { matchLines, merge3 } from "../../adapter/src/held/merge3.js";

/** The three-way line merge restore uses: base = as the caught call left the file, ours = before it, theirs = now. */

const L = (...xs: string[]) => xs.map((x) => `${x}\n`).join("");
const ten = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"];
const with_ = (i: number, v: string, xs = ten) => xs.map((x, j) => (j === i ? v : x));

const rows: {
  name: string;
  base: string;
  ours: string;
  theirs: string;
  want: string | null;
  why?: string;
}[] = [
  {
    name: "no change since the call: ours comes back",
    base: L(...with_(1, "B")),
    ours: L(...ten),
    theirs: L(...with_(1, "B")),
    want: L(...ten),
  },
  {
    name: "the writer changed line 2, the holder line 8 later: both sides kept",
    base: L(...with_(1, "B")),
    ours: L(...ten),
    theirs: L(...with_(7, "A", with_(1, "B"))),
    want: L(...with_(7, "A")),
  },
  {
    name: "the holder appended lines far from the writer's change",
    base: L(...with_(0, "B")),
    ours: L(...ten),
    theirs: L(...with_(0, "B"), "11", "12"),
    want: L(...ten, "11", "12"),
  },
  {
    name: "the writer deleted lines, the holder inserted elsewhere",
    base: L("1", "2", "7", "8", "9", "10"),
    ours: L(...ten),
    theirs: L("0", "1", "2", "7", "8", "9", "10"),
    want: L("0", ...ten),
  },
  {
    name: "the writer inserted lines, the holder deleted one elsewhere",
    base: L("1", "2", "x", "y", "3", "4", "5", "6", "7", "8", "9", "10"),
    ours: L(...ten),
    theirs: L("1", "2", "x", "y", "3", "4", "5", "6", "7", "8", "10"),
    want: L("1", "2", "3", "4", "5", "6", "7", "8", "10"),
  },
  {
    name: "both made the same change: no conflict",
    base: L(...with_(4, "S")),
    ours: L(...with_(4, "S")),
    theirs: L(...with_(4, "S")),
    want: L(...with_(4, "S")),
  },
  {
    name: "the holder edited the very line the writer changed: conflict",
    base: L(...with_(4, "B")),
    ours: L(...ten),
    theirs: L(...with_(4, "A")),
    want: null,
    why: "conflict",
  },
  {
    name: "adjacent lines are a conflict, as in diff3",
    base: L(...with_(4, "B")),
    ours: L(...ten),
    theirs: L(...with_(5, "A", with_(4, "B"))),
    want: null,
    why: "conflict",
  },
  {
    name: "a whole rewrite, then the holder's addition to it: conflict",
    base: L("overwritten"),
    ours: L(...ten),
    theirs: L("overwritten", "mine"),
    want: null,
    why: "conflict",
  },
  {
    name: "CRLF and no final newline survive byte for byte",
    base: "a\r\nB\r\nc\r\nd\r\ne\r\nf",
    ours: "a\r\nb\r\nc\r\nd\r\ne\r\nf",
    theirs: "a\r\nB\r\nc\r\nd\r\ne\r\nF",
    want: "a\r\nb\r\nc\r\nd\r\ne\r\nF",
  },
  {
    name: "non-UTF-8 bytes survive",
    base: "caf\xe9\nB\nx\ny\n",
    ours: "caf\xe9\nb\nx\ny\n",
    theirs: "caf\xe9\nB\nx\ny\nz\xff\n",
    want: "caf\xe9\nb\nx\ny\nz\xff\n",
  },
  {
    name: "empty files",
    base: "",
    ours: "",
    theirs: L("new"),
    want: L("new"),
  },
  {
    name: "a NUL byte anywhere: binary, not merged",
    base: "a\n\0\n",
    ours: "a\n",
    theirs: "a\n\0\nb\n",
    want: null,
    why: "binary",
  },
];

describe("merge3", () => {
  for (const r of rows)
    it(r.name, () => {
      const got = merge3(
        Buffer.from(r.base, "latin1"),
        Buffer.from(r.ours, "latin1"),
        Buffer.from(r.theirs, "latin1"),
      );
      if (r.want === null) expect(got).toEqual({ clean: false, why: r.why });
      else {
        expect(got.clean).toBe(true);
        if (got.clean) expect(got.bytes.toString("latin1")).toBe(r.want);
      }
    });

  it("files too different to diff within the bound are not merged", () => {
    const a = Array.from({ length: 6_000 }, (_, i) => `a${i}\n`).join("");
    const b = Array.from({ length: 6_000 }, (_, i) => `b${i}\n`).join("");
    expect(merge3(Buffer.from(a), Buffer.from(b), Buffer.from(a))).toEqual({
      clean: false,
      why: "too-different",
    });
  });
});

describe("matchLines", () => {
  /** The longest common subsequence's length, by dynamic programming. */
  function lcs(a: number[], b: number[]): number {
    const t = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
    for (let i = 1; i <= a.length; i++)
      for (let j = 1; j <= b.length; j++)
        t[i]![j] = a[i - 1] === b[j - 1] ? t[i - 1]![j - 1]! + 1 : Math.max(t[i - 1]![j]!, t[i]![j - 1]!);
    return t[a.length]![b.length]!;
  }

  it("matches equal lines, in order, as many as a longest common subsequence (200 random pairs)", () => {
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31), seed % n);
    for (let t = 0; t < 200; t++) {
      const a = Array.from({ length: rnd(30) }, () => rnd(4));
      const b = Array.from({ length: rnd(30) }, () => rnd(4));
      const m = matchLines(a, b)!;
      let last = -1;
      let count = 0;
      m.forEach((j, i) => {
        if (j < 0) return;
        expect(a[i]).toBe(b[j]);
        expect(j).toBeGreaterThan(last);
        last = j;
        count++;
      });
      expect(count, `${a} / ${b}`).toBe(lcs(a, b));
    }
  });
});
