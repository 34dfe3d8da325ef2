// The build the checkout holds decides (issue 50 item 2, adapter/src/loader/build-check.ts), in the
// real Claude Code (init's mcp_tool wiring: the MCP server that lives the whole session decides once
// it marked the session; 2.1.197 leaves each call to the gate's command hook) and OpenCode (the
// adapter in OpenCode's own process). Mid-session, with nothing else touched (the spawn-free marks
// stay): the adapter's files deleted, then cohent.cjs replaced by a build cut short that throws at
// load, then an upgrade to another build. Each break is followed by an in-scope Write and a
// `touch`: refused with the repair while the build is missing or broken, run once upgraded, and the
// peer's path refused in the upgraded build's own words (proof that it, not a build a process kept
// from before, decided). It adds itself to both lists when imported (suite.ts, report.ts).
import { copyFileSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ADAPTER_FILES } from "../../adapter/src/installer/init.ts";
import { writeVariantBuild } from "../helpers/build-variant.ts";
import { fileExists } from "./harness.ts";
import { MORE_SCENARIOS } from "./scenarios-more.ts";
import {
  clip,
  intentCmd,
  INTENT_OK,
  peerHolds,
  SCENARIOS,
  sh,
  write,
  type Ctx,
  type RowId,
  type Scenario,
} from "./scenarios.ts";

const ROW: RowId = "buildMidSession";
/** Every refusal of a missing or broken build names the repair (build-check.ts, or the fail-closed wrapper's). */
const REPAIR = /Cohent: .*Repair: npx cohent init/;
/** The upgraded build's own words for a peer's path ("overlaps the scope of", upper-cased). */
const UPGRADED = ["overlaps the scope of", "OVERLAPS THE SCOPE OF"] as const;

/** The adapter's files kept outside the checkout, for the repair. */
function save(c: Ctx): string {
  const dir = join(c.ws.dir, "adapter-saved");
  mkdirSync(dir, { recursive: true });
  for (const name of ADAPTER_FILES) copyFileSync(join(c.ws.repo, ".cohent", name), join(dir, name));
  return dir;
}

/** The adapter's files written back as `cohent init --upgrade` writes them: new files renamed into place. */
function repair(c: Ctx, saved: string): void {
  for (const name of ADAPTER_FILES) {
    const file = join(c.ws.repo, ".cohent", name);
    copyFileSync(join(saved, name), `${file}.repair`);
    renameSync(`${file}.repair`, file);
  }
}

function deleteBuild(c: Ctx): void {
  for (const name of ADAPTER_FILES) rmSync(join(c.ws.repo, ".cohent", name), { force: true });
}

/** cohent.cjs cut short after its head (the build's comments, the in-process mark) by a throw. */
function throwingBuild(c: Ctx, saved: string): void {
  const head = readFileSync(join(saved, "cohent.cjs"), "utf8")
    .split("\n")
    .filter((l, i, all) => all.slice(0, i + 1).every((x) => x.startsWith("//")))
    .join("\n");
  writeFileSync(join(c.ws.repo, ".cohent", "cohent.cjs"), `${head}\nthrow new Error("a build cut short");\n`);
}

export const BUILD_MID_SESSION: Scenario = {
  id: "build-mid-session",
  title:
    "mid-session, the marks left alone: the adapter's files deleted, then cohent.cjs throwing at load (an in-scope Write and a touch refused with the repair each time), then upgraded to another build (Write and touch run, the peer's path refused in the new build's words)",
  rows: [ROW],
  async body(c) {
    await peerHolds(c, ROW, ["src/shared"]);
    const saved = save(c);
    const r = await c.run([
      sh("intent", intentCmd()),
      write("before", "src/feature/before.ts"),
      write("deleted-write", "src/feature/deleted.ts", () => deleteBuild(c)),
      sh("deleted-touch", "touch src/feature/deleted-touch.txt"),
      write("throws-write", "src/feature/throws.ts", () => {
        repair(c, saved);
        throwingBuild(c, saved);
      }),
      sh("throws-touch", "touch src/feature/throws-touch.txt"),
      write("upgraded-write", "src/feature/upgraded.ts", () => {
        repair(c, saved);
        writeVariantBuild(join(c.ws.repo, ".cohent"), [[...UPGRADED]]);
      }),
      sh("upgraded-touch", "touch src/feature/upgraded-touch.txt"),
      write("upgraded-peer", "src/shared/new.ts"),
    ]);
    if (process.env.COHENT_CLIENTS_DEBUG)
      console.error(
        `[${c.client.label}] build-mid-session:\n` +
          [...r.results].map(([k, v]) => `  ${k} (isError ${v.isError}): ${clip(v.output, 300)}`).join("\n"),
      );
    c.check.scriptOk(r, ROW);
    c.check.ran(ROW, r, "intent", INTENT_OK);
    c.check.allowed(ROW, r, "before", "src/feature/before.ts");
    for (const [id, file] of [
      ["deleted-write", "src/feature/deleted.ts"],
      ["deleted-touch", "src/feature/deleted-touch.txt"],
      ["throws-write", "src/feature/throws.ts"],
      ["throws-touch", "src/feature/throws-touch.txt"],
    ] as const) {
      c.check.blocked(ROW, r, id, file, REPAIR);
      const out = r.results.get(id)?.output ?? "";
      c.check.expect(
        ROW,
        `${id}: no stack trace or absolute path reached the model`,
        !/\n\s+at |\/(root|home|tmp|Users)\//.test(out),
        `tool result: ${clip(out)}`,
      );
    }
    c.check.allowed(ROW, r, "upgraded-write", "src/feature/upgraded.ts");
    c.check.allowed(ROW, r, "upgraded-touch", "src/feature/upgraded-touch.txt");
    c.check.blocked(ROW, r, "upgraded-peer", "src/shared/new.ts", new RegExp(`${UPGRADED[1]} bob`));
    c.check.expect(ROW, "the peer's folder untouched", !fileExists(c.ws, "src/shared/new.ts"));
  },
};

SCENARIOS.push({ ...BUILD_MID_SESSION, only: "claude" });
MORE_SCENARIOS.push({ ...BUILD_MID_SESSION, only: "opencode" });
