import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ERRORS } from "@cohent/protocol/codes";
import { fail } from "../../client/src/envelope.js";
import { classify, toolKind } from "../../adapter/src/guard/tools.js";
import { parseExemptCommand } from "../../adapter/src/guard/exemption.js";
import { patchTargets, shellPatchTargets } from "../../adapter/src/guard/patch.js";
import { redact, redactDeep } from "../../client/src/redact.js";
import { clientOf } from "../../adapter/src/guard/tools.js";
import { claude, codex } from "./helpers.js";

describe("tool classification with the measured payloads", () => {
  const root = "/repo";
  it.each([
    ["Write", "edit"],
    ["Edit", "edit"],
    ["NotebookEdit", "edit"],
    ["MultiEdit", "edit"],
    ["apply_patch", "edit"],
    ["Bash", "shell"],
    ["BashOutput", "shell"],
    ["KillShell", "shell"],
    ["PowerShell", "shell"],
    ["shell", "shell"],
    ["exec_command", "shell"],
    ["unified_exec", "shell"],
    ["write_stdin", "shell"],
    ["run_terminal_cmd", "shell"],
    ["terminal", "shell"],
    ["Monitor", "shell"],
    ["TaskStop", "shell"],
    ["mcp__github__create_issue", "shell"],
    ["mcp__x__read", "shell"],
    ["mcp__cohent__intent", null],
    ["mcp__cohentx__write", "shell"],
    ["Read", null],
    ["Grep", null],
    ["Glob", null],
    ["WebFetch", null],
    ["Task", null],
    ["TodoWrite", null],
  ])("%s is %s", (name, kind) => {
    expect(toolKind(name)).toBe(kind);
  });
  it("Claude Code Write: the target is file_path", () => {
    const p = claude.write("s", root, "/repo/src/a.ts");
    expect(classify(p.tool_name, p.tool_input)).toEqual({
      kind: "edit",
      targets: ["/repo/src/a.ts"],
      command: null,
    });
    expect(classify("NotebookEdit", { notebook_path: "/repo/n.ipynb" }).targets).toEqual(["/repo/n.ipynb"]);
  });
  it("Codex apply_patch: targets parsed from the patch", () => {
    const p = codex.patch(
      "s",
      root,
      "*** Begin Patch\n*** Update File: a.ts\n@@\n-x\n+y\n*** Move to: b.ts\n*** Delete File: c.ts\n*** End Patch\n",
    );
    expect(classify(p.tool_name, p.tool_input).targets).toEqual(["a.ts", "b.ts", "c.ts"]);
  });
  it("an apply_patch heredoc through the shell is an edit; other shell calls are shell", () => {
    const p = codex.shell(
      "s",
      root,
      "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: y.txt\n+patched\n*** End Patch\nEOF",
    );
    expect(classify(p.tool_name, p.tool_input)).toMatchObject({ kind: "edit", targets: ["y.txt"] });
    expect(classify("Bash", { command: "echo hi > x.txt" })).toMatchObject({ kind: "shell", targets: null });
    expect(classify("exec_command", { cmd: "cd web && apply_patch < p.diff" })).toMatchObject({
      kind: "edit",
      targets: null,
    });
    expect(classify("Bash", { command: "grep apply_patchy notes.md" }).kind).toBe("shell");
  });
  it("an unreadable edit has null targets", () => {
    expect(classify("Write", {}).targets).toBeNull();
    expect(classify("apply_patch", { command: "garbage" }).targets).toBeNull();
  });
  it("recognizes the client", () => {
    expect(clientOf(codex.prompt("s", root, "x"), {})).toBe("Codex");
    expect(clientOf(claude.prompt("s", root, "x"), {})).toBe("Claude Code");
    expect(clientOf(claude.sessionStart("s", root), { CLAUDECODE: "1" })).toBe("Claude Code");
    expect(clientOf({}, {})).toBeNull();
  });
});

describe("patch targets", () => {
  it.each([
    ["*** Begin Patch\n*** Add File: src/new.ts\n+x\n*** End Patch", ["src/new.ts"]],
    ["*** Begin Patch\n*** Update File: a b.ts\n@@\n*** End Patch", ["a b.ts"]],
    ["*** Begin Patch\r\n*** Delete File: gone.ts\r\n*** End Patch", ["gone.ts"]],
    ["*** Begin Patch\n*** Update File: old.ts\n*** Move to: new.ts\n*** End Patch", ["old.ts", "new.ts"]],
    ["*** Begin Patch\n*** Update File: a.ts\n*** Update File: a.ts\n*** End Patch", ["a.ts"]],
    ["+*** Add File: not-a-header.ts", []],
    ["", []],
  ])("%j", (patch, expected) => {
    expect(patchTargets(patch)).toEqual(expected);
  });
  it.each([
    ["apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a\n+1\n*** End Patch\nEOF", ["a"]],
    ["cd x && apply_patch <<EOF\n*** Begin Patch\n*** Update File: b\n*** End Patch\nEOF", ["b"]],
    ["/usr/local/bin/apply_patch < p.diff", []],
    ["echo apply_patch_notes", null],
    ["ls", null],
  ])("shell %j", (command, expected) => {
    expect(shellPatchTargets(command)).toEqual(expected);
  });
});

