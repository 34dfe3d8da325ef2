import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * CPU profiles of the adapter's hook process, read back with readable
 * names (bench/shell-watch.ts uses them): self time per function, summed
 * over several .cpuprofile files.
 */

export interface Frame {
  functionName: string;
  url: string;
  scriptId: string;
  lineNumber: number;
  columnNumber: number;
}

/**
 * Names for the minified bundle's frames: the two parts of cohent-core.js
 * (the guard's, hook-guard-main.ts, and the whole adapter's, main.ts) built
 * again with esbuild exactly as adapter/build.mjs builds them, with a source
 * map; used only when the rebuilt text equals the checkout's part byte for
 * byte. A frame is placed in the part whose text has its minified name at
 * its position. Null when it cannot be done: the frames keep their
 * minified names.
 */
export interface Names {
  /** Places one profile's scripts (before naming its frames: call it with all of them). */
  assign(frames: Frame[]): void;
  name(f: Frame): string | null;
}

export async function bundleNames(cohentDir: string): Promise<Names | null> {
  try {
    const { build } = await import("esbuild");
    const { SourceMap } = await import("node:module");
    const adapter = fileURLToPath(new URL("../adapter/", import.meta.url));
    const core = readFileSync(path.join(cohentDir, "cohent-core.js"), "latin1");
    const setupId = /cohentSetupId="([0-9a-f]+)"/.exec(
      readFileSync(path.join(cohentDir, "cohent-setup.cjs"), "latin1"),
    )?.[1];
    if (!setupId) return null;
    // build.mjs's toSetupFile plugin, as it is there: the setup modules' dynamic imports as a stub.
    const setupModules = /^\.\/installer\/(doctor|init|bootstrap)\.js$/;
    const toSetupFile = {
      name: "to-setup-file",
      setup(b: any) {
        b.onResolve({ filter: setupModules }, (args: any) =>
          args.kind === "dynamic-import" && args.importer.startsWith(path.join(adapter, "src"))
            ? { path: "cohent-setup.cjs", namespace: "cohent-setup" }
            : undefined,
        );
        b.onLoad({ filter: /.*/, namespace: "cohent-setup" }, () => ({
          contents: `module.exports = require(${JSON.stringify(path.join(adapter, "src", "loader", "loader-setup.ts"))}).loadSetup(__cohent_url, require);`,
          loader: "js",
          resolveDir: path.join(adapter, "src"),
        }));
      },
    };
    const prefix = '(function(require,module,__cohent_url){"use strict";';
    const parts: { text: string; map: InstanceType<typeof SourceMap> }[] = [];
    let at = core.indexOf("\n") + 1;
    for (const entry of ["hook-guard-main.ts", "main.ts"]) {
      const r = await build({
        bundle: true,
        platform: "node",
        target: "node20",
        minify: true,
        legalComments: "none",
        logLevel: "silent",
        format: "cjs",
        write: false,
        sourcemap: "external",
        outfile: path.join(os.tmpdir(), "cohent-profile-part.js"),
        entryPoints: [path.join(adapter, "src", entry)],
        plugins: [toSetupFile],
        define: { "import.meta.url": "__cohent_url", __cohent_setup_id: JSON.stringify(setupId) },
      });
      const js = r.outputFiles.find((o) => o.path.endsWith(".js"))!.text;
      const map = JSON.parse(r.outputFiles.find((o) => o.path.endsWith(".map"))!.text);
      const body = `${prefix}${js}\n})\n`;
      if (core.slice(at, at + body.length) !== body) return null; // not this build's text
      at += body.length;
      parts.push({ text: body, map: new SourceMap(map) });
    }
    // The loader (cohent.cjs itself) has the same url: its frames are told apart by the same test.
    const lines = [
      ...parts.map((p) => p.text.split("\n")),
      readFileSync(path.join(cohentDir, "cohent.cjs"), "latin1").split("\n"),
    ];
    const bySource = new Map<string, string[]>();
    const srcLine = (file: string, line: number): string => {
      if (!bySource.has(file)) {
        try {
          bySource.set(file, readFileSync(file, "utf8").split("\n"));
        } catch {
          bySource.set(file, []);
        }
      }
      return (bySource.get(file)![line] ?? "").trim();
    };
    const partOf = new Map<string, number>(); // scriptId → part (2: the loader)
    const named = (i: number, f: Frame) => {
      const line = lines[i]![f.lineNumber];
      if (line === undefined || !f.functionName) return false;
      const near = line.slice(Math.max(0, f.columnNumber - 24), f.columnNumber + 24);
      return new RegExp(`(^|[^\\w$])${f.functionName.replace(/\$/g, "\\$")}([^\\w$]|$)`).test(near);
    };
    // Minified names are short and repeat: each script goes to the text where most of its frames' names sit at their positions.
    const assign = (frames: Frame[]) => {
      partOf.clear(); // script ids are a process's own
      for (const id of new Set(frames.map((f) => f.scriptId))) {
        const own = frames.filter((f) => f.scriptId === id && f.functionName);
        const votes = [0, 1, 2].map((i) => own.filter((f) => named(i, f)).length);
        const best = votes.indexOf(Math.max(...votes));
        if (votes[best]! > 0) partOf.set(id, best);
      }
    };
    const name = (f: Frame): string | null => {
      const i = partOf.get(f.scriptId);
      if (i === undefined || i === 2) return null;
      // The part's first line begins with the wrapper; esbuild's output begins after it.
      const col = f.lineNumber === 0 ? f.columnNumber - prefix.length : f.columnNumber;
      const e = parts[i]!.map.findEntry(f.lineNumber, Math.max(0, col)) as {
        originalSource?: string;
        originalLine?: number;
      };
      if (!e?.originalSource) return null;
      const file = e.originalSource.startsWith("file://")
        ? fileURLToPath(e.originalSource)
        : path.resolve(os.tmpdir(), e.originalSource);
      const rel = path.relative(path.join(adapter, ".."), file);
      const code = srcLine(file, e.originalLine!).slice(0, 60);
      return `${rel}:${e.originalLine! + 1} \`${code}\``;
    };
    return { assign, name };
  } catch {
    return null;
  }
}

