import { consoleOps } from "@cohent/backend";
import type { agentClient, TestBackend } from "../helpers/backend.js";

/** A browser-like console client over real HTTP: a cookie jar and the CSRF token. */
export class ConsoleClient {
  cookies = new Map<string, string>();
  csrf = "";
  constructor(readonly base: string) {}

  private remember(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (!value || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  async raw(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set("cookie", this.cookieHeader());
    const res = await fetch(`${this.base}${path}`, { ...init, headers, redirect: "manual" });
    this.remember(res);
    return res;
  }

  async get(path: string) {
    const res = await this.raw(path);
    return { status: res.status, body: (await res.json()) as any };
  }

  async post(path: string, body: unknown = {}, opts: { csrf?: string | null; origin?: string } = {}) {
    const headers: Record<string, string> = { "content-type": "application/json" };
    const csrf = opts.csrf === undefined ? this.csrf : opts.csrf;
    if (csrf !== null) headers["x-cohent-csrf"] = csrf;
    if (opts.origin) headers.origin = opts.origin;
    const res = await this.raw(path, { method: "POST", headers, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as any };
  }

  /** Follows a sign-in link the way a browser would, then reads the CSRF token. */
  async signInWith(link: string): Promise<Response> {
    const res = await this.raw(link.replace(this.base, ""));
    const me = await this.get("/api/console/me");
    if (me.body.data?.signedIn) this.csrf = me.body.data.csrfToken;
    return res;
  }
}

export async function signedInAdmin(backend: TestBackend): Promise<ConsoleClient> {
  const client = new ConsoleClient(backend.url);
  const token = await consoleOps.createLoginLink(backend.deps);
  await client.signInWith(`/auth/local?token=${token}`);
  if (!client.csrf) throw new Error("local sign-in failed");
  return client;
}

/** The CLI side of pairing, over HTTP, as `cohent.mjs bootstrap --approve` drives it. */
export async function pairingRequest(base: string, body: Record<string, unknown>) {
  const res = await fetch(`${base}/api/pairing`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}
export async function pairingToken(base: string, deviceCode: string) {
  const res = await fetch(`${base}/api/pairing/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ deviceCode }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** An agent publishes a prompt on the cart file over the API; answers the publish's data (intentId, packet). */
export const publish = async (
  agent: ReturnType<typeof agentClient>,
  prompt: string,
  extra: Record<string, unknown> = {},
) => (await agent.post({ type: "publish", prompt, paths: ["app/cart.ts"], ...extra })).body.data;

/** An agent declares its intent over the API: `objective` with a one-step plan on the cart, plus `extra`. */
export const declare = (
  agent: ReturnType<typeof agentClient>,
  intentId: string,
  objective: string,
  extra: Record<string, unknown> = {},
) =>
  agent.post({
    type: "intent",
    intentId,
    intent: { objective, plan: ["do it"], components: ["cart"], state: "planned", ...extra },
  });
