import { rmSync } from "node:fs";
import path from "node:path";
import { builtAdapter, makeCheckout, type Checkout } from "../test/adapter/helpers.js";
import { backendWithRepo, type TestBackend } from "../test/helpers/backend.js";

/** Small measuring helpers: medians, percentiles and Markdown tables, and the checkout the adapter benches run in. */

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

/** Every table printed in this process, as Markdown: what bench/run.ts writes to bench/RESULTS.md. */
export const printed: string[] = [];

export function table(title: string, rows: Record<string, string | number>[]): void {
  const out = [`### ${title}`];
  if (rows.length) {
    const keys = Object.keys(rows[0]!);
    const width = keys.map((k) => Math.max(k.length, ...rows.map((r) => String(r[k]).length)));
    const line = (cells: string[]) => "| " + cells.map((c, i) => c.padEnd(width[i]!)).join(" | ") + " |";
    out.push(
      "",
      line(keys),
      line(width.map((w) => "-".repeat(w))),
      ...rows.map((r) => line(keys.map((k) => String(r[k])))),
    );
  }
  printed.push(out.join("\n"));
  console.log(`\n${out.join("\n")}`);
}

/** A local backend with `repo`, the person "bench" and a token, and a checkout with both built files (its HOME beside it). */
export async function benchCheckout(
  repo: string,
  client?: string,
): Promise<Checkout & { backend: TestBackend; token: string; bundle: string; stop(): Promise<void> }> {
  const {
    backend,
    tokens: [token],
  } = await backendWithRepo(repo, "", client ? ["bench", client] : ["bench"]);
  const co = await makeCheckout(backend.url, repo);
  const stop = async () => {
    await backend.stop();
    rmSync(path.dirname(co.root), { recursive: true, force: true });
  };
  return { ...co, backend, token, bundle: await builtAdapter(), stop };
}
