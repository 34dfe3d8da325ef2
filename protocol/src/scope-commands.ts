// The commands an agent types to change its claim, written once: the notices of the
// claim queue (backend/src/core/render), the hook's refusals and the CLI quote these.
// Free of zod so that the adapter's hook bundle can import it.

/** The agent CLI's scope command: with paths it replaces the claim, with none it releases it. */
export const SCOPE_COMMAND = "node .cohent/cohent.mjs scope";
/** Queue for paths a peer holds: granted the moment they are free (`--wait <seconds>` also blocks until then). */
export const SCOPE_QUEUE_COMMAND = `${SCOPE_COMMAND} --queue`;
/** Ask the holders of paths to let go. */
export const REQUEST_RELEASE_COMMAND = "node .cohent/cohent.mjs request-release";

/** Shell-quotes a word for a command the agent can paste (globs are quoted, so the shell leaves them alone). */
export function shellWord(s: string): string {
  return /^[A-Za-z0-9_\-./=:,@%+]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The exact command that narrows a claim to `keep`; with nothing to keep it releases the claim. */
export function narrowCommand(keep: readonly string[]): string {
  return keep.length ? `${SCOPE_COMMAND} ${keep.map(shellWord).join(" ")}` : SCOPE_COMMAND;
}

/** The exact command that queues for `paths`. */
export function queueCommand(paths: readonly string[]): string {
  return `${SCOPE_QUEUE_COMMAND} ${paths.map(shellWord).join(" ")}`;
}

/** Puts back a file's bytes from before a caught shell write, in the writer's checkout (which kept them). */
export const RESTORE_COMMAND = "node .cohent/cohent.mjs restore";

/** The exact command that restores `path` in the writer's checkout. */
export function restoreCommand(path: string): string {
  return `${RESTORE_COMMAND} ${shellWord(path)}`;
}
