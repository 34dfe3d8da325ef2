/**
 * The files a read tool's call names, in the guard's terms (hosts/*.ts map
 * every client's read tool to `Read` with the file under `file_path`, or
 * several under `paths`). Pure. The stale-write check records them at the
 * call's PostToolUse (read-after.ts). tools.ts knows edits and shells only:
 * a read is neither, so it is told here.
 */

/** The canonical name of a read tool once a dialect has mapped it. */
export const READ_TOOL = "Read";

const GLOB = /[*?[\]{}]/;

/** The files a `Read` call names (a glob names none: what it matched is not known here). */
export function readTargets(toolName: string, input: Record<string, unknown> | undefined): string[] {
  if (toolName !== READ_TOOL || !input) return [];
  const out: string[] = [];
  for (const k of ["file_path", "path", "notebook_path"]) {
    const v = input[k];
    if (typeof v === "string" && v && !GLOB.test(v)) out.push(v);
  }
  if (Array.isArray(input.paths))
    for (const v of input.paths) if (typeof v === "string" && v && !GLOB.test(v)) out.push(v);
  return [...new Set(out)];
}
