import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDb, type Db } from "@cohent/backend";
import { freshDatabaseUrl } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";
import { serve, stopProcess } from "../helpers/serve.js";

const BIN = path.resolve("cli/bin/cohent.mjs");
/** Lines per file: enough for many of each, few enough for a real call per token. */
const N = 40;

/**
 * A company's set-up from files: `cohent repo add --file` and `cohent token issue --file` as real
 * processes, beside a running `cohent serve` on the same database (a SQLite file, or PostgreSQL).
 * N lines in, N JSON lines out, every token works against the server; a bad line is refused by its
 * number and nothing of the file is applied.
 */
describe.each(DATABASE_KINDS)("set-up files (%s)", (kind) => {
  let url = "";
  let drop: () => Promise<void> = async () => {};
  let server: { url: string; child: ChildProcess } | undefined;
  let db: Db;
  let dir = "";
  beforeAll(async () => {
    ({ url, drop } = await freshDatabaseUrl(kind));
    dir = mkdtempSync(path.join(os.tmpdir(), "cohent-setup-"));
    server = await serve(url);
    db = await openDb(url, { inspect: false });
  });
  afterAll(async () => {
    await db?.close();
    if (server) await stopProcess(server.child);
    await drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const cli = (args: string[], input?: string) => {
    const env: NodeJS.ProcessEnv = { ...process.env, COHENT_LOG_LEVEL: "warn" };
    delete env.NODE_OPTIONS;
    if (url.startsWith("file:")) {
      delete env.DATABASE_URL;
      args = [...args, "--data-dir", path.dirname(url.slice("file:".length))];
    } else env.DATABASE_URL = url;
    return spawnSync(process.execPath, [BIN, ...args], { env, encoding: "utf8", input, timeout: 60_000 });
  };
  const file = (name: string, lines: string[]) => {
    const p = path.join(dir, name);
    writeFileSync(p, lines.join("\n") + "\n");
    return p;
  };
  const count = async (table: string) =>
    Number((await db.read.get(`SELECT COUNT(*) AS n FROM "${table}"`))?.n);
  const jsonLines = (text: string) =>
    text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  it("N repositories and N tokens from two files; every token works", async () => {
    const names = Array.from({ length: N }, (_, i) => `acme/svc-${i}`);
    // Bare names and JSON objects mixed, a blank line skipped: the line numbers are the file's.
    const repoLines = names.map((n, i) => (i % 2 ? n : JSON.stringify({ name: n, goal: `Goal ${i}` })));
    repoLines.splice(3, 0, "");
    const added = cli(["repo", "add", "--file", file("repos.txt", repoLines)]);
    expect(added.status, added.stderr).toBe(0);
    const repos = jsonLines(added.stdout);
    expect(repos.map((r) => r.name)).toEqual(names);
    expect(repos[3]).toMatchObject({ line: 5, name: "acme/svc-3" });
    expect(repos.every((r) => /^rep_[0-9a-f]{20}$/.test(String(r.id)))).toBe(true);

    const agents = names.map((repo, i) => ({
      repo,
      person: `dev-${i}`,
      ...(i % 3 ? {} : { client: "Codex" }),
    }));
    // Through stdin this time.
    const issued = cli(["token", "issue", "--file", "-"], agents.map((a) => JSON.stringify(a)).join("\n"));
    expect(issued.status, issued.stderr).toBe(0);
    const tokens = jsonLines(issued.stdout);
    expect(tokens).toHaveLength(N);
    expect(new Set(tokens.map((t) => t.token)).size).toBe(N);
    tokens.forEach((t, i) =>
      expect(t).toMatchObject({
        line: i + 1,
        repo: agents[i]!.repo,
        person: agents[i]!.person,
        client: agents[i]!.client ?? null,
      }),
    );
    // The secrets are not stored, only their hashes.
    const stored = await db.read.all(`SELECT "tokenHash" FROM "AgentToken"`);
    expect(stored.map((r) => r.tokenHash)).not.toContain(tokens[0]!.token);

    // Each token is an agent of its repository on the running server, for its person.
    for (const [i, t] of tokens.entries()) {
      const res = await fetch(`${server!.url}/api/agent`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${String(t.token)}`,
          "x-cohent-session": `setup-${i}`,
          "content-type": "application/json",
        },
        body: JSON.stringify({ type: "publish", prompt: "first task" }),
      });
      const body = (await res.json()) as any;
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(body.data.packet.goal ?? "").toBe(i % 2 ? "" : `Goal ${i}`);
    }
  });

  it("a bad line is refused by its number, and nothing of the file is applied", async () => {
    const repos = await count("Repository");
    const tokens = await count("AgentToken");

    // A malformed line among good ones: INVALID_INPUT naming it.
    const bad = cli([
      "token",
      "issue",
      "--file",
      file("bad.jsonl", [
        JSON.stringify({ repo: "acme/svc-0", person: "eve" }),
        JSON.stringify({ repo: "acme/svc-1" }),
        "{not json",
      ]),
    ]);
    expect(bad.status).toBe(1);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toMatch(/^cohent: INVALID_INPUT: line 3: not a JSON object/);
    const schema = cli([
      "token",
      "issue",
      "--file",
      file("schema.jsonl", [
        JSON.stringify({ repo: "acme/svc-0", person: "eve" }),
        JSON.stringify({ repo: "acme/svc-1" }),
      ]),
    ]);
    expect(schema.stderr).toMatch(/^cohent: INVALID_INPUT: line 2: person: /);

    // A repository that is not registered: the good lines before it are not issued either.
    const unknown = cli([
      "token",
      "issue",
      "--file",
      file("unknown.jsonl", [
        JSON.stringify({ repo: "acme/svc-0", person: "eve" }),
        JSON.stringify({ repo: "acme/nowhere", person: "eve" }),
      ]),
    ]);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/^cohent: REPOSITORY_NOT_FOUND: line 2: acme\/nowhere is not registered/);

    // A name already registered, or twice in the file: the new names are not registered either.
    const taken = cli(["repo", "add", "--file", file("taken.txt", ["acme/new-1", "acme/svc-7"])]);
    expect(taken.status).toBe(1);
    expect(taken.stderr).toMatch(/^cohent: REPOSITORY_EXISTS: line 2: acme\/svc-7 is already registered/);
    const twice = cli(["repo", "add", "--file", file("twice.txt", ["acme/new-2", "bad name", "acme/new-2"])]);
    expect(twice.stderr).toMatch(/^cohent: INVALID_INPUT: line 2: name: repositories are named owner\/name/);
    const dup = cli(["repo", "add", "--file", file("dup.txt", ["acme/new-2", "acme/new-3", "acme/new-2"])]);
    expect(dup.stderr).toMatch(/^cohent: INVALID_INPUT: line 3: acme\/new-2 is on line 1 too/);

    // An empty file, and --file beside a name.
    expect(cli(["repo", "add", "--file", file("empty.txt", [""])]).stderr).toMatch(/The file has no lines/);
    expect(cli(["repo", "add", "acme/x", "--file", file("one.txt", ["acme/y"])]).stderr).toMatch(
      /give a name or --file, not both/,
    );

    expect(await count("Repository")).toBe(repos);
    expect(await count("AgentToken")).toBe(tokens);
  });
});
