// What the docs tests share: reading a shell line as the docs write it, and a peer that holds paths.
import { expect } from "vitest";

/** A line split at its shell comment (a `#` after a blank, outside quotes). */
export function splitComment(line: string): [string, string] {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = null;
      else if (c === "\\" && quote === '"') i++;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === "\\") i++;
    else if (c === "#" && (i === 0 || /\s/.test(line[i - 1]!)))
      return [line.slice(0, i).trimEnd(), line.slice(i + 1).trim()];
  }
  return [line, ""];
}

/** A peer session holding `paths` over the HTTP API (publish, intent, scope), as the docs' examples presume. */
export async function holdAsPeer(
  url: string,
  token: string,
  paths: string[],
  { session = "docs-test-peer", objective = "Rework the login form" } = {},
): Promise<string> {
  const call = async (body: object) => {
    const res = await fetch(`${url}/api/agent`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "x-cohent-session": session,
        "content-type": "application/json",
      },
      body: JSON.stringify(body),
    });
    const answer = (await res.json()) as any;
    expect(answer.ok, JSON.stringify(answer)).toBe(true);
    return answer.data;
  };
  const { intentId } = await call({ type: "publish", prompt: objective, paths: [] });
  await call({
    type: "intent",
    intentId,
    intent: {
      objective,
      plan: ["Rewrite the form"],
      components: ["login-form"],
      dependsOn: [],
      deferred: [],
      outputs: ["login-form"],
      blockers: [],
      requires: [],
      capabilities: [],
      state: "planned",
    },
  });
  await call({ type: "scope", intentId, paths });
  return intentId as string;
}