describe("self-exemption", () => {
  const ctx = { cwd: "/repo", repoRoot: "/repo" };
  it.each([
    [
      "node .cohent/cohent.mjs scope app/checkout tests/checkout.spec.ts",
      ["scope", "app/checkout", "tests/checkout.spec.ts"],
    ],
    [
      `node .cohent/cohent.mjs intent '{"objective":"Build sign-in states","plan":["a; b && c | d $(e) \`f\`"],"outputs":["x"]}'`,
      ["intent", `{"objective":"Build sign-in states","plan":["a; b && c | d $(e) \`f\`"],"outputs":["x"]}`],
    ],
    [
      `node ./.cohent/cohent.mjs checkpoint working "moved validation"`,
      ["checkpoint", "working", "moved validation"],
    ],
    ["node /repo/.cohent/cohent.mjs context", ["context"]],
    ["COHENT_TIMEOUT_MS=5000 node .cohent/cohent.mjs context --json", ["context", "--json"]],
    ["  node   .cohent/cohent.mjs   doctor  ", ["doctor"]],
    ["node .cohent/cohent.mjs scope 'src/**/*.ts'", ["scope", "src/**/*.ts"]],
  ])("exempt: %s", (command, argv) => {
    const r = parseExemptCommand(command, ctx);
    expect(r).toMatchObject({ exempt: true, argv });
  });
  it("resolves the script against the shell's cwd", () => {
    expect(
      parseExemptCommand("node ../.cohent/cohent.mjs context", { cwd: "/repo/web", repoRoot: "/repo" })
        .exempt,
    ).toBe(true);
    expect(
      parseExemptCommand("node .cohent/cohent.mjs context", { cwd: "/repo/web", repoRoot: "/repo" }).exempt,
    ).toBe(false);
  });
  // Every one of these must be refused: each would run something other than the adapter, or more.
  const BYPASSES = [
    "NODE_OPTIONS=--require=/tmp/evil.js node .cohent/cohent.mjs context",
    "PATH=/tmp/evil:$PATH node .cohent/cohent.mjs context",
    "PATH=/tmp/evil node .cohent/cohent.mjs context",
    "LD_PRELOAD=/tmp/x.so node .cohent/cohent.mjs context",
    "COHENT_X=$(rm -rf /) node .cohent/cohent.mjs context",
    "COHENT_X='a;b' node .cohent/cohent.mjs context",
    "COHENT_X=`id` node .cohent/cohent.mjs context",
    '"NODE_OPTIONS=--require=x" node .cohent/cohent.mjs context',
    "env NODE_OPTIONS=--require=x node .cohent/cohent.mjs context",
    "node .cohent/cohent.mjs context; rm -rf src",
    "node .cohent/cohent.mjs context && git push",
    "node .cohent/cohent.mjs context || git push",
    "node .cohent/cohent.mjs context | sh",
    "node .cohent/cohent.mjs context & git push",
    "node .cohent/cohent.mjs context\ngit push",
    "node .cohent/cohent.mjs context\rgit push",
    "node .cohent/cohent.mjs scope $(git rev-parse HEAD)",
    "node .cohent/cohent.mjs scope `whoami`",
    'node .cohent/cohent.mjs scope "$(whoami)"',
    'node .cohent/cohent.mjs scope "`whoami`"',
    "node .cohent/cohent.mjs scope $HOME",
    "node .cohent/cohent.mjs context > src/app.ts",
    "node .cohent/cohent.mjs context >> src/app.ts",
    "node .cohent/cohent.mjs context < /etc/passwd",
    "node .cohent/cohent.mjs context 2>&1",
    "node .cohent/cohent.mjs intent '{\"a\":1}'; git push",
    "node .cohent/cohent.mjs intent 'a\\'; git push'",
    "node .cohent/cohent.mjs intent $'a\\'; git push'",
    'node .cohent/cohent.mjs intent "a\\"; git push"',
    "node .cohent/cohent.mjs intent 'x' ';' git push", // ';' quoted is an argument, but then git push follows as words of node: still only node runs
    "node .cohent/cohent.mjs intent 'unterminated",
    'node .cohent/cohent.mjs intent "unterminated',
    "node .cohent/cohent.mjs 'multi\nline'",
    "node --require /tmp/evil.js .cohent/cohent.mjs context",
    'node -e \'require("child_process").execSync("rm -rf /")\' .cohent/cohent.mjs',
    "node /tmp/evil/.cohent/cohent.mjs context",
    "node other/.cohent/cohent.mjs context",
    "node .cohent/../evil/cohent.mjs context",
    "node cohent.mjs context",
    "node .cohent/cohent.mjs.bak context",
    "/tmp/node .cohent/cohent.mjs context",
    "nodejs .cohent/cohent.mjs context",
    "bash -c 'node .cohent/cohent.mjs context'",
    "sh -c node\\ .cohent/cohent.mjs",
    "(node .cohent/cohent.mjs context)",
    "{ node .cohent/cohent.mjs context; }",
    "node .cohent/cohent.mjs context # ; rm -rf /",
    "node .cohent/cohent.mjs scope src/*",
    "node .cohent/cohent.mjs scope ~/x",
    "node .cohent/cohent.mjs scope !(x)",
    "node .cohent/cohent.mjs scope {a,b}",
    "",
  ];
  it.each(BYPASSES.filter((c) => !c.includes("';' git push")))("refused: %j", (command) => {
    expect(parseExemptCommand(command, ctx).exempt).toBe(false);
  });
  it("a semicolon inside quotes stays literal, as in the shell", () => {
    expect(parseExemptCommand(`node .cohent/cohent.mjs intent '{"a":1}'"; git push"x`, ctx)).toMatchObject({
      exempt: true,
      argv: ["intent", '{"a":1}; git pushx'],
    });
  });
  it("a quoted ';' is one literal argument of the adapter, not a chain", () => {
    expect(parseExemptCommand("node .cohent/cohent.mjs intent 'x' ';' git push", ctx)).toMatchObject({
      exempt: true,
      argv: ["intent", "x", ";", "git", "push"],
    });
  });
});

