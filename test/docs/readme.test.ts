// The README's commands run as written and its links resolve: the develop section's commands are the
// package's scripts and `npm start` serves; the curl walk it points to runs, step by step, against a fresh
// server; every relative link and #anchor in README.md, CHANGELOG.md and docs/ lands somewhere, and none in
// README.md or docs/ leaves the repository. The quick start runs in quickstart.test.ts.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolvePort } from "../../backend/src/config.js";
import { serve, stopProcess } from "../helpers/serve.js";
import { anchors, fencedBlocks, links, prose, type Block } from "./markdown.js";
import { holdAsPeer, splitComment } from "./walk.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
// Where the Markdown is read from: a copy of the docs can be checked before it lands (and made to fail).
const DOCS = process.env.COHENT_DOCS_ROOT ? path.resolve(process.env.COHENT_DOCS_ROOT) : ROOT;
const read = (rel: string): string | null => {
  const file = path.join(DOCS, rel);
  return existsSync(file) && statSync(file).isFile() ? readFileSync(file, "utf8") : null;
};
const README = read("README.md")!;
const PKG = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
  scripts: Record<string, string>;
  workspaces: string[];
};

// ---- the develop section ------------------------------------------------------------------------------

interface Command {
  argv: string[];
  /** The line's trailing comment: what the README says the line does. */
  says: string;
  /** The last command of its line (`npm install && npm start`: the one the comment is about). */
  last: boolean;
}

/** The shell commands of the README's "Develop" section's first block: `a && b  # says`. */
function developCommands(readme: string): Command[] {
  const block = fencedBlocks(readme).find((b) => /^develop\b/i.test(b.heading));
  if (!block) throw new Error('README.md has no code block under a "Develop …" heading');
  return block.body.split("\n").flatMap((line) => {
    const [cmd = "", says = ""] = splitComment(line);
    const chain = cmd
      .split("&&")
      .map((c) => c.trim())
      .filter(Boolean);
    return chain.map((c, i) => ({ argv: c.split(/\s+/), says, last: i === chain.length - 1 }));
  });
}

/** What is wrong with the develop commands against the package's scripts (empty: nothing). */
function developProblems(commands: Command[], scripts: Record<string, string>): string[] {
  const problems: string[] = [];
  for (const { argv } of commands) {
    const [tool, verb] = argv;
    if (tool !== "npm") problems.push(`not an npm command: ${argv.join(" ")}`);
    else if (verb === "install" || verb === "ci") continue;
    else if (!scripts[scriptOf(argv)]) problems.push(`package.json has no script for: ${argv.join(" ")}`);
  }
  return problems;
}

/** The package script an npm command runs: `npm start` → start, `npm run bench` → bench. */
const scriptOf = ([, verb = "", name = ""]: string[]) => (verb === "run" ? name : verb);

// ---- the curl walk ------------------------------------------------------------------------------------

interface Statement {
  code: string;
  /** The comment lines above it in the block (a walk's step description). */
  note: string;
  /** Its own trailing comment. */
  trailing: string;
}

