import { ok } from "@cohent/client";
import type { DoctorReport } from "./doctor-decide.js";
import { clientName, clientSummary } from "./doctor-hosts.js";

/** doctor's last step: the report as one JSON envelope (--json), or as the lines a person reads. */

export function renderJson(data: DoctorReport): string {
  return JSON.stringify(ok("doctor", data)) + "\n";
}

export function renderText(data: DoctorReport): string {
  const { checks, clients, work, sessions } = data;
  const mark = { ok: "ok  ", warn: "warn", fail: "FAIL" };
  const lines = checks.map((c) => `${mark[c.status]}  ${c.name}: ${c.detail}`);
  lines.push(
    "",
    `Codex will run the hooks here: ${data.guarded.codex ? "yes" : "NO"}. Claude Code hooks wired: ${data.guarded.claude ? "yes" : "NO"}.`,
  );
  lines.push(
    `Fails closed when the adapter itself fails: Codex ${data.failsClosed.codex ? "yes" : "NO"}, Claude Code ${data.failsClosed.claude ? "yes" : "NO"}${clients.map((c) => `, ${clientName(c.host)} ${c.failsClosed ? "yes" : "NO"}`).join("")}.`,
    ...clientSummary(clients),
  );
  if (work) {
    lines.push(
      "",
      work.intents.length
        ? `Work intents of ${work.person}, with the guard status the service sees:`
        : `No open work intents for ${work.person}.`,
    );
    for (const i of work.intents) {
      lines.push(
        `  ${i.intentId}  ${i.guard}${i.control === "active" ? "" : ` (${i.control})`}  ${i.action}  ${[i.client, i.model].filter(Boolean).join(" ") || "-"}  session ${i.sessionKey}  last call ${i.lastCallAt}${i.objective ? `  ${JSON.stringify(i.objective)}` : ""}`,
      );
    }
  }
  if (sessions.length) {
    lines.push("", "Sessions in this checkout (local view):");
    for (const s of sessions)
      lines.push(
        `  ${s.id}  ${[s.client, s.model].filter(Boolean).join(" ") || "-"}  ${s.intentId ?? "no intent"}  ${s.action ?? "-"}  ${s.control}  last call ${s.lastCall}${s.live ? "" : " (not live)"}`,
      );
  }
  return lines.join("\n") + "\n";
}
