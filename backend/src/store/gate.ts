/**
 * A FIFO mutex: on SQLite, the one connection's turn. A raw transaction, a
 * Prisma transaction and a plain Prisma statement each take it, so none of
 * them ever runs inside another's BEGIN … COMMIT.
 */
export class Gate {
  #held = false;
  #waiters: (() => void)[] = [];

  get held(): boolean {
    return this.#held;
  }

  /** Resolves when the caller holds the gate; call `release` exactly once. */
  acquire(): Promise<void> {
    if (!this.#held) {
      this.#held = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  release(): void {
    const next = this.#waiters.shift();
    if (next) next();
    else this.#held = false;
  }

  async run<T>(fn: () => T | Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await fn();
    } finally {
      this.release();
    }
  }
}