describe("secret redaction", () => {
  const CORPUS: [string, string][] = [
    ["token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "github"],
    ["github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "github"],
    ["gho_abcdefghijklmnopqrstuvwxyz0123456789 more", "github"],
    ["OPENAI sk-proj-abcdefghijklmnopqrstuvwxyz012345", "openai"],
    ["sk-abcdefghijklmnopqrstuvwxyz0123456789ABCD", "openai"],
    ["sk-ant-api03-abcdefghijklmnopqrstuvwxyz-0123456789", "anthropic"],
    ["aws AKIAIOSFODNN7EXAMPLE id", "aws"],
    ["xoxb-1234567890-abcdefghijkl", "slack"],
    ["https://hooks.slack.com/services/T000/B000/XXXXXXXX", "slack"],
    ["-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", "private-key"],
    [
      "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\n-----END OPENSSH PRIVATE KEY-----",
      "private-key",
    ],
    ["Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc", "bearer"],
    ["DATABASE_PASSWORD=hunter2hunter2", "secret"],
    ["export STRIPE_SECRET_KEY='sk_live_abc123def456'", "secret"],
    ["AWS_SECRET_ACCESS_KEY = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "secret"],
    ['{"api_key": "abcd1234efgh"}', "secret"],
    ["GITHUB_TOKEN=abcdef0123456789", "secret"],
    ["use coh_abcdefghijklmnopqrstuvwxyz0123456789 as token", "cohent"],
  ];
  it.each(CORPUS)("%j", (text, kind) => {
    const out = redact(text);
    expect(out).toContain(`[REDACTED:${kind}]`);
    const secret = text.match(
      /(ghp_\w+|github_pat_\w+|gho_\w+|sk-[\w-]+|AKIA\w+|xoxb-[\w-]+|MIIEpAIBAAKCAQEA|b3BlbnNzaC1rZXktdjEAAAAABG5vbmU|eyJ[\w.]+|hunter2hunter2|sk_live_abc123def456|wJalrXUtnFEMI\S+|abcd1234efgh|abcdef0123456789|coh_\w+|XXXXXXXX)/,
    )?.[1];
    expect(secret).toBeTruthy();
    expect(out).not.toContain(secret!);
  });
  it.each([
    "Refactor checkout validation without changing the API",
    "Rotate the refresh token: it expires too early",
    "author: Alice; the password field must be 8 characters",
    "TOKEN_TTL=3600 is the config name",
    "skip the sk- prefix check",
  ])("leaves ordinary text alone: %j", (text) => {
    const out = redact(text);
    if (text.startsWith("TOKEN_TTL")) expect(out).toBe("TOKEN_TTL=[REDACTED:secret] is the config name");
    else expect(out).toBe(text);
  });
  it("redacts every string of an intent record", () => {
    expect(
      redactDeep({
        objective: "use ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        plan: ["PASSWORD=swordfish1"],
        outputs: ["x"],
      }),
    ).toEqual({
      objective: "use [REDACTED:github]",
      plan: ["PASSWORD=[REDACTED:secret]"],
      outputs: ["x"],
    });
  });
});

describe("the adapter speaks the protocol's codes", () => {
  it("a failure's retryable flag is the protocol's, for every code", () => {
    for (const [code, { retryable, message }] of Object.entries(ERRORS)) {
      const env = fail("op", code as keyof typeof ERRORS);
      expect(env.ok).toBe(false);
      expect(env.ok === false && [env.error.code, env.error.retryable, env.error.message]).toEqual([
        code,
        retryable,
        message,
      ]);
    }
  });
  it("declares no envelope type or error class of its own", () => {
    for (const file of ["envelope.ts", "service/client.ts", "service/http.ts", "operations.ts"]) {
      const src = readFileSync(new URL(`../../client/src/${file}`, import.meta.url), "utf8");
      expect(src).not.toMatch(
        /interface Envelope|class \w*Error|RETRYABLE|EDIT_BLOCKING_ACTIONS|16_000|1_000\)/,
      );
    }
  });
});