/** A shell block as statements: continuation lines joined, a function definition kept whole, comments noted. */
function statements(body: string): Statement[] {
  const out: Statement[] = [];
  const lines = body.split("\n");
  let note = "";
  let lastWasComment = false;
  for (let i = 0; i < lines.length; i++) {
    let code = lines[i]!;
    if (/^\s*#/.test(code)) {
      const text = code.replace(/^\s*#\s?/, "");
      note = lastWasComment ? `${note} ${text.trim()}` : text.trim();
      lastWasComment = true;
      continue;
    }
    lastWasComment = false;
    if (!code.trim()) continue;
    const more = () => i + 1 < lines.length && (/\\$/.test(code) || isOpenFunction(code));
    while (more()) code += `\n${lines[++i]}`;
    const [cmd, trailing] = splitComment(code);
    out.push({ code: cmd, note, trailing });
  }
  return out;
}

const isOpenFunction = (code: string) =>
  /^\s*[\w-]+\s*\(\)\s*\{/.test(code) && !/\}\s*$/.test(code.trimEnd());
const FUNCTION = /^\s*([\w-]+)\s*\(\)\s*\{/;
const ASSIGNMENT = /^([A-Za-z_]\w*)=(.*)$/s;

/** The sections (file and heading) whose shell blocks call curl: the walk the README sends users to. */
function curlWalks(files: string[]): { file: string; heading: string; blocks: Block[]; md: string }[] {
  const walks = [];
  for (const file of files) {
    const md = read(file)!;
    const byHeading = new Map<string, Block[]>();
    for (const b of fencedBlocks(md).filter((b) => b.lang === "sh" || b.lang === "bash"))
      byHeading.set(b.heading, [...(byHeading.get(b.heading) ?? []), b]);
    for (const [heading, blocks] of byHeading)
      if (blocks.some((b) => /^\s*curl\s/m.test(b.body) || /\bcurl\s+-/.test(b.body)))
        walks.push({ file, heading, blocks, md });
  }
  return walks;
}

/** The envelope examples the section shows after the walk (`{"version":1,"ok":…}` in inline code). */
function envelopeTemplates(md: string, heading: string): { ok?: unknown; error?: unknown } {
  const start = md.indexOf(`## ${heading}`);
  const end = md.indexOf("\n## ", start + 1);
  const section = md.slice(start, end < 0 ? undefined : end);
  const out: { ok?: unknown; error?: unknown } = {};
  for (const m of section.matchAll(/`(\{"version":[^`]*\})`/g)) {
    // The doc elides with "…": a whole object, one value, or the rest of the keys.
    const json = m[1]!.replace(/,…\}/g, "}").replace(/\{…\}/g, '"__OBJECT__"').replace(/:…/g, ':"__ANY__"');
    const t = JSON.parse(json) as { ok: boolean };
    out[t.ok ? "ok" : "error"] = t;
  }
  return out;
}

/** Where `actual` lacks a key of `template` or has another JSON type there ("version" and "ok" must match). */
function shapeProblems(template: unknown, actual: unknown, at = ""): string[] {
  const type = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);
  if (template === "__ANY__") return [];
  if (template === "__OBJECT__")
    return type(actual) === "object" ? [] : [`${at}: expected an object, got ${type(actual)}`];
  if (type(template) !== type(actual)) return [`${at}: expected ${type(template)}, got ${type(actual)}`];
  if (type(template) !== "object") return [];
  const problems: string[] = [];
  for (const [k, v] of Object.entries(template as object)) {
    const a = (actual as Record<string, unknown>)[k];
    if (!(k in (actual as object))) problems.push(`${at}.${k}: missing`);
    else if ((k === "version" || k === "ok") && v !== a)
      problems.push(`${at}.${k}: ${String(a)} ≠ ${String(v)}`);
    else problems.push(...shapeProblems(v, a, `${at}.${k}`));
  }
  return problems;
}

/** The first string under `value` that looks like an id with this prefix (`pkt_…`), depth first. */
function findId(value: unknown, prefix: string): string | undefined {
  if (typeof value === "string") return new RegExp(`^${prefix}[0-9a-zA-Z]+$`).test(value) ? value : undefined;
  if (value && typeof value === "object")
    for (const v of Object.values(value)) {
      const id = findId(v, prefix);
      if (id) return id;
    }
  return undefined;
}

const dig = (value: unknown, dotted: string): unknown =>
  dotted.split(".").reduce<any>((v, k) => (v == null ? undefined : v[k]), value);

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function bash(script: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-e", "-c", script], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.once("error", reject);
    child.once("close", (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

// ---- links ---------------------------------------------------------------------------------------------

function markdownFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(path.join(DOCS, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(`${dir}/${e.name}`) : e.name.endsWith(".md") ? [`${dir}/${e.name}`] : [],
    );
  return ["README.md", ...(read("CHANGELOG.md") === null ? [] : ["CHANGELOG.md"]), ...walk("docs")];
}

/**
 * Every link of `file` that leads nowhere: a missing file, an anchor no heading makes, a malformed URL.
 * README.md and docs/ stand alone: a reader who cloned the repository has every page they link to, so a
 * link to another site (but a loopback address) is one too, and so is a mention of a folder beside the
 * repository. CHANGELOG.md keeps its links to the formats it follows.
 */
function linkProblems(file: string, md: string, readRel: (rel: string) => string | null): string[] {
  const problems: string[] = [];
  const standalone = file !== "CHANGELOG.md";
  if (standalone)
    for (const m of prose(md).matchAll(/(?:\.\.\/)+shared\/|(?<![\w/])shared\/clients\//g))
      problems.push(
        `${file}:${prose(md).slice(0, m.index).split("\n").length}: names a folder outside the repository`,
      );
  for (const { target, line } of links(md)) {
    const where = `${file}:${line} → ${target}`;
    if (!target) {
      problems.push(`${where}: an empty link`);
      continue;
    }
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
      let url: URL | null = null;
      try {
        url = new URL(target);
      } catch {
        /* reported below */
      }
      const ok =
        url !== null &&
        (url.protocol === "mailto:" ||
          (/^https?:\/\//.test(target) &&
            /^(localhost|[\d.]+|[a-z0-9-]+(\.[a-z0-9-]+)+)$/i.test(url.hostname)));
      if (!ok) problems.push(`${where}: not a well-formed http(s) URL`);
      else if (standalone && url!.protocol !== "mailto:" && !/^(localhost|127\.0\.0\.1)$/.test(url!.hostname))
        problems.push(`${where}: a link outside the repository`);
      continue;
    }
    const [rawPath = "", anchor] = target.split("#", 2) as [string, string | undefined];
    const rel = rawPath
      ? path.posix.normalize(
          rawPath.startsWith("/")
            ? decodeURIComponent(rawPath).slice(1)
            : path.posix.join(path.posix.dirname(file), decodeURIComponent(rawPath)),
        )
      : file;
    if (rel.startsWith("../") || !existsSync(path.join(DOCS, rel))) {
      problems.push(`${where}: no such file`);
      continue;
    }
    if (anchor === undefined) continue;
    const page = rel === file ? md : /\.md$/i.test(rel) ? readRel(rel) : null;
    if (page === null) problems.push(`${where}: an anchor into something that is not a Markdown file`);
    else if (!anchors(page).has(decodeURIComponent(anchor)))
      problems.push(`${where}: no heading makes #${anchor}`);
  }
  return problems;
}

