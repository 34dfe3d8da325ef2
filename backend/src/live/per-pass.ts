/**
 * Node takes in at most one new connection per pass of its event loop (strace: one accept4 per
 * epoll_pwait, never read on to EAGAIN, a bare http server too), and every hook call is a new
 * process, so a new connection. Work that fills a pass keeps every new connection, each hook
 * call's kill-switch read among them, waiting for that whole pass: long work yields for several
 * passes between its parts, and a crowd woken together goes on a few per pass.
 */

/** Resolves after `n` passes of the event loop; a pass with nothing pending costs microseconds. */
export async function afterPasses(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Lets at most `size` callers on per pass of the event loop; the rest wait for later passes, in order. */
export class PerPass {
  #left: number;
  #waiters: (() => void)[] = [];
  #scheduled = false;

  constructor(readonly size: number) {
    this.#left = size;
  }

  admit(): Promise<void> | undefined {
    this.#schedule();
    if (this.#left > 0 && this.#waiters.length === 0) {
      this.#left--;
      return undefined;
    }
    return new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  #schedule() {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#left = this.size;
      while (this.#left > 0 && this.#waiters.length) {
        this.#left--;
        this.#waiters.shift()!();
      }
      if (this.#waiters.length) this.#schedule();
    });
  }
}
