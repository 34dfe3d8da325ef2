import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentClient } from "../helpers/backend.js";

const BIN = path.resolve("cli/bin/cohent.mjs");

/** The admin CLI and `cohent serve` as real child processes on a real data directory. */
describe("cohent admin CLI", () => {
  let dataDir: string;
  let server: ReturnType<typeof spawn> | undefined;
  let url = "";
  let serverLog = "";
  const env = () => ({
    ...process.env,
    COHENT_DATA_DIR: dataDir,
    DATABASE_URL: "",
    COHENT_LOG_LEVEL: "warn",
  });
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [BIN, ...args], { env: env(), encoding: "utf8", timeout: 30_000 });

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), "cohent-cli-"));
    const add = cli("repo", "add", "acme/cli", "--goal", "Keep the CLI honest");
    expect(add.status, add.stderr).toBe(0);
    server = spawn(process.execPath, [BIN, "serve", "--port", "0"], {
      env: { ...env(), COHENT_LOG_LEVEL: "debug" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    server.stderr!.on("data", (d: Buffer) => (serverLog += d.toString()));
    url = await new Promise<string>((resolve, reject) => {
      let err = "";
      server!.stderr!.on("data", (d: Buffer) => {
        err += d.toString();
        const m = /cohent serving on (http:\/\/\S+)/.exec(err);
        if (m) resolve(m[1]!);
      });
      server!.once("exit", (code) => reject(new Error(`serve exited ${code}: ${err}`)));
    });
  });
  afterAll(() => {
    server?.kill("SIGTERM");
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("token issue prints only the token on stdout, and the database keeps only its hash", async () => {
    const issued = cli("token", "issue", "--repo", "acme/cli", "--person", "alice", "--client", "Codex");
    expect(issued.status, issued.stderr).toBe(0);
    expect(issued.stdout).toMatch(/^coh_[A-Za-z0-9_-]{43}\n$/);
    const token = issued.stdout.trim();
    const r = await agentClient(url, token, "cli-session").post({
      type: "publish",
      prompt: "from a CLI token",
    });
    expect(r.status).toBe(200);
    expect(r.body.data.packet.goal).toBe("Keep the CLI honest");
    for (const file of readdirSync(dataDir)) {
      expect(readFileSync(path.join(dataDir, file)).includes(token), file).toBe(false);
    }
  });

  it("sessions list shows the session; pause reaches its next call; resume clears it", async () => {
    const token = cli("token", "issue", "--repo", "acme/cli", "--person", "bob").stdout.trim();
    const agent = agentClient(url, token, "cli-pause");
    const intentId = (await agent.post({ type: "publish", prompt: "pause me" })).body.data.intentId;
    const list = cli("sessions", "list", "--repo", "acme/cli", "--json");
    expect(list.status, list.stderr).toBe(0);
    const session = JSON.parse(list.stdout).find((s: any) => s.key === "cli-pause");
    expect(session).toMatchObject({ person: "bob", control: "active", guard: "calling-in" });
    expect(cli("sessions", "pause", session.id, "--reason", "hold on").status).toBe(0);
    const polled = await agent.poll(intentId);
    expect(polled.body.meta.session).toMatchObject({ control: "paused", controlReason: "hold on" });
    expect(cli("sessions", "resume", session.id).status).toBe(0);
    expect((await agent.poll(intentId)).body.meta.session.control).toBe("active");
    const metrics = JSON.parse(cli("metrics", "--repo", "acme/cli", "--json").stdout);
    expect(metrics.humanCommands).toBe(2);
  });

  it("logs are structured JSON with no token and no prompt in them", async () => {
    const token = cli("token", "issue", "--repo", "acme/cli", "--person", "logan").stdout.trim();
    const prompt = "PROMPT-CANARY-7f3a please refactor the billing module";
    const agent = agentClient(url, token, "cli-logs");
    const r = await agent.post({ type: "publish", prompt });
    await agent.post({ type: "scope", intentId: r.body.data.intentId, paths: ["../escape"] });
    await new Promise((res) => setTimeout(res, 200));
    const lines = serverLog.split("\n").filter((l) => l.startsWith("{"));
    const requests = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === "request");
    expect(requests.some((l) => l.operation === "publish" && l.status === 200)).toBe(true);
    expect(requests.some((l) => l.operation === "scope" && l.code === "INVALID_PATH")).toBe(true);
    expect(serverLog).not.toContain(token);
    expect(serverLog).not.toContain("PROMPT-CANARY");
  });

  it("errors are clear, coded and exit non-zero", () => {
    const dup = cli("repo", "add", "acme/cli");
    expect(dup.status).toBe(1);
    expect(dup.stderr).toContain("REPOSITORY_EXISTS");
    const missing = cli("token", "issue", "--repo", "acme/none", "--person", "x");
    expect(missing.stderr).toContain("REPOSITORY_NOT_FOUND");
    expect(missing.stdout).toBe("");
    expect(cli("repo", "add", "not-a-repo").stderr).toContain("INVALID_INPUT");
  });
});
