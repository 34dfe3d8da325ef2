import { decide } from "./doctor-decide.js";
import { gather } from "./doctor-gather.js";
import { renderJson, renderText } from "./doctor-render.js";

/**
 * `doctor`: tells the truth about whether this checkout is guarded. It reads
 * (doctor-gather.ts: the checkout, the credential, the service, Codex trust,
 * the login shell), judges (doctor-decide.ts, pure: the checks, in order, and
 * what is guarded and fails closed) and prints (doctor-render.ts: the human
 * text, or one JSON envelope). Exit 1 when any check fails.
 */
export async function doctor(_args: string[], json: boolean, scriptUrl: string): Promise<number> {
  const report = decide(await gather(scriptUrl));
  process.stdout.write(json ? renderJson(report) : renderText(report));
  return report.checks.some((c) => c.status === "fail") ? 1 : 0;
}

export type { CodexReport } from "./doctor-hooks.js";
export { wrapsFailure } from "./doctor-hosts.js";
