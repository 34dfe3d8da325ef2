import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { cannon, CONNECTIONS, ROOT, SECONDS, startCohent, type Db } from "./procs.js";
import { prepareCases, type Row } from "./requests.js";

/**
 * The server under `node --cpu-prof` (a flag of the bin's own node process) during the empty-poll and
 * checkpoint loads; self time grouped by package and by our files.
 */

interface CpuProfile {
  startTime: number;
  endTime: number;
  nodes: { id: number; callFrame: { functionName: string; url: string } }[];
  samples: number[];
  timeDeltas: number[];
}

const GROUPS: [RegExp, string][] = [
  [
    /^(@prisma\/adapter-better-sqlite3|@prisma\/adapter-pg|better-sqlite3|pg|pg-.*|postgres-.*|bindings)$/,
    "driver",
  ],
  [/^(@prisma\/.*|prisma)$/, "prisma"],
  [
    /^(koa|koa-.*|@koa\/.*|http-errors|raw-body|co-body|accepts|content-type|cookies|statuses|type-is|on-finished|iconv-lite|path-to-regexp)$/,
    "koa",
  ],
  [
    /^(pino|pino-.*|sonic-boom|thread-stream|fast-redact|quick-format-unescaped|atomic-sleep|on-exit-leak-free|safe-stable-stringify)$/,
    "pino",
  ],
  [/^zod$/, "zod"],
  [/^(tsx|esbuild|get-tsconfig)$/, "tsx"],
];

/** Where a frame's self time goes: [group, package or file]. */
export function classify(url: string, fn: string): [string, string] {
  if (!url) {
    if (fn === "(garbage collector)") return ["GC", "(garbage collector)"];
    if (fn === "(program)") return ["V8/native (program)", "(program)"];
    return ["V8/native (program)", fn || "(native)"];
  }
  if (url.startsWith("wasm://")) return ["prisma", "prisma query compiler (wasm)"];
  const file = url.replace(/^file:\/\//, "");
  const nm = file.lastIndexOf("/node_modules/");
  if (nm >= 0) {
    const parts = file.slice(nm + "/node_modules/".length).split("/");
    const pkg = parts[0]!.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!;
    return [GROUPS.find(([re]) => re.test(pkg))?.[1] ?? "other packages", pkg];
  }
  if (file.startsWith("node:") || !file.startsWith("/"))
    return ["node core", file.replace(/^node:internal\/.*$/, "node:internal")];
  const rel = path.relative(ROOT, file);
  if (rel.startsWith("backend/src/generated/")) return ["prisma", "prisma generated client"];
  if (!rel.startsWith("..")) return ["our code", rel];
  return ["other", rel];
}

/** Self time by group and by package/file, in percent of the non-idle samples. */
export function summarize(
  profile: CpuProfile,
  window?: [number, number],
): { groups: Map<string, number>; items: Map<string, { group: string; ms: number }>; totalMs: number } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const groups = new Map<string, number>();
  const items = new Map<string, { group: string; ms: number }>();
  let totalMs = 0;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    if (window && (at < window[0] || at > window[1])) continue;
    const frame = byId.get(profile.samples[i]!)!;
    if (frame.functionName === "(idle)") continue;
    // timeDeltas[i + 1] is the time until the next sample, spent where sample i was taken.
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    const [group, item] = classify(frame.url, frame.functionName);
    totalMs += ms;
    groups.set(group, (groups.get(group) ?? 0) + ms);
    const it = items.get(item) ?? { group, ms: 0 };
    it.ms += ms;
    items.set(item, it);
  }
  return { groups, items, totalMs };
}

/** Runs the loads against a profiled server; returns the group and top-entry tables. */
export async function benchProfile(db: Db): Promise<{ title: string; groups: Row[]; top: Row[] }[]> {
  const out: { title: string; groups: Row[]; top: Row[] }[] = [];
  const loads = process.env.BENCH_PROFILE_LOADS?.split(",") ?? ["empty poll", "checkpoint"];
  for (const load of loads) {
    const dir = mkdtempSync(path.join(os.tmpdir(), "cohent-prof-"));
    try {
      const server = await startCohent(db, ["--cpu-prof", `--cpu-prof-dir=${dir}`]);
      let requests = 0;
      // V8 stamps samples with the monotonic clock in µs, as process.hrtime does, so the load's window can be cut out.
      const now = () => Number(process.hrtime.bigint() / 1000n);
      let window: [number, number] = [0, 0];
      try {
        const cases = await prepareCases(server, db, `bench/profile-${load.replace(" ", "-")}`);
        const c = cases.find((x) => x.name.startsWith(load))!;
        const t0 = now();
        requests = (await cannon({ connections: CONNECTIONS, duration: SECONDS, ...c.spec }, [server.pid]))
          .total;
        window = [t0, now()];
      } finally {
        await server.stop(); // the profile is written at exit
      }
      // The bin's main thread writes the largest profile (tsx's loader thread writes a small one).
      const files = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"));
      if (files.length === 0) throw new Error("no .cpuprofile written: did the server exit cleanly?");
      const main = files
        .map((f) => path.join(dir, f))
        .sort((a, b) => statSync(b).size - statSync(a).size)[0]!;
      // BENCH_PROFILE_KEEP=<dir>: keep the profile (open it in Chrome's DevTools, or any .cpuprofile viewer).
      const keep = process.env.BENCH_PROFILE_KEEP;
      if (keep) mkdirSync(keep, { recursive: true });
      if (keep) copyFileSync(main, path.join(keep, `${db.kind}-${load.replace(/ /g, "-")}.cpuprofile`));
      const profile = JSON.parse(readFileSync(main, "utf8")) as CpuProfile;
      const inside = window[0] >= profile.startTime && window[1] <= profile.endTime;
      const { groups, items, totalMs } = summarize(profile, inside ? window : undefined);
      const pct = (ms: number) => ((100 * ms) / totalMs).toFixed(1);
      out.push({
        title: `${db.kind}, ${load}: self time over ${Math.round(totalMs)} ms of the server's non-idle samples ${inside ? "during the load" : "over its whole life, setup included"}, ${requests} requests`,
        groups: [...groups.entries()]
          .sort((a, b) => b[1] - a[1])
          .map(([group, ms]) => ({ group, "self %": pct(ms) })),
        top: [...items.entries()]
          .sort((a, b) => b[1].ms - a[1].ms)
          .slice(0, Number(process.env.BENCH_PROFILE_TOP ?? 15))
          .map(([item, { group, ms }]) => ({ "package or file": item, group, "self %": pct(ms) })),
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return out;
}
