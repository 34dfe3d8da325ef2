/**
 * Lets at most `size` callers on per pass of the event loop; the rest wait for later passes, in order.
 * Node takes in at most one new connection per pass (operations/agent/poll.ts), so a crowd of
 * long-polls woken by one write and all looking in the same pass keeps every new connection, each
 * hook call's kill-switch read among them, waiting for that whole pass.
 */
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
