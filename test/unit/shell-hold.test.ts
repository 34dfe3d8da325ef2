import { describe, expect, it } from "vitest";
import { holdOf, peerConflicts } from "../../adapter/src/shell/hold.js";
import { shellWrites } from "../../adapter/src/shell/writes.js";

/** How the guard holds a shell command's writes (shell/hold.ts), over the reader's answer, in a checkout at /r. */
const hold = (command: string, cwd = "/r") => holdOf(shellWrites(command, cwd, "/r"), "/r");

describe("a shell command's writes as the guard holds them", () => {
  it.each([
    // command, named, uncertain, whole, readOnly
    ["sed -i s/a/b/ src/peer.ts", ["src/peer.ts"], [], false, false],
    ["echo x > src/peer.ts", ["src/peer.ts"], [], false, false],
    ["cd src && sed -i s/a/b/ peer.ts", ["src/peer.ts"], [], false, false],
    ["printf x >> src/held/x.ts", ["src/held/x.ts"], [], false, false],
    [`python3 -c "open('src/peer.ts','w').write('x')"`, [], ["src/peer.ts"], false, false],
    ["echo x > /tmp/out.txt", [], [], false, false],
    ["echo x > ../elsewhere.txt", [], [], false, false],
    ["rm -rf node_modules/pkg", [], [], false, false],
    ["echo x > .git/info/exclude", [], [], false, false],
    ["git checkout -- .", [], [], true, false],
    ["rm -rf .", [], [], true, false],
    ["prettier --write .", [], [], true, false],
    ["cat src/peer.ts", [], [], false, true],
    ["git diff src/peer.ts", [], [], false, true],
    // A test run names no write, but runs the project's code: it is watched, so not read-only here.
    ["npx vitest run src/peer.test.ts", [], [], false, false],
    ["pytest src/held/test_x.py", [], [], false, false],
  ] as const)("%s", (command, named, uncertain, whole, readOnly) => {
    const h = hold(command);
    expect(h.named).toEqual(named);
    expect(h.uncertain).toEqual(uncertain);
    expect(h.whole).toBe(whole);
    expect(h.readOnly).toBe(readOnly);
  });
});

describe("the peers an uncertain write reaches", () => {
  const peers = [
    {
      intentId: "wki_a",
      person: "ana",
      client: "Claude Code",
      model: null,
      paths: ["src/peer.ts", "src/held"],
    },
    { intentId: "wki_c", person: "cy", client: "Codex", model: "gpt-5", paths: ["docs/**/*.md"] },
    { intentId: "wki_d", person: "di", client: null, model: null, paths: [] },
  ];
  it.each([
    [["src/peer.ts"], false, ["wki_a"]],
    [["src/held/x.ts"], false, ["wki_a"]],
    [["docs/a/b.md"], false, ["wki_c"]],
    [["lib/x.ts"], false, []],
    [[], true, ["wki_a", "wki_c"]],
  ] as const)("%j whole=%s -> %j", (paths, whole, ids) => {
    const found = peerConflicts(paths, whole, peers);
    expect(found.map((c) => c.intentId)).toEqual(ids);
    for (const c of found) expect(c.theirPaths.length).toBeGreaterThan(0);
  });
});