// ---- the tests -----------------------------------------------------------------------------------------

describe("README: develop commands and the curl walk, against a real server", () => {
  let dataDir = "";
  let server: { url: string; child: ChildProcess } | undefined;
  const develop = developCommands(README);
  // The command the README says serves (`npm start  # serves … on http://…`), and that address, which the
  // docs' commands are written against.
  const serving = develop.find((c) => c.last && /\bserves?\b.*https?:\/\//.test(c.says));
  const promised = serving && /https?:\/\/[^\s)]+/.exec(serving.says)![0];

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), "cohent-readme-"));
    server = await serve(`file:${path.join(dataDir, "cohent.sqlite")}`);
  });
  afterAll(async () => {
    if (server) await stopProcess(server.child);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("the develop section's commands are package.json's scripts", () => {
    expect(develop.length, "the develop section's commands").toBeGreaterThanOrEqual(2);
    expect(developProblems(develop, PKG.scripts)).toEqual([]);
    // `npm test  # typecheck, then every test suite`
    const testing = develop.find((c) => /typecheck/.test(c.says));
    expect(testing, "a develop command that typechecks and runs the suites").toBeDefined();
    const test = PKG.scripts[scriptOf(testing!.argv)]!.split("&&").map((s) => s.trim());
    expect(test[0]).toBe("npm run typecheck");
    expect(test.at(-1)).toMatch(/^vitest run\b/);
  });

  it("the develop section's server command serves where the README says, on embedded SQLite", () => {
    expect(serving, "a develop command whose comment says it serves on an address").toBeDefined();
    // npm runs a script with node_modules/.bin first on PATH: its first word is the workspace's bin.
    const startScript = PKG.scripts[scriptOf(serving!.argv)];
    expect(startScript, `package.json's script for ${serving!.argv.join(" ")}`).toBeDefined();
    const [bin = "", ...args] = startScript!.trim().split(/\s+/);
    const onPath = realpathSync(path.join(ROOT, "node_modules/.bin", bin));
    const owner = PKG.workspaces.find((w) => {
      const pkg = JSON.parse(readFileSync(path.join(ROOT, w, "package.json"), "utf8")) as {
        bin?: Record<string, string>;
      };
      return pkg.bin?.[bin] && realpathSync(path.join(ROOT, w, pkg.bin[bin])) === onPath;
    });
    expect(owner, `no workspace's bin is the ${bin} npm start runs`).toBeTruthy();
    // The server this suite started is that bin with those arguments (plus a free port and a temp data dir).
    const [, script, ...rest] = server!.child.spawnargs;
    expect(realpathSync(script!)).toBe(onPath);
    expect(rest.slice(0, args.length)).toEqual(args);
    const want = new URL(promised!);
    expect(new URL(server!.url).hostname).toBe(want.hostname);
    expect(String(resolvePort(undefined, {}))).toBe(want.port); // the port when none is given
    expect(existsSync(path.join(dataDir, "cohent.sqlite")), "the embedded SQLite file").toBe(true);
  });

  it("the curl walk the docs give runs against a fresh server, each answer as the docs show it", async () => {
    const walks = curlWalks(markdownFiles());
    expect(walks.map((w) => `${w.file} § ${w.heading}`)).toHaveLength(1);
    const walk = walks[0]!;
    // The README sends readers to it.
    expect(links(README).some((l) => l.target.split("#")[0] === walk.file)).toBe(true);
    const templates = envelopeTemplates(walk.md, walk.heading);
    expect(templates.ok, "the success envelope the docs show").toBeDefined();
    expect(templates.error, "the failure envelope the docs show").toBeDefined();
    // The resolver's answers, as the README's first paragraph lists them in bold.
    const actions = [...README.split("\n## ")[0]!.matchAll(/\*\*(\w+)\*\*/g)].map((m) => m[1]!);
    expect(actions.length).toBeGreaterThanOrEqual(5);

    const env: NodeJS.ProcessEnv = {
      ...process.env,
      COHENT_DATA_DIR: dataDir, // `npx cohent` talks to the server's database directly
      COHENT_LOG_LEVEL: "warn",
    };
    delete env.DATABASE_URL;
    delete env.NODE_OPTIONS;
    const curl = await bash("command -v curl && command -v npx", env);
    expect(curl.status, "curl and npx on PATH").toBe(0);

    // Each statement in its own `bash -e`; variables and functions carried over in a state file.
    const state = path.join(dataDir, "shell-state.sh");
    const vars = new Set<string>();
    const funcs = new Set<string>();
    const shellVar = async (name: string) => (await bash(`. "${state}"; printf %s "$${name}"`, env)).stdout;
    let last: unknown = null;
    let substituted = 0;
    let peerDone = false;
    const log: string[] = [];

    for (const block of walk.blocks)
      for (const s of statements(block.body)) {
        let code = s.code;
        const step = `${s.note ? `[${s.note.slice(0, 60)}] ` : ""}${code.split("\n")[0]!.slice(0, 80)}`;
        if (promised && code.includes(promised)) {
          code = code.replaceAll(promised, server!.url);
          substituted++;
        }
        const fn = FUNCTION.exec(code)?.[1];
        if (fn) funcs.add(fn);
        const assign = fn ? null : ASSIGNMENT.exec(code);
        if (assign) {
          vars.add(assign[1]!);
          // `INTENT=wki_...   # data.intentId from the answer`: the value from the previous answer.
          const placeholder = /^([a-z]+_)\.\.\.$/.exec(assign[2]!.trim());
          if (placeholder) {
            const from = /^(\S+) from the answer/.exec(s.trailing)?.[1];
            expect(from, `${step}: a placeholder needs "# <field> from the answer"`).toBeTruthy();
            const value = dig(last, from!);
            expect(value, `${step}: ${from} in the previous answer`).toMatch(
              new RegExp(`^${placeholder[1]}`),
            );
            code = `${assign[1]}=${String(value)}`;
          }
        } else if (!fn)
          // An id left as `pkt_...` in a request: the one the previous answer gave.
          code = code.replace(/\b([a-z]+_)\.\.\./g, (_, prefix: string) => {
            const id = findId(last, prefix);
            expect(id, `${step}: a ${prefix} id in the previous answer`).toBeTruthy();
            return id!;
          });

        // The queue step is written for a peer's paths ("On a peer's paths, queue instead"): on a fresh
        // server nobody holds them, so the test makes a peer (same token, another session) hold them first.
        if (!peerDone && /"queue":true/.test(code)) {
          peerDone = true;
          const paths = JSON.parse(/"paths":(\[[^\]]*\])/.exec(code)![1]!) as string[];
          await holdAsPeer(server!.url, await shellVar("TOKEN"), paths, { session: "readme-test-peer" });
        }

        const dump = [
          vars.size ? `declare -p ${[...vars].join(" ")}` : "",
          funcs.size ? `declare -f ${[...funcs].join(" ")}` : "",
        ]
          .filter(Boolean)
          .join("; ");
        const run = await bash(
          `if [ -f "${state}" ]; then . "${state}"; fi\n${code}\n{ ${dump || ":"}; } > "${state}.next" 2>/dev/null || true\nmv "${state}.next" "${state}"`,
          env,
        );
        log.push(`$ ${step}\n${run.stdout.slice(0, 400)}`);
        expect(run.status, `${step} exited ${run.status}: ${run.stderr}\n${log.join("\n")}`).toBe(0);
        if (fn || assign) continue;
        if (!run.stdout.trim().startsWith("{")) continue; // the admin CLI's lines: exit 0 is the claim
        const answer = JSON.parse(run.stdout) as any;
        last = answer;
        expectStep(answer, code, s.note, actions, step);
        const problems = shapeProblems(answer.ok ? templates.ok : templates.error, answer);
        expect(problems, `${step}: the envelope's shape\n${run.stdout}`).toEqual([]);
      }

    expect(substituted, `the walk is written against ${promised}`).toBeGreaterThan(0);
    expect(peerDone, "the walk's queue step ran against a peer").toBe(true);
    // "the token is printed once, on stdout": TOKEN holds exactly one token.
    expect(await shellVar("TOKEN")).toMatch(/^\S+$/);
  });
});

