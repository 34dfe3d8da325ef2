/** The hook's deadline (deadline.ts), in a module of its own: the loader reads it without the guard's code. */
export const DEADLINE_MS =
  Number(process.env.COHENT_HOOK_DEADLINE_MS) > 0 ? Number(process.env.COHENT_HOOK_DEADLINE_MS) : 25_000;
