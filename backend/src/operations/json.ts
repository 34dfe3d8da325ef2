/** Columns that hold JSON text. The writer is always the backend, so parsing cannot fail on valid rows. */
export function parseJson<T>(text: string | null | undefined, fallback: T): T {
  if (text === null || text === undefined) return fallback;
  return JSON.parse(text) as T;
}

export const toJson = (value: unknown): string => JSON.stringify(value);
