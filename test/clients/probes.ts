// One client version's stand-in-hook probes (issue 24): the real binary, a
// scripted model, and a stand-in hook or plugin that logs what it is given
// and answers what the probe asks. They re-measure the facts of
// MORE-CLIENTS-MEASURED.md: payload shapes (against the fixtures under
// test/adapter/fixtures/payloads/), deny forms, failure modes, trust gates.
// The adapter's own scenarios (suite.ts) are added to these clients later.
// Results: test/artifacts/clients-probes/<label>.json.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { CLIENTS, isInstalled, type ClientKind } from "./clients.ts";
import { startFakeChat, type FakeChat } from "./fake-chat.ts";
import { startFakeGemini, type FakeGemini } from "./fake-gemini.ts";
import { ARTIFACTS, WORKSPACE } from "./paths.ts";
import { probeWorkspace } from "./probe-harness.ts";
import { Checks, type ProbeCheck } from "./probe-kit.ts";
import { COPILOT_PROBES } from "./probes-copilot.ts";
import { GEMINI_PROBES } from "./probes-gemini.ts";
import { OPENCODE_PROBES } from "./probes-opencode.ts";

export const PROBES_DIR = join(ARTIFACTS, "clients-probes");

/** Root may make a network namespace holding only the loopback (`unshare -n`): the offline probe needs it. */
const CAN_UNSHARE =
  process.platform === "linux" && spawnSync("unshare", ["-n", "true"], { stdio: "ignore" }).status === 0;

/** offline-run.ts inside `unshare -n`, with `lo` up: one JSON line back. */
function offlineRun(label: string): Promise<{ out: any; raw: string }> {
  const tsx = join(WORKSPACE, "node_modules", ".bin", "tsx");
  const script = join(WORKSPACE, "test", "clients", "offline-run.ts");
  return new Promise((resolve) => {
    const child = spawn(
      "unshare",
      ["-n", "sh", "-c", `ip link set lo up && exec "$0" "$1" "$2"`, tsx, script, label],
      {
        cwd: WORKSPACE,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let raw = "";
    child.stdout.on("data", (c: Buffer) => (raw += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => (raw += c.toString("utf8")));
    child.on("close", () => {
      const line = raw.split("\n").find((l) => l.startsWith("{"));
      let out: any = null;
      try {
        out = line ? JSON.parse(line) : null;
      } catch {
        /* reported raw */
      }
      resolve({ out, raw });
    });
  });
}

interface AnyProbe {
  id: string;
  title: string;
  body(p: { client: any; ws: any; model: any; c: Checks; notes: string[] }): Promise<void>;
}

const BY_KIND: Partial<Record<ClientKind, AnyProbe[]>> = {
  copilot: COPILOT_PROBES,
  gemini: GEMINI_PROBES,
  opencode: OPENCODE_PROBES,
};

export interface ProbeResult {
  probe: string;
  title: string;
  ms: number;
  checks: ProbeCheck[];
  notes: string[];
  error?: string;
}

export function probeSuite(label: string): void {
  const client = CLIENTS.find((c) => c.label === label);
  if (!client) throw new Error(`unknown client ${label}`);
  const probes = BY_KIND[client.kind];
  if (!probes) throw new Error(`no probes for ${client.kind}`);
  const selected = (process.env.COHENT_CLIENTS ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const enabled = selected.length === 0 || selected.includes(client.label) || selected.includes(client.kind);
  const only = (process.env.COHENT_PROBES ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const results: { client: string; version: string; probes: ProbeResult[] } = {
    client: client.label,
    version: client.version,
    probes: [],
  };
  let model: FakeChat | FakeGemini | null = null;

  // No retry (the suite's config retries a scenario once): a probe that changes its answer is a finding.
  // A COHENT_PROBES that names none of this client's probes skips the suite rather than leave it empty.
  const any = only.length === 0 || [...probes.map((p) => p.id), "offline"].some((id) => only.includes(id));
  describe.skipIf(!enabled || !any)(`${client.label} probes`, { retry: 0 }, () => {
    beforeAll(async () => {
      if (!isInstalled(client))
        throw new Error(`${client.label} is not installed in the cache; run npx tsx test/clients/install.ts`);
      model = client.kind === "gemini" ? await startFakeGemini() : await startFakeChat();
    });
    afterAll(async () => {
      await model?.close();
      mkdirSync(PROBES_DIR, { recursive: true });
      writeFileSync(join(PROBES_DIR, `${client.label}.json`), JSON.stringify(results, null, 2) + "\n");
    });

    const offline: AnyProbe = {
      id: "offline",
      title:
        "no network but the loopback (unshare -n): the client runs, needs no sign-in or download, the hook denies",
      async body({ c, notes }) {
        const { out, raw } = await offlineRun(client.label);
        c.ok("one JSON line from offline-run.ts", !!out, raw.slice(-1500));
        c.eq(
          "exit 0, hook ran, allowed write landed, denied one did not",
          [out?.code, (out?.hookCalls ?? 0) > 0, out?.allowed, out?.denied],
          [0, true, "open", "closed"],
        );
        c.ok(
          "the model saw the reason",
          String(out?.deniedResult ?? "").includes("R-OFFLINE"),
          out?.deniedResult ?? null,
        );
        notes.push(`offline run ${out?.ms} ms`);
      },
    };
    const all = CAN_UNSHARE ? [...probes, offline] : probes;
    for (const probe of all.filter((p) => only.length === 0 || only.includes(p.id))) {
      it(`${probe.id}: ${probe.title}`, async () => {
        const t0 = Date.now();
        const ws = probeWorkspace();
        const c = new Checks();
        const result: ProbeResult = { probe: probe.id, title: probe.title, ms: 0, checks: c.list, notes: [] };
        results.probes.push(result);
        try {
          await probe.body({ client, ws, model, c, notes: result.notes });
        } catch (err) {
          result.error = err instanceof Error ? `${err.message}\n${err.stack ?? ""}` : String(err);
        } finally {
          result.ms = Date.now() - t0;
          ws.dispose();
        }
        if (result.error) throw new Error(result.error);
        const failed = c.failed();
        if (failed.length)
          throw new Error(
            `${failed.length} check(s) failed:\n` +
              failed.map((f) => `- ${f.name}: expected ${f.expected}, got ${f.actual}`).join("\n") +
              `\nnotes:\n${result.notes.join("\n")}`,
          );
        if (c.list.length === 0) throw new Error("the probe checked nothing");
      });
    }
  });
}
