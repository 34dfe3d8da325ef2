/**
 * Edit targets of an apply_patch body, and apply_patch sent through a
 * shell (a heredoc arrives as a shell call, but it is an edit all the same).
 */

const PATCH_HEADER = /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$/;

/** Every path named by "*** Add File:", "*** Update File:", "*** Delete File:" and "*** Move to:". */
export function patchTargets(patch: string): string[] {
  const out: string[] = [];
  for (const line of patch.split(/\r?\n/)) {
    const m = PATCH_HEADER.exec(line.trimEnd());
    const target = m?.[1]?.trim();
    if (target && !out.includes(target)) out.push(target);
  }
  return out;
}

const APPLY_PATCH_CALL = /(?:^|[\s;&|()`'"])(?:[\w./-]*\/)?apply_patch(?=$|[\s<;&|)'"`])/;

/**
 * A shell command that invokes apply_patch is an edit. Returns its targets
 * (possibly none, when the patch body cannot be read), or null when the
 * command does not call apply_patch.
 */
export function shellPatchTargets(command: string): string[] | null {
  if (!APPLY_PATCH_CALL.test(command)) return null;
  return patchTargets(command);
}
