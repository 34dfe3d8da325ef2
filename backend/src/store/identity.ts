/**
 * A write's store is wrapped for that request (operations/agent/once.ts records its request id in the
 * write's first transaction): a new object each time. What an instance keeps per store in memory (rate
 * limits, the poll's caches, recent events) is keyed by the store the wrapper stands for, or a limit
 * would start afresh at every write.
 */
export const STORE_BASE = Symbol("the store a wrapper stands for");

export const baseStore = <T extends object>(store: T): T =>
  ((store as { [STORE_BASE]?: T })[STORE_BASE] ?? store) as T;
