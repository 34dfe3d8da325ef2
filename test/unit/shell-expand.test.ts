import { describe, expect, it } from "vitest";
import { holdOf, type RealPaths } from "../../adapter/src/shell/hold.js";
import { shellWrites, type ShellTarget, type ShellWrites } from "../../adapter/src/shell/writes.js";
import {
  EDITOR_ROWS,
  HOME,
  HOME_ROWS,
  PROGRAM_ROWS,
  READ_LITERAL_ROWS,
  ROOT,
  STATIC_ROWS,
  type Row,
} from "./shell-expand-table.js";

/**
 * What the shell-write reader expands statically and reads in programs'
 * scripts (shell/expand.ts, shell/outputs.ts, shell/scripts.ts,
 * shell/literals.ts), and how the guard holds a write through a symbolic
 * link (shell/hold.ts). Rows in shell-expand-table.ts.
 */

const token = (t: ShellTarget) => `${t.certainty[0]}${t.mode[0]}:${t.rel ?? t.abs ?? `~${t.text}`}`;
function render(w: ShellWrites): string[] {
  const flags = [w.readOnly && "ro", w.unread && "unread", w.init && "init"].filter((f): f is string => !!f);
  return [...new Set([...w.targets.map(token), ...flags])].sort();
}
const expected = (s: string) => [...new Set(s.split(" ").filter(Boolean))].sort();

function table(name: string, rows: Row[], root = ROOT) {
  describe(name, () => {
    for (const [command, want, cwd] of rows)
      it(JSON.stringify(command).slice(0, 120), () => {
        expect(render(shellWrites(command, cwd ?? root, root, { home: HOME }))).toEqual(expected(want));
      });
  });
}

table("what a shell expands statically is named", STATIC_ROWS);
table("the home folder, with the checkout under it", HOME_ROWS, `${HOME}/repo`);
table("programs that write where an option or a script says", PROGRAM_ROWS);
table("a one-liner's literal that is only read is not a write", READ_LITERAL_ROWS);
table("editor scripts are not paths", EDITOR_ROWS);

describe("without a home folder, ~ stays a run-time word", () => {
  it("~/x", () => {
    expect(render(shellWrites("rm ~/notes.md src/{a,b}.ts", ROOT, ROOT))).toEqual(
      expected("ur:~~/notes.md nr:src/a.ts nr:src/b.ts"),
    );
  });
});

describe("a write through a symbolic link is held by both names", () => {
  // In /r: mine/link.ts -> src/peer.ts, lnk -> src/held, out -> /tmp (outside).
  const LINKS: [string, string][] = [
    ["/r/mine/link.ts", "/r/src/peer.ts"],
    ["/r/lnk", "/r/src/held"],
    ["/r/out", "/tmp"],
  ];
  const links: RealPaths = {
    real(abs, last) {
      for (const [link, target] of LINKS) {
        if (abs === link && last) return target;
        if (abs.startsWith(link + "/")) return target + abs.slice(link.length);
      }
      return null;
    },
    root: () => "/r",
  };
  const hold = (command: string) => holdOf(shellWrites(command, "/r", "/r"), "/r", links);

  it.each([
    // command, named, uncertain
    ["echo x > mine/link.ts", ["mine/link.ts", "src/peer.ts"], []],
    ["sed -i s/a/b/ mine/link.ts", ["mine/link.ts", "src/peer.ts"], []],
    ["echo x > lnk/x.ts", ["lnk/x.ts", "src/held/x.ts"], []],
    ["rm lnk/x.ts", ["lnk/x.ts", "src/held/x.ts"], []],
    [`python3 -c "open('mine/link.ts','w').write('x')"`, [], ["mine/link.ts", "src/peer.ts"]],
    // Removing the link itself does not touch what it points to; a link out of the checkout adds nothing.
    [
      "rm mine/link.ts && echo x > out/x.ts && echo x > lnk/y.ts",
      ["mine/link.ts", "out/x.ts", "lnk/y.ts", "src/held/y.ts"],
      [],
    ],
  ] as const)("%s", (command, named, uncertain) => {
    const h = hold(command);
    expect([...h.named].sort()).toEqual([...named].sort());
    expect([...h.uncertain].sort()).toEqual([...uncertain].sort());
  });
});
