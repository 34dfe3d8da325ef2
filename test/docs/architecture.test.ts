// docs/architecture.md stays true to the code: its Mermaid graph has exactly the package imports the sources
// make (a dotted arrow where every import is a type only), every file path it names exists, and no backend
// file outside the store imports a database driver or Prisma's generated clients.
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DOC = readFileSync(path.join(ROOT, "docs/architecture.md"), "utf8");

const SKIP = new Set(["node_modules", "dist", "build", ".svelte-kit", "generated"]);
const SOURCE = /\.(?:ts|mts|cts|js|mjs|cjs|svelte)$/;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name)) continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out.push(...sourceFiles(full));
    else if (SOURCE.test(name)) out.push(full);
  }
  return out;
}

/** Every module specifier a file names, and whether that import is of types only. */
export function specifiers(text: string): { spec: string; typeOnly: boolean }[] {
  const found: { spec: string; typeOnly: boolean }[] = [];
  const patterns: [RegExp, (m: RegExpExecArray) => boolean][] = [
    // import … from "x", export … from "x" (statements can span lines: [^;'"]* stops at a string or the end)
    [/\b(?:import|export)\s+(type\s+)?[^;'"`]*?\bfrom\s*["']([^"']+)["']/g, (m) => !!m[1]],
    // import "x" (for its effect)
    [/^\s*import\s*()["']([^"']+)["']/gm, () => false],
    // import("x"), typeof import("x")
    [/(typeof\s+)?\bimport\(\s*["']([^"']+)["']\s*\)/g, (m) => !!m[1]],
    // require("x")
    [/()\brequire\(\s*["']([^"']+)["']\s*\)/g, () => false],
  ];
  for (const [re, typeOnly] of patterns)
    for (let m = re.exec(text); m; m = re.exec(text)) found.push({ spec: m[2]!, typeOnly: typeOnly(m) });
  return found;
}

interface Workspace {
  dir: string;
  name: string;
}

function workspaces(): Workspace[] {
  const root = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { workspaces: string[] };
  return root.workspaces.map((dir) => ({
    dir,
    name: (JSON.parse(readFileSync(path.join(ROOT, dir, "package.json"), "utf8")) as { name: string }).name,
  }));
}

/** The package imports the sources make: "from --> to", or "from -.-> to" when every one is a type only. */
export function codeEdges(): Set<string> {
  const ws = workspaces();
  const byName = new Map(ws.map((w) => [w.name, w.dir]));
  const ofPath = (abs: string) => ws.find((w) => abs.startsWith(path.join(ROOT, w.dir) + path.sep))?.dir;
  const edges = new Map<string, boolean>(); // "from to" -> every import a type only
  for (const w of ws) {
    for (const file of sourceFiles(path.join(ROOT, w.dir))) {
      for (const { spec, typeOnly } of specifiers(readFileSync(file, "utf8"))) {
        let to: string | undefined;
        if (spec.startsWith(".")) to = ofPath(path.resolve(path.dirname(file), spec));
        else {
          const pkg = /^(@cohent\/[^/]+)/.exec(spec)?.[1];
          to = pkg ? byName.get(pkg) : undefined;
        }
        if (!to || to === w.dir) continue;
        const key = `${w.dir} ${to}`;
        edges.set(key, (edges.get(key) ?? true) && typeOnly);
      }
    }
  }
  return new Set([...edges].map(([key, typeOnly]) => key.replace(" ", typeOnly ? " -.-> " : " --> ")));
}

/** The edges of the doc's Mermaid graph, named by the folders its nodes show ("adapter/" is adapter). */
export function docEdges(doc: string): Set<string> {
  const block = /```mermaid\n([\s\S]*?)```/.exec(doc);
  if (!block) throw new Error("docs/architecture.md has no mermaid block");
  const folder = new Map<string, string>();
  const edges: [string, string, string][] = [];
  for (const line of block[1]!.split("\n")) {
    const node = /^\s*(\w+)\["([^"]+)\/"\]\s*$/.exec(line);
    if (node) folder.set(node[1]!, node[2]!);
    const edge = /^\s*(\w+)\s*(-->|-\.->)(?:\|[^|]*\|)?\s*(\w+)\s*$/.exec(line);
    if (edge) edges.push([edge[1]!, edge[2]!, edge[3]!]);
  }
  return new Set(
    edges.map(([a, arrow, b]) => {
      if (!folder.has(a) || !folder.has(b))
        throw new Error(`an edge names an undeclared node: ${a} ${arrow} ${b}`);
      return `${folder.get(a)} ${arrow} ${folder.get(b)}`;
    }),
  );
}

const sorted = (s: Set<string>) => [...s].sort();

/** The repository paths the doc names in backticks (a top-level folder, then a path), without globs or placeholders. */
export function namedPaths(doc: string, tops: ReadonlySet<string>): string[] {
  const out = new Set<string>();
  for (const m of doc.matchAll(/`([^`\s]+)`/g)) {
    const p = m[1]!;
    if (/[*<>{}]/.test(p) || !p.includes("/")) continue;
    if (tops.has(p.split("/")[0]!)) out.add(p);
  }
  return [...out];
}

describe("docs/architecture.md", () => {
  it("draws exactly the package imports the sources make", () => {
    const code = codeEdges();
    // The scanner sees both kinds of import: a guard against a graph that is empty on both sides.
    expect([...code].some((e) => e.includes(" --> "))).toBe(true);
    expect(sorted(docEdges(DOC))).toEqual(sorted(code));
  });

  it("the comparison catches an edge missing, an edge invented and an arrow of the wrong kind", () => {
    const code = codeEdges();
    const [first] = sorted(code);
    const [from, arrow, to] = first!.split(" ");
    const id = (f: string) => f.replace(/-/g, "_");
    const line = `  ${id(from!)} ${arrow} ${id(to!)}\n`;
    expect(DOC).toContain(line);
    expect(sorted(docEdges(DOC.replace(line, "")))).not.toEqual(sorted(code));
    expect(sorted(docEdges(DOC.replace(line, line + "  protocol --> backend\n")))).not.toEqual(sorted(code));
    const flipped = line.replace(arrow!, arrow === "-->" ? "-.->" : "-->");
    expect(sorted(docEdges(DOC.replace(line, flipped)))).not.toEqual(sorted(code));
    // A type-only import is told from one that runs.
    expect(specifiers('const x = null as unknown as typeof import("../a.js");')).toEqual([
      { spec: "../a.js", typeOnly: true },
    ]);
    expect(
      specifiers('import type { A } from "@cohent/protocol";\nimport { b } from "@cohent/client";'),
    ).toEqual([
      { spec: "@cohent/protocol", typeOnly: true },
      { spec: "@cohent/client", typeOnly: false },
    ]);
  });

  it("names only files and folders that exist", () => {
    const tops = new Set(
      readdirSync(ROOT).filter((f) => !f.startsWith(".") && statSync(path.join(ROOT, f)).isDirectory()),
    );
    const named = namedPaths(DOC, tops);
    expect(named.length).toBeGreaterThan(40);
    expect(named.filter((p) => !existsSync(path.join(ROOT, p)))).toEqual([]);
    expect(namedPaths("`adapter/src/no-such-file.ts`", tops)).toEqual(["adapter/src/no-such-file.ts"]);
  });

  it("only the store talks to the database: no other backend file imports a driver or Prisma's clients", () => {
    const DB = /^(?:better-sqlite3|pg|@prisma\/.*)$|\/generated\/|\/store\/sql\//;
    const store = path.join(ROOT, "backend/src/store") + path.sep;
    const offenders = sourceFiles(path.join(ROOT, "backend/src"))
      .filter((f) => !f.startsWith(store))
      .flatMap((f) =>
        specifiers(readFileSync(f, "utf8"))
          .filter(({ spec }) => DB.test(spec))
          .map(({ spec }) => `${path.relative(ROOT, f)}: ${spec}`),
      );
    expect(offenders).toEqual([]);
    expect(
      DB.test("better-sqlite3") &&
        DB.test("../store/sql/exec.js") &&
        DB.test("../generated/sqlite/client.js"),
    ).toBe(true);
  });
});
