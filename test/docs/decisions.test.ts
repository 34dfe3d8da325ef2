// The decision records are numbered, each with a status and a date, and the index lists them as they are:
// docs/decisions/NNNN-<name>.md, 0001 up without a gap, "- Status:" and "- Date:" right under the title,
// a "superseded by" that names a later record which says it supersedes it, and one row per record in
// docs/decisions/README.md with the record's own status and date.
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const DIR = fileURLToPath(new URL("../../docs/decisions/", import.meta.url));

const NAME = /^(\d{4})-[a-z0-9]+(?:-[a-z0-9]+)*\.md$/;
const REF = /\[(\d{4})\]\((\d{4}-[a-z0-9-]+\.md)\)/g;
const STATUS =
  /^- Status: (accepted(?:; supersedes (?:\[\d{4}\]\(\d{4}-[a-z0-9-]+\.md\)(?:,| and )? ?)+)?|(?:partly )?superseded by (?:\[\d{4}\]\(\d{4}-[a-z0-9-]+\.md\)(?:,| and )? ?)+)$/;
const DATE = /^- Date: (\d{4}-\d{2}-\d{2})(?:, updated \d{4}-\d{2}-\d{2}(?: \([^)]+\))?)?$/;

interface Record {
  file: string;
  number: number;
  status: string;
  date: string;
}

/** What is wrong with a set of records and their index (empty: nothing). */
export function decisionProblems(files: Map<string, string>, index: string): string[] {
  const problems: string[] = [];
  const records: Record[] = [];
  for (const [file, text] of [...files].sort(([a], [b]) => a.localeCompare(b))) {
    const name = NAME.exec(file);
    if (!name) {
      problems.push(`${file}: not named NNNN-<name>.md`);
      continue;
    }
    const lines = text.split("\n");
    if (!lines[0]?.startsWith("# ") || lines[1] !== "") problems.push(`${file}: no title, then a blank line`);
    const status = STATUS.exec(lines[2] ?? "");
    const date = DATE.exec(lines[3] ?? "");
    if (!status) problems.push(`${file}: line 3 is not "- Status: accepted | superseded by [NNNN](…)"`);
    if (!date) problems.push(`${file}: line 4 is not "- Date: YYYY-MM-DD[, updated YYYY-MM-DD]"`);
    records.push({ file, number: Number(name[1]), status: status?.[1] ?? "", date: date?.[1] ?? "" });
  }
  records.forEach((r, i) => {
    if (r.number !== i + 1)
      problems.push(`${r.file}: numbered ${r.number}, expected ${i + 1} (no gap, no repeat)`);
  });
  const byFile = new Map(records.map((r) => [r.file, r]));
  for (const r of records) {
    for (const [, num, target] of r.status.matchAll(REF)) {
      const other = byFile.get(target!);
      if (!other || !target!.startsWith(num!)) {
        problems.push(`${r.file}: its status links ${target}, which is no record`);
        continue;
      }
      const superseded = r.status.includes("superseded by");
      if (superseded && other.number <= r.number)
        problems.push(`${r.file}: superseded by an older record ${target}`);
      if (
        /^superseded by/.test(r.status) &&
        !other.status.includes(`supersedes [${r.file.slice(0, 4)}](${r.file})`)
      )
        problems.push(`${target}: its status does not say it supersedes ${r.file}`);
      if (
        r.status.startsWith("accepted; supersedes") &&
        !other.status.includes(`superseded by [${r.file.slice(0, 4)}]`)
      )
        problems.push(`${target}: superseded by ${r.file}, its status does not say so`);
    }
  }
  // The index: one table row per record, "| [NNNN](file): … | status | date | … |".
  const rows = new Map<string, string[]>();
  for (const line of index.split("\n")) {
    const m = /^\|\s*\[(\d{4})\]\((\d{4}-[a-z0-9-]+\.md)\)[^|]*\|([^|]*)\|([^|]*)\|/.exec(line);
    if (m) rows.set(m[2]!, [m[3]!.trim(), m[4]!.trim()]);
  }
  for (const r of records) {
    const row = rows.get(r.file);
    if (!row) {
      problems.push(`README.md: no row for ${r.file}`);
      continue;
    }
    // The index shows the status up to "; supersedes …" (that part is the newer record's own note).
    if (row[0] !== r.status.replace(/; supersedes .*$/, ""))
      problems.push(`README.md: ${r.file}'s status is "${row[0]}", the record says "${r.status}"`);
    if (row[1] !== r.date)
      problems.push(`README.md: ${r.file}'s date is "${row[1]}", the record says "${r.date}"`);
  }
  for (const file of rows.keys())
    if (!byFile.has(file)) problems.push(`README.md: a row for ${file}, which is no record`);
  return problems;
}

function onDisk(): { files: Map<string, string>; index: string } {
  const files = new Map<string, string>();
  for (const f of readdirSync(DIR))
    if (f.endsWith(".md") && f !== "README.md") files.set(f, readFileSync(path.join(DIR, f), "utf8"));
  return { files, index: readFileSync(path.join(DIR, "README.md"), "utf8") };
}

describe("decision records", () => {
  it("are numbered without a gap, each with a status and a date, and the index lists each as it is", () => {
    const { files, index } = onDisk();
    expect(files.size).toBeGreaterThan(0);
    expect(decisionProblems(files, index)).toEqual([]);
  });

  it("the check finds a gap, a missing status, a one-sided supersession and a stale index row", () => {
    const { files, index } = onDisk();
    const first = [...files.keys()].sort()[0]!;
    const broken = new Map(files);
    // A gap: the first record renumbered past the end.
    broken.set(first.replace(/^\d{4}/, "0999"), broken.get(first)!);
    broken.delete(first);
    expect(decisionProblems(broken, index).join("\n")).toMatch(/expected 1|no row for 0999/);

    const noStatus = new Map(files);
    noStatus.set(first, files.get(first)!.replace(/^- Status: .*$/m, "Status unknown"));
    expect(decisionProblems(noStatus, index).join("\n")).toContain(`${first}: line 3`);

    const oneSided = new Map(files);
    for (const [f, text] of files)
      if (/^- Status: accepted; supersedes/m.test(text))
        oneSided.set(f, text.replace(/^(- Status: accepted);.*$/m, "$1"));
    if ([...files.values()].some((t) => /^- Status: superseded by/m.test(t)))
      expect(decisionProblems(oneSided, index).join("\n")).toMatch(/does not say it supersedes/);

    const staleIndex = index.replace(/\| accepted +\|/, "| superseded by nothing |");
    expect(decisionProblems(files, staleIndex).join("\n")).toMatch(/README\.md: .*'s status is/);
  });
});
