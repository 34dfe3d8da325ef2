/**
 * Whether a change to a client's settings file touches the guard: its hooks,
 * the switch that turns them off, the MCP servers the guard runs in, the
 * environment hooks run with, plugins that add hooks. A client writes some
 * of these files itself mid-session (Claude Code records a person's "always
 * allow" in .claude/settings.local.json while a call waits for it), and
 * undoing that would take a person's answer back and pause the session for
 * nothing. So a change that leaves every key but the harmless ones (below)
 * as it was is no guard change. Anything that is not a JSON object, on
 * either side, is judged by its bytes. Pure.
 */

/** Keys a client or a person changes in its settings that cannot switch a hook off nor add one. */
const HARMLESS = new Set([
  "permissions",
  "model",
  "outputStyle",
  "theme",
  "verbose",
  "feedbackSurveyState",
  "alwaysThinkingEnabled",
  "spinnerTipsEnabled",
  "cleanupPeriodDays",
  "includeCoAuthoredBy",
  "autoUpdates",
]);

function objectOf(text: string | null): Record<string, unknown> | null {
  if (text === null) return null;
  try {
    const v = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Deep equality of parsed JSON values. */
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && same((a as never)[k], (b as never)[k]));
}

/**
 * Does going from `before` to `after` (the file's text; null: absent) change
 * what the guard depends on? `jsonSettings`: the file is a client's JSON
 * settings, where only the harmless keys may change; any other file counts
 * by its bytes.
 */
export function touchesGuard(before: string | null, after: string | null, jsonSettings: boolean): boolean {
  if (before === after) return false;
  if (!jsonSettings) return true;
  const a = before === null ? {} : objectOf(before);
  const b = after === null ? {} : objectOf(after);
  if (!a || !b) return true;
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)]))
    if (!HARMLESS.has(k) && !same(a[k], b[k])) return true;
  return false;
}

/** The settings files judged by their keys: the clients' JSON settings (not hook files, not code). */
export const isJsonSettings = (path: string): boolean =>
  /(^|\/)settings(\.local)?\.json$/.test(path) || /(^|\/)\.claude\.json$/.test(path);
