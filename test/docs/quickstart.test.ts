// The README's quick start, as a newcomer runs it: its commands are read from the README's own blocks and run
// in order, with HOME a scratch folder. `git clone` takes a snapshot of this tree (what a clone of it would
// hold: tracked files and new ones, as they are now); `npm install && npm start` installs from that clone and
// serves (on a free port: the README's address is substituted where later commands use it); `cohent init`,
// the commit and `bootstrap --approve` run in a scratch Git repository, the pairing approved in the Control
// Room's API as a person does it; then, where the README starts the agent, the test plays Claude Code: a
// peer (bob) holds a path, the agent publishes its intent and scope through its shell, and its write into
// bob's path is refused with the text the README shows, ids aside.
// `npm install` in the clone is the cost. A fresh one took ~70 s of one core, ~55 of them better-sqlite3's
// native compile, which is not what this test is about (npm ci compiles it from the same lockfile in CI, and
// the package test on every Node line): this tree's build, for the Node that runs the test, is copied into
// the clone just before `npm install`, which then keeps it (~17 s of CPU left: the rest of the install from
// npm's cache, the Prisma clients, the Control Room's build). Everything else is installed as a newcomer's is.
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { resolvePort } from "../../backend/src/config.js";
import { CSRF_HEADER } from "../../protocol/src/console-constants.js";
import { agentRuns, claude, hook, intentJson, type Checkout } from "../adapter/helpers.js";
import { fencedBlocks } from "./markdown.js";
import { holdAsPeer, splitComment } from "./walk.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
// Where the README is read from: a broken copy makes this test fail (COHENT_DOCS_ROOT=<copy>).
const DOCS = process.env.COHENT_DOCS_ROOT ? path.resolve(process.env.COHENT_DOCS_ROOT) : ROOT;
const README = readFileSync(path.join(DOCS, "README.md"), "utf8");

/** What the README's quick start says to run. */
interface QuickStart {
  /** The server's terminal: clone, install, serve (the last command keeps running). */
  server: string[];
  /** The repository's terminal: init, commit, pair, and last the agent's start. */
  repo: string[];
  /** The address the server's comment promises, which the repository's commands are written against. */
  promised: string;
  /** The refusal the README shows "as the model sees it". */
  refusal: string;
}

function quickStart(readme: string): QuickStart {
  const sh = fencedBlocks(readme).filter((b) => /^quick start$/i.test(b.heading) && b.lang === "sh");
  if (sh.length !== 2)
    throw new Error(`the quick start has ${sh.length} sh blocks, not 2 (server, repository)`);
  const lines = (body: string) => body.split("\n").filter((l) => l.trim() && !/^\s*#/.test(l));
  const [server, repo] = [lines(sh[0]!.body), lines(sh[1]!.body)];
  const promised = /https?:\/\/[^\s)]+/.exec(splitComment(server.at(-1)!)[1])?.[0];
  if (!promised) throw new Error("the quick start's serving command does not say where it serves");
  const text = fencedBlocks(readme).find(
    (b) => /^what the model sees$/i.test(b.heading) && b.lang === "text",
  );
  if (!text) throw new Error('no text block under "What the model sees"');
  return {
    server: server.map((l) => splitComment(l)[0]),
    repo: repo.map((l) => splitComment(l)[0]),
    promised,
    refusal: text.body,
  };
}

/** A refusal as compared: the README wraps it, and ids are the run's own. */
const comparable = (s: string) =>
  s
    .replace(/\s+/g, " ")
    .trim()
    .replace(/\b(wki|pkt|ses)_[0-9a-z]+/g, "$1_…");

/** The agents the quick start may start: the test plays the first one's hooks. */
const AGENT = /^(claude|codex|copilot|gemini|opencode|cursor-agent)\b/;