/** What the docs say each operation answers, checked on the real answer. */
function expectStep(answer: any, code: string, note: string, actions: string[], step: string): void {
  const type = /"type":"([\w-]+)"/.exec(code)?.[1] ?? "poll"; // a GET is the poll
  const where = `${step}\n${JSON.stringify(answer).slice(0, 600)}`;
  expect(answer.operation, where).toBe(type);
  const ok = (v = true) => expect(answer.ok, where).toBe(v);
  switch (type) {
    case "publish": // "answers with the compact plan packet"
      ok();
      expect(answer.data.packet?.kind, where).toBe("plan");
      break;
    case "intent": // "the resolver answers"
      ok();
      expect(actions, where).toContain(answer.data.action);
      break;
    case "scope":
      if (/"queue":true/.test(code)) {
        // "the refusal's details say the place (queued.place, queued.behind)"
        ok(false);
        expect(answer.error.code, where).toBe("SCOPE_CONFLICT");
        for (const field of /\(([\w.]+(?:, [\w.]+)*)\)/.exec(note)?.[1]?.split(", ") ?? [])
          expect(dig(answer.error.details, field), `${where}\n(${field})`).toBeDefined();
      } else {
        ok();
        expect(answer.data.paths, where).toEqual(JSON.parse(/"paths":(\[[^\]]*\])/.exec(code)![1]!));
      }
      break;
    case "release-request": // "ask the holder": it names whom it asked
      ok();
      expect(answer.data.asked?.length, where).toBeGreaterThan(0);
      break;
    case "poll": // after cursor 0 something changed: a packet, not null
      ok();
      expect(answer.data.packet, where).not.toBeNull();
      break;
    case "checkpoint":
    case "ack":
      ok();
      break;
    default:
      throw new Error(`${where}\nthe walk has an operation this test does not know: say what it answers`);
  }
}