/**
 * Self time per function (functionName + url; a bundle frame named by its
 * source line when bundleNames can) of .cpuprofile files, summed, each
 * with the bundle functions below which it ran most (for Node's own
 * functions: who called them).
 */
export function selfTimes(
  files: string[],
  names: Names | null,
): { total: number; rows: { name: string; ms: number; from: [string, number][] }[] } {
  const by = new Map<string, { ms: number; from: Map<string, number> }>();
  let total = 0;
  for (const file of files) {
    const prof = JSON.parse(readFileSync(file, "utf8")) as {
      nodes: { id: number; callFrame: Frame; children?: number[] }[];
      samples: number[];
      timeDeltas: number[];
    };
    const name = new Map<number, string>();
    const ours = new Map<number, boolean>();
    const parent = new Map<number, number>();
    names?.assign(prof.nodes.map((n) => n.callFrame).filter((f) => f.url.endsWith("/cohent.cjs")));
    for (const n of prof.nodes) {
      const f = n.callFrame;
      for (const c of n.children ?? []) parent.set(c, n.id);
      const url = f.url ? path.basename(f.url.replace(/^file:\/\//, "")) : "";
      const mapped = url === "cohent.cjs" && names ? names.name(f) : null;
      const fn = f.functionName || `(anonymous):${f.lineNumber + 1}`;
      name.set(n.id, mapped ?? (url ? `${fn} ${url}` : fn));
      ours.set(n.id, mapped !== null || url === "cohent.cjs");
    }
    const caller = (id: number): string => {
      for (let p = parent.get(id); p !== undefined; p = parent.get(p)) if (ours.get(p)) return name.get(p)!;
      return "";
    };
    // timeDeltas[i + 1]: the time from sample i to the next, i.e. sample i's.
    for (let i = 0; i < prof.samples.length; i++) {
      const dt = (prof.timeDeltas[i + 1] ?? 0) / 1000;
      const id = prof.samples[i]!;
      const k = name.get(id) ?? "?";
      const e = by.get(k) ?? by.set(k, { ms: 0, from: new Map() }).get(k)!;
      e.ms += dt;
      if (!ours.get(id)) {
        const c = caller(id);
        if (c) e.from.set(c, (e.from.get(c) ?? 0) + dt);
      }
      total += dt;
    }
  }
  return {
    total,
    rows: [...by]
      .map(([name, e]) => ({ name, ms: e.ms, from: [...e.from].sort((a, b) => b[1] - a[1]) }))
      .sort((a, b) => b.ms - a.ms),
  };
}
