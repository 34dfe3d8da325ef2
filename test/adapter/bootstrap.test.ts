import { spawn } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pairing } from "@cohent/backend";
import { startBackend, type TestBackend } from "../helpers/backend.js";
import { claude, hook, makeCheckout, run, type Checkout } from "./helpers.js";

let server: TestBackend;
const REPO = "acme/pairing";
beforeAll(async () => {
  server = await startBackend();
  await server.addRepo(REPO, "Pairing goal");
});
afterAll(async () => {
  await server?.stop();
});

/** Starts `bootstrap --approve`, waits for the user code it prints, then lets the test decide. */
function startBootstrap(co: Checkout, env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [co.script, "bootstrap", "--approve"], {
    cwd: co.root,
    env: { PATH: process.env.PATH!, HOME: co.home, ...env },
  });
  let stdout = "";
  let stderr = "";
  const code = new Promise<string>((resolve) => {
    child.stdout.on("data", (c) => {
      stdout += c;
      const m = /approve code ([A-Z]{4}-[A-Z]{4})/.exec(stdout);
      if (m) resolve(m[1]!);
    });
  });
  child.stderr.on("data", (c) => (stderr += c));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on("close", (c) => resolve({ code: c, stdout, stderr })),
  );
  return { code, done };
}

describe("bootstrap", () => {
  it("pairs through the browser approval and stores a 0600 credential the hooks then use", async () => {
    const co = await makeCheckout(server.url, REPO);
    const b = startBootstrap(co);
    const userCode = await b.code;
    const view = await pairing.pairingByCode(server.deps, userCode);
    expect(view).toMatchObject({ repo: REPO });
    await pairing.decidePairing(server.deps, { userCode, approve: true, actor: "carol", person: "carol" });
    const r = await b.done;
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Paired: carol on ${REPO}.`);
    const file = path.join(co.home, ".config", "cohent", "credentials.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(file, "utf8"));
    expect(stored.services[server.url][REPO].token).toMatch(/^coh_/);
    expect(readFileSync(path.join(co.root, ".cohent", "project.json"), "utf8")).not.toContain("coh_");

    const prompt = await hook(co, claude.prompt("paired-1", co.root, "hello"), claude.env);
    expect(prompt.context).toContain("[cohent plan]");
    const rows = await server.deps.db.prisma.$transaction((tx) =>
      tx.intent.findMany({ where: { prompt: "hello" } }),
    );
    expect(rows.map((r) => r.person)).toEqual(["carol"]);
  }, 30_000);

  it("reports a denial and stores nothing", async () => {
    const co = await makeCheckout(server.url, REPO);
    const b = startBootstrap(co, { XDG_CONFIG_HOME: path.join(co.home, "xdg") });
    const userCode = await b.code;
    await pairing.decidePairing(server.deps, { userCode, approve: false, actor: "carol", person: "carol" });
    const r = await b.done;
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("PAIRING_DENIED");
    expect(() => statSync(path.join(co.home, "xdg", "cohent", "credentials.json"))).toThrow();
  }, 30_000);

  it("--token stores an issued token under XDG_CONFIG_HOME; COHENT_AGENT_TOKEN overrides it", async () => {
    const co = await makeCheckout(server.url, REPO);
    const token = await server.issueToken(REPO, "dave");
    const xdg = path.join(co.home, "xdg");
    const r = await run(co, ["bootstrap", "--token", token, "--json"], { env: { XDG_CONFIG_HOME: xdg } });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      ok: true,
      operation: "bootstrap",
      data: { repository: REPO },
    });
    expect(statSync(path.join(xdg, "cohent", "credentials.json")).mode & 0o777).toBe(0o600);
    await hook(co, claude.prompt("tok-1", co.root, "from dave"), { ...claude.env, XDG_CONFIG_HOME: xdg });
    const bad = await hook(co, claude.prompt("tok-2", co.root, "override"), {
      ...claude.env,
      XDG_CONFIG_HOME: xdg,
      COHENT_AGENT_TOKEN: "coh_revoked-or-unknown-token-value",
    });
    expect(bad.context).toContain("UNAUTHENTICATED");
    const rows = await server.deps.db.prisma.$transaction((tx) =>
      tx.intent.findMany({ where: { prompt: "from dave" } }),
    );
    expect(rows.map((r) => r.person)).toEqual(["dave"]);
  });
});
