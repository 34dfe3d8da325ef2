/**
 * A counting semaphore, FIFO: at most `size` callers run at once. The long-polls' own re-reads go through
 * one (live/rechecks), so that a crowd woken together cannot take every pooled connection at once and
 * queue the requests that arrive meanwhile (a kill-switch read, a checkpoint) behind all of them.
 */
export class Slots {
  #free: number;
  #waiters: (() => void)[] = [];

  constructor(size: number) {
    this.#free = size;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((resolve) => this.#waiters.push(resolve));
    try {
      return await fn();
    } finally {
      const next = this.#waiters.shift();
      if (next) next();
      else this.#free++;
    }
  }
}
