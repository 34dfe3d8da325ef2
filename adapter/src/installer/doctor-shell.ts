import { accessSync, constants, existsSync } from "node:fs";
import { dirname } from "node:path";
import { listCatches, stashDir } from "../held/files.js";

/**
 * doctor's line on the shell guard: where the bytes a caught write changed
 * are kept, whether the adapter can write there (it refuses every watched
 * call when it cannot: the check after the call would be blind), what is
 * kept now, and what no hook can see.
 */

export const OUT_OF_REACH =
  "Between calls: a write by a process still running after its call (a background job, a dev server, a watcher) is caught at the next tool call of any session. Out of reach: a change made and undone between two calls, and a write through a network service (a database, another machine).";

export function shellWritesCheck(root: string): { name: string; status: "ok" | "fail"; detail: string } {
  const dir = stashDir(root);
  // The stash or the nearest folder above it that exists must be writable: the adapter creates the rest.
  let probe = dir;
  while (!existsSync(probe) && dirname(probe) !== probe) probe = dirname(probe);
  try {
    accessSync(probe, constants.W_OK);
  } catch {
    return {
      name: "shell writes",
      status: "fail",
      detail: `${dir} cannot be written, so the check after a shell call cannot keep what it would undo and every shell call is refused. Make it writable for this user.`,
    };
  }
  const catches = listCatches(root);
  const open = catches.filter((c) => c.changes.some((x) => x.restorable && !c.restored?.[x.path])).length;
  const kept = catches.length
    ? ` ${catches.length} caught write(s) kept, ${open} not restored yet: node .cohent/cohent.mjs restore --list.`
    : " No caught write kept.";
  return {
    name: "shell writes",
    status: "ok",
    detail: `a shell command's named writes are held like edits; other writes under peers' claims and the guard's files are caught after the call, kept in ${dir}.${kept} ${OUT_OF_REACH}`,
  };
}