let tmp = "";
let server: ChildProcess | undefined;
afterAll(async () => {
  if (server?.pid && server.exitCode === null) {
    const exited = new Promise((r) => server!.once("exit", r));
    process.kill(-server.pid, "SIGTERM"); // the block's process group: bash, npm, cohent serve
    await exited;
  }
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

// CI runs the suites twice (the machine's Node and another line, .ci/npm-test-on); the quick start is
// a newcomer's path, not a Node line's, and costs 80-110 s: the second run sets COHENT_QUICKSTART=off.
describe.skipIf(process.env.COHENT_QUICKSTART === "off")("README: the quick start, from a clone", () => {
  it("clone, install, serve, init, pair; the agent's write into a peer's claim is refused as the README shows", async () => {
    const qs = quickStart(README);
    expect(qs.server[0], "the quick start begins with a clone").toMatch(/^git clone <repository-url> /);
    // The address the README promises is where `npm start` serves when nothing says otherwise.
    const want = new URL(qs.promised);
    expect(want.hostname).toBe("127.0.0.1");
    expect(String(resolvePort(undefined, {}))).toBe(want.port);

    tmp = mkdtempSync(path.join(os.tmpdir(), "cohent-quickstart-"));
    const home = path.join(tmp, "home");
    const origin = path.join(tmp, "origin");
    const repo = path.join(home, "your-repo");
    for (const dir of [home, origin, repo]) mkdirSync(dir, { recursive: true });
    const env = newcomer(home);

    // The repository a newcomer clones: this tree as it is now (what .ci/npm-test-on copies), one commit.
    execFileSync(
      "sh",
      [
        "-c",
        `git ls-files -z --cached --others --exclude-standard | tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C "${origin}"`,
      ],
      { cwd: ROOT },
    );
    for (const args of [
      ["init", "-q", "-b", "main"],
      ["add", "-A"],
      ["commit", "-qm", "snapshot"],
    ])
      execFileSync("git", args, { cwd: origin, env });

    // The server's terminal, as one script: the last command serves and keeps running. Its output goes to a
    // file (a server under test never writes into a pipe nobody reads).
    const serverLog = path.join(tmp, "server.log");
    const out = openSync(serverLog, "w");
    // Just before the install, in the clone the script has just entered: this tree's compiled SQLite driver.
    const seed = `test -d .git -a -f package.json && mkdir -p node_modules && cp -R "${path.join(ROOT, "node_modules", "better-sqlite3")}" node_modules/`;
    const script = qs.server
      .map((l) => l.replaceAll("<repository-url>", origin))
      .flatMap((l) => (/\bnpm install\b/.test(l) ? [seed, l] : [l]))
      .join("\n");
    expect(script, "the server's block installs with npm install").toContain(seed);
    server = spawn("bash", ["-e", "-c", script], {
      cwd: home,
      env,
      detached: true,
      stdio: ["ignore", out, out],
    });
    closeSync(out);
    const started = performance.now();
    const url = await waitFor(
      () => /cohent serving on (http:\/\/\S+)/.exec(readFileSync(serverLog, "utf8"))?.[1],
      server,
      serverLog,
    );
    const minutes = ((performance.now() - started) / 60_000).toFixed(1);
    process.stderr.write(`quick start: clone, npm install and npm start took ${minutes} min\n`);
    const clone = path.join(home, "cohent");
    expect(existsSync(path.join(clone, ".git")), "the clone is where the README's later commands look").toBe(
      true,
    );
    expect(readFileSync(serverLog, "utf8"), "the sign-in link the README tells people to open").toMatch(
      /auth\/local\?token=/,
    );

    // The repository's terminal, line by line, against the server's real address.
    execFileSync("git", ["init", "-q", "-b", "main"], { cwd: repo, env });
    let agent: string | undefined;
    for (const raw of qs.repo) {
      const line = raw.replaceAll(qs.promised, url);
      if (AGENT.test(line)) {
        agent = AGENT.exec(line)![1];
        break;
      }
      if (/\bbootstrap --approve\b/.test(line)) await pair(line, repo, env, url, serverLog);
      else {
        const r = spawnSync("bash", ["-e", "-c", line], { cwd: repo, env, encoding: "utf8" });
        expect(r.status, `${line}\n${r.stdout}\n${r.stderr}`).toBe(0);
      }
    }
    expect(agent, "the quick start ends by starting an agent").toBe("claude");
    const project = JSON.parse(readFileSync(path.join(repo, ".cohent", "project.json"), "utf8"));
    expect(project.service).toBe(url);
    expect(
      execFileSync("git", ["status", "--porcelain"], { cwd: repo, env, encoding: "utf8" }),
      "init's files committed",
    ).toBe("");

    // What the model sees: bob (his own token, from the admin CLI of the clone) holds src/auth ...
    const cohent = path.join(clone, "node_modules", ".bin", "cohent");
    const bobToken = execFileSync(
      cohent,
      ["token", "issue", "--repo", project.repository, "--person", "bob", "--client", "Claude Code"],
      {
        cwd: repo,
        env,
        encoding: "utf8",
      },
    ).trim();
    await holdAsPeer(url, bobToken, ["src/auth"], { session: "bob-1", objective: "Rework the login form" });
    // ... the agent (Claude Code: its hooks, and its shell for the adapter's commands) publishes, claims src/ui ...
    const co: Checkout = { root: repo, home, script: path.join(repo, ".cohent", "cohent.mjs") };
    const S = "quickstart-1";
    const shellEnv = { ...claude.env, CLAUDE_CODE_SESSION_ID: S };
    await hook(co, claude.sessionStart(S, repo), claude.env);
    const prompt = await hook(
      co,
      claude.prompt(S, repo, "Add a remember-me box to the login form"),
      claude.env,
    );
    expect(prompt.context, prompt.stderr).toContain("[cohent plan]");
    const intent = intentJson({
      objective: "Add a remember-me box to the login form",
      outputs: ["remember-me"],
    });
    for (const args of [
      ["intent", intent],
      ["scope", "src/ui"],
    ]) {
      const { pre, cmd } = await agentRuns(co, claude, S, args, { env: shellEnv });
      expect(pre.denied, `${args[0]}: ${pre.stderr}`).toBeNull();
      expect(cmd?.code, `${args[0]}: ${cmd?.stdout}${cmd?.stderr}`).toBe(0);
    }
    // ... and its write into bob's path is refused, in the README's words.
    const write = await hook(
      co,
      claude.write(S, repo, path.join(repo, "src", "auth", "login.ts")),
      claude.env,
    );
    expect(write.denied, JSON.stringify(write.json) + write.stderr).not.toBeNull();
    expect(comparable(write.denied!)).toBe(comparable(qs.refusal));
  }, 900_000);
});

describe("the quick start's reader can fail", () => {
  it("a README without the two blocks, or with another refusal, is told apart", () => {
    expect(() => quickStart("## Quick start\n\n```sh\nnpm start\n```\n")).toThrow(/not 2/);
    const qs = quickStart(README);
    expect(comparable(qs.refusal)).not.toBe(comparable(qs.refusal.replace("bob", "ana")));
    expect(comparable("a wki_3f1c9a\n  b")).toBe(comparable("a  wki_000 b"));
  });
});

/** A newcomer's environment: HOME a scratch folder; the machine's PATH, certificates, npm cache and compiler. */
function newcomer(home: string): NodeJS.ProcessEnv {
  const npm = (key: string) =>
    execFileSync("npm", ["config", "get", key], { cwd: home, encoding: "utf8" }).trim();
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    // Not the test run's npm settings (a script's npm exports its prefix and the like), nor Cohent's.
    if (!/^(npm_|INIT_CWD$|NODE_OPTIONS$|COHENT_|DATABASE_URL$|XDG_|VITEST)/.test(k)) env[k] = v;
  return {
    ...env,
    HOME: home,
    COHENT_PORT: "0", // a free port; the address it prints replaces the README's in later commands
    npm_config_cache: npm("cache"),
    npm_config_userconfig: npm("userconfig"),
    npm_config_globalconfig: npm("globalconfig"),
    // Where CI builds better-sqlite3 against another line's headers (.ci/npm-test-on), the same here.
    ...(process.env.npm_config_nodedir ? { npm_config_nodedir: process.env.npm_config_nodedir } : {}),
    npm_config_prefer_offline: "true",
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
    GIT_AUTHOR_NAME: "Newcomer",
    GIT_AUTHOR_EMAIL: "newcomer@example.com",
    GIT_COMMITTER_NAME: "Newcomer",
    GIT_COMMITTER_EMAIL: "newcomer@example.com",
  };
}

/** Polls until `found` returns something, or fails when the process ends first (with its log). */
async function waitFor<T>(found: () => T | undefined, child: ChildProcess, log: string): Promise<T> {
  for (;;) {
    const value = found();
    if (value !== undefined) return value;
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(
        `the server's terminal ended (${child.exitCode ?? child.signalCode}):\n${readFileSync(log, "utf8").slice(-4000)}`,
      );
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** `bootstrap --approve` as the README runs it; a person approves its code in the Control Room. */
async function pair(
  line: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  url: string,
  serverLog: string,
): Promise<void> {
  const log = path.join(tmp, "bootstrap.log");
  const out = openSync(log, "w");
  const child = spawn("bash", ["-e", "-c", line], { cwd, env, stdio: ["ignore", out, out] });
  closeSync(out);
  const exit = new Promise<number | null>((r) => child.once("exit", r));
  const code = await waitFor(
    () => /approve code ([A-Z]{4}-[A-Z]{4})/.exec(readFileSync(log, "utf8"))?.[1],
    child,
    log,
  );
  // The person: the sign-in link `npm start` printed, then Pairings, approve.
  const link = /Control Room sign-in \(one-time link\): (\S+)/.exec(readFileSync(serverLog, "utf8"))![1]!;
  const signIn = await fetch(link, { redirect: "manual" });
  const cookie = signIn.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  const me = (await (await fetch(`${url}/api/console/me`, { headers: { cookie } })).json()) as any;
  const approve = await fetch(`${url}/api/console/pairings/${code}/approve`, {
    method: "POST",
    headers: { cookie, origin: url, [CSRF_HEADER]: me.data.csrfToken, "content-type": "application/json" },
    body: "{}",
  });
  expect(approve.status, await approve.clone().text()).toBe(200);
  expect(await exit, readFileSync(log, "utf8")).toBe(0);
  expect(readFileSync(log, "utf8")).toMatch(/Paired: /);
}
