import { closeSync, mkdirSync, openSync, statSync, unlinkSync } from "node:fs";
import { basename, dirname } from "node:path";

/**
 * A lock file beside `file` (`<file>.lock`, made with O_EXCL), for the
 * read-modify-write of files several hook processes share: runtime.json and
 * the held-files stash's journals. A lock older than 10 s is a crashed
 * holder's and is taken over. With `wait: false` it answers null at once
 * when the lock is held (best-effort housekeeping); otherwise it waits up to
 * 5 s and then throws: the caller's write did not happen.
 */

const sleeper = new Int32Array(new SharedArrayBuffer(4));
const LOCK_STALE_MS = 10_000;
const WAIT_MS = 5_000;

/** unlinkSync, not rmSync: rmSync loads node's rimraf module, a cost on every hook call. */
function remove(file: string): void {
  try {
    unlinkSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}

export function lockFile(file: string, wait: false): (() => void) | null;
export function lockFile(file: string, wait?: true): () => void;
export function lockFile(file: string, wait = true): (() => void) | null {
  const lock = `${file}.lock`;
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    try {
      closeSync(openSync(lock, "wx"));
      return () => remove(lock);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") mkdirSync(dirname(lock), { recursive: true });
      else if (code !== "EEXIST") throw err;
      else {
        const st = statSync(lock, { throwIfNoEntry: false });
        if (st && Date.now() - st.mtimeMs > LOCK_STALE_MS) remove(lock);
        else if (!wait) return null;
      }
      if (Date.now() > deadline)
        throw new Error(`${basename(file)} stays locked (${lock}); remove it if no agent is running`, {
          cause: err,
        });
      Atomics.wait(sleeper, 0, 0, 3 + Math.floor(Math.random() * 7));
    }
  }
}