describe("README, CHANGELOG and docs/: links", () => {
  it("every relative link reaches a file, every #anchor a heading, every URL is well-formed", () => {
    const files = markdownFiles();
    expect(files).toContain("docs/mcp.md");
    const problems = files.flatMap((f) => linkProblems(f, read(f)!, read));
    expect(problems).toEqual([]);
    // A floor, so that a parser that finds nothing cannot pass (58 links on 2026-12-07).
    expect(files.flatMap((f) => links(read(f)!)).length).toBeGreaterThan(40);
  });
});

describe("the checkers themselves can fail", () => {
  it("a broken link, a missing anchor and a bad URL are reported", () => {
    const md = [
      "# Title",
      "[ok](#title) [gone](docs/no-such-page.md) [anchor](docs/mcp.md#no-such-heading)",
      "[self](#nowhere) [url](https://localhost:99999/) `[in code](nowhere.md)`",
      "```sh",
      "[in a block](nowhere.md)",
      "```",
    ].join("\n");
    expect(linkProblems("README.md", md, read).map((p) => p.replace(/^.*?: /, ""))).toEqual([
      "no such file",
      "no heading makes #no-such-heading",
      "no heading makes #nowhere",
      "not a well-formed http(s) URL",
    ]);
    // Outside the repository: another site, a path above it, a mention of the folder beside it.
    const outside = [
      "# Title",
      "[site](https://example.com/facts) [local](http://127.0.0.1:4317/) [up](../../shared/clients/FACTS.md)",
      "As measured (shared/clients/FACTS.md).",
    ].join("\n");
    expect(linkProblems("docs/clients.md", outside, read).map((p) => p.replace(/^.*?: /, ""))).toEqual([
      "names a folder outside the repository",
      "names a folder outside the repository",
      "a link outside the repository",
      "no such file",
    ]);
    // CHANGELOG.md may name the formats it follows.
    expect(
      linkProblems("CHANGELOG.md", "[Keep a Changelog](https://keepachangelog.com/en/1.1.0/)", read),
    ).toEqual([]);
  });

  it("a develop command with no script behind it is reported", () => {
    const readme =
      "## Develop\n\n```sh\nnpm install && npm run serve  # serves on http://127.0.0.1:4317\n```\n";
    expect(developProblems(developCommands(readme), PKG.scripts)).toEqual([
      "package.json has no script for: npm run serve",
    ]);
  });

  it("an answer of another shape than the docs show is reported", () => {
    const walk = curlWalks(markdownFiles())[0]!;
    const { ok } = envelopeTemplates(walk.md, walk.heading);
    expect(shapeProblems(ok, { version: 2, ok: true, data: [] })).toEqual(
      expect.arrayContaining([".version: 2 ≠ 1", ".data: expected an object, got array", ".meta: missing"]),
    );
  });

  it("GitHub's heading anchors", () => {
    expect([...anchors("## What `init` and `bootstrap` write\n## The server's rules\n# A\n# A")]).toEqual([
      "what-init-and-bootstrap-write",
      "the-servers-rules",
      "a",
      "a-1",
    ]);
    expect(prose("`[x](y)`")).not.toContain("[");
  });
});
