import { listCatches, noteEdit, restoreHeld } from "../held/files.js";
import { findRoot, fail, ok, type Envelope } from "@cohent/client";

/**
 * `restore`: puts back what a caught write changed under a peer's held
 * paths (held/files.ts kept the bytes from before the call). Local only:
 * the stash is this checkout's. A file edited since the catch (its holder's
 * newer work, most often) gets that edit merged over the bytes put back, or
 * is kept in the stash; the text says which, per file, and where.
 */

export const RESTORE_USAGE = "usage: node .cohent/cohent.mjs restore <path…> [--catch ID] | restore --list";

const MINUTE = 60_000;

function parse(args: readonly string[]): { paths: string[]; catchId?: string; list: boolean } | string {
  const paths: string[] = [];
  let catchId: string | undefined;
  let list = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--json") continue;
    if (a === "--list") list = true;
    else if (a === "--catch" || a.startsWith("--catch=")) {
      catchId = a === "--catch" ? args[++i] : a.slice("--catch=".length);
      if (!catchId) return `--catch needs a catch id. ${RESTORE_USAGE}`;
    } else if (a.startsWith("-")) return `unknown option ${a}. ${RESTORE_USAGE}`;
    else paths.push(a);
  }
  if (!list && paths.length === 0 && !catchId) return RESTORE_USAGE;
  return { paths, list, ...(catchId ? { catchId } : {}) };
}

/** The human text of a restore envelope (the hook's relay leaves the envelope alone). */
export const restoreText = (e: Envelope<any>): string =>
  e.ok ? String(e.data?.text ?? "") : e.error.message;

/** The command's envelope and its human text. */
export function restoreCommand(
  argv: readonly string[],
  cwd = process.cwd(),
): { envelope: Envelope<any>; text: string } {
  const root = findRoot(cwd);
  if (!root) {
    const message = "No .cohent/project.json here or above; run npx cohent init --server URL.";
    return { envelope: fail("restore", "NOT_CONFIGURED", message), text: message };
  }
  const args = parse(argv);
  if (typeof args === "string") return { envelope: fail("restore", "INVALID_INPUT", args), text: args };
  if (args.list) {
    const catches = listCatches(root);
    const now = Date.now();
    const lines = catches.map((c) => {
      const ago = Math.max(0, Math.round((now - c.at) / MINUTE));
      const paths = c.changes.map((x) => {
        const kept = c.kept?.[x.path];
        const state = c.restored?.[x.path]
          ? `, restored${kept ? `; the version it had then is kept at ${kept}` : ""}`
          : x.restorable
            ? ""
            : ", not kept";
        return `${x.path} (${x.change}${state})`;
      });
      return `${c.id}  ${ago} min ago  ${c.command ?? c.tool}\n    ${paths.join(", ")}`;
    });
    const text = lines.length ? lines.join("\n") : "No caught writes in this checkout.";
    return { envelope: ok("restore", { catches, text }), text };
  }
  // Noted as this command's own writes, so that a peer's check after its call does not report the restore.
  const paths = args.paths.length ? args.paths : ["."];
  const self = `restore-${process.pid}`;
  noteEdit(root, self, paths, "start");
  const results = paths.map((p) => restoreHeld(root, p, args.catchId ? { catchId: args.catchId } : {}));
  noteEdit(root, self, [], "end");
  const restored = results.flatMap((r) => r.restored);
  const merged = results.flatMap((r) => r.merged);
  const kept = results.flatMap((r) => r.kept);
  const notRestorable = results.flatMap((r) => r.notRestorable);
  const text = results.map((r) => r.message).join("\n");
  if (restored.length === 0) return { envelope: fail("restore", "NOT_FOUND", text, { notRestorable }), text };
  return { envelope: ok("restore", { restored, merged, kept, notRestorable, text }), text };
}
