// Just enough Markdown for the docs test: fenced blocks, headings and their GitHub anchors, links.
// No renderer dependency: the docs use plain CommonMark, and what GitHub does with it is spelled out here.

export interface Block {
  lang: string;
  body: string;
  /** The nearest heading above the block (its text), "" before the first. */
  heading: string;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w-]*).*$/;

/** Each line tagged with whether it is inside a fenced block (fence lines count as inside). */
function fenceMap(md: string): { line: string; fenced: boolean }[] {
  let open: string | null = null;
  return md.split("\n").map((line) => {
    const m = FENCE.exec(line);
    if (open === null && m) {
      open = m[1]!;
      return { line, fenced: true };
    }
    if (open !== null) {
      if (m && m[1]!.startsWith(open[0]!) && m[1]!.length >= open.length && m[2] === "") open = null;
      return { line, fenced: true };
    }
    return { line, fenced: false };
  });
}

export function fencedBlocks(md: string): Block[] {
  const blocks: Block[] = [];
  let heading = "";
  let cur: { lang: string; lines: string[] } | null = null;
  let open: string | null = null;
  for (const line of md.split("\n")) {
    const m = FENCE.exec(line);
    if (cur === null) {
      const h = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
      if (h) heading = h[1]!;
      else if (m) {
        open = m[1]!;
        cur = { lang: m[2] ?? "", lines: [] };
      }
    } else if (m && m[1]!.startsWith(open![0]!) && m[1]!.length >= open!.length && m[2] === "") {
      blocks.push({ lang: cur.lang, body: cur.lines.join("\n"), heading });
      cur = null;
    } else cur.lines.push(line);
  }
  return blocks;
}

/** The text of `md` with fenced blocks and inline code blanked out (so links and headings in code are not seen). */
export function prose(md: string): string {
  return fenceMap(md)
    .map(({ line, fenced }) =>
      fenced ? "" : line.replace(/(`+)(?:(?!\1)[\s\S])*?\1/g, (c) => " ".repeat(c.length)),
    )
    .join("\n");
}

/** A heading's anchor as GitHub makes it (github-slugger): rendered text, lower case, punctuation dropped, spaces to hyphens. */
export function slug(headingText: string): string {
  const text = headingText
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // a link or image: its text
    .replace(/<[^>]+>/g, "") // inline HTML: gone
    .replace(/&amp;/g, "&")
    .replace(/`/g, "")
    .replace(/(\*\*|__|\*)(.+?)\1/g, "$2") // emphasis: its text
    .replace(/(^|[^\p{L}\p{N}])_(.+?)_(?![\p{L}\p{N}])/gu, "$1$2")
    .trim();
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** Every anchor a page offers: its headings' slugs (a repeat gets -1, -2 …) and explicit <a id|name>. */
export function anchors(md: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { line, fenced } of fenceMap(md)) {
    if (fenced) continue;
    const h = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (h) {
      const base = slug(h[1]!);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      out.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const a of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(a[1]!);
  }
  return out;
}

export interface Link {
  target: string;
  /** 1-based line of the link in its file. */
  line: number;
}

/** Inline links and images, reference definitions and autolinks, outside code. */
export function links(md: string): Link[] {
  const text = prose(md);
  const lineOf = (i: number) => text.slice(0, i).split("\n").length;
  const out: Link[] = [];
  // [text](target "title"): text may hold one level of brackets and span lines.
  for (const m of text.matchAll(/\[(?:[^[\]]|\[[^[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g))
    out.push({ target: m[1]!, line: lineOf(m.index) });
  for (const m of text.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm))
    out.push({ target: m[1]!, line: lineOf(m.index) });
  for (const m of text.matchAll(/<((?:https?|mailto):[^>\s]+)>/g))
    out.push({ target: m[1]!, line: lineOf(m.index) });
  return out;
}
