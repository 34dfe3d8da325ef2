/**
 * The product version, one definition: the published package's version, the
 * server's `meta.serverVersion`, and the adapter's `adapterVersion` in
 * .cohent/project.json all come from here (scripts/pack.mjs checks it).
 * Zod-free, so the hook bundle and the CLI's --version stay small.
 */
export const COHENT_VERSION = "0.1.0";

/** The oldest committed adapter this server still answers correctly; raise it when the wire changes incompatibly. */
export const MIN_ADAPTER_VERSION = "0.1.0";

/** Numeric compare of dotted versions ("0.10.0" > "0.9.2"); a pre-release suffix is ignored. Negative when a < b. */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string) =>
    v
      .replace(/[-+].*$/, "")
      .split(".")
      .map((n) => Number.parseInt(n, 10) || 0);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
