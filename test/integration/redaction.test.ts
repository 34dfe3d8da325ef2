import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentClient, freshDatabaseUrl, startBackend, type TestBackend } from "../helpers/backend.js";
import { DATABASE_KINDS } from "../helpers/kinds.js";
import { pairingRequest, signedInAdmin, type ConsoleClient } from "../console/helpers.js";

/**
 * Redaction on the server, whoever sends the text: a custom integration
 * over plain HTTP (fetch, no adapter) puts a GitHub token, an OpenAI key, an
 * AWS key, a private key and a PASSWORD= assignment in every free-text
 * field; none of them reaches the database (the SQLite file's bytes, every
 * PostgreSQL row), a peer's packets, or the Control Room's answers.
 */

const GITHUB = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
const OPENAI = "sk-proj-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa";
const AWS = "AKIAQWERTYUIOPASDFGH";
const KEY_BODY = "MIIEowIBAAKCAQEAuniqueKeyBodyXYZ0123456789";
const PRIVATE_KEY = `-----BEGIN RSA PRIVATE KEY-----\n${KEY_BODY}\n-----END RSA PRIVATE KEY-----`;
const PASSWORD = "correcthorsebatterystaple";
/** What must never appear: each secret's own characters. */
const SECRETS = [GITHUB, OPENAI, AWS, KEY_BODY, PASSWORD];
const ALL = `deploy with ${GITHUB} and ${OPENAI}; aws ${AWS}; the key:\n${PRIVATE_KEY}\nand PASSWORD=${PASSWORD}`;
/** Text the adapter redacted already: the server leaves its markers exactly as they are. */
const PRE_REDACTED = `adapter said [REDACTED:github] and {"api_key": "[REDACTED:secret]"} and TOKEN=[REDACTED:secret]`;

const REPO = "acme/shop";

function leaked(text: string): string[] {
  return SECRETS.filter((s) => text.includes(s));
}

describe.each(DATABASE_KINDS)("free text over plain HTTP is redacted by the server (%s)", (kind) => {
  let backend: TestBackend;
  let db: { url: string; drop: () => Promise<void> };
  let people: ConsoleClient;
  /** Every answer any reader got, as text. */
  const answers: string[] = [];
  const keep = <T>(x: T): T => {
    answers.push(JSON.stringify(x));
    return x;
  };

  beforeAll(async () => {
    db = await freshDatabaseUrl(kind);
    backend = await startBackend({ databaseUrl: db.url });
    await backend.addRepo(REPO, "Ship the checkout");
    people = await signedInAdmin(backend);
  }, 60_000);
  afterAll(async () => {
    await backend?.stop();
    await db?.drop();
  });

  it("stores and shows no secret sent in a prompt, an intent, a checkpoint, a guard report or a person's text", async () => {
    const a = agentClient(backend.url, await backend.issueToken(REPO, "alice"), "custom-a");
    // A token's client is a person's text too (the admin CLI's --client): it names every session of the token.
    const b = agentClient(backend.url, await backend.issueToken(REPO, "bob", `bot ${GITHUB}`), "custom-b");

    // The peer works first, so that alice's work reaches its packets.
    const bPublished = keep(await b.post({ type: "publish", prompt: "Tidy the cart" }));
    const bIntent: string = bPublished.body.data.intentId;
    keep(
      await b.post({
        type: "intent",
        intentId: bIntent,
        intent: { objective: "Tidy the cart", outputs: ["cart"] },
      }),
    );

    const published = keep(
      await a.post({
        type: "publish",
        prompt: `${ALL}\n${PRE_REDACTED}`,
        clientName: `custom ${GITHUB}`,
        model: `model ${AWS}`,
      }),
    );
    expect(published.status).toBe(200);
    const intentId: string = published.body.data.intentId;
    const sessionId: string = published.body.meta.session.id;

    // A name shaped like a credential is refused: names are matched, and shown to every peer.
    const badName = keep(
      await a.post({ type: "intent", intentId, intent: { objective: "x", outputs: [GITHUB] } }),
    );
    expect(badName.status).toBe(400);
    expect(badName.body.error.code).toBe("INVALID_INPUT");

    const declared = keep(
      await a.post({
        type: "intent",
        intentId,
        intent: {
          objective: `Deploy with ${GITHUB}`,
          plan: [`use ${OPENAI}`, PRIVATE_KEY, `PASSWORD=${PASSWORD}`],
          blockers: [`waiting for ${AWS}`],
          outputs: ["deploy"],
        },
        usage: { source: `src ${GITHUB}`, inputTokens: 1 },
      }),
    );
    expect(declared.status).toBe(200);
    const checkpoint = keep(
      await a.post({ type: "checkpoint", intentId, status: "working", summary: ALL, usage: { source: AWS } }),
    );
    expect(checkpoint.status).toBe(200);
    keep(await a.post({ type: "guard", intentId, kind: "outside-scope", tool: GITHUB, paths: ["src/x.ts"] }));

    // A person's text: the pause reason reaches the agent, the goal every packet, a pairing request the Control Room.
    keep(
      await people.post(`/api/console/sessions/${sessionId}/control`, {
        kind: "pause",
        reason: `hold ${GITHUB}`,
      }),
    );
    keep(await a.post({ type: "context", intentId }));
    keep(await people.post(`/api/console/sessions/${sessionId}/control`, { kind: "resume" }));
    keep(await people.post(`/api/console/repos/${REPO}/goal`, { goal: `Ship it; PASSWORD=${PASSWORD}` }));
    const pairing = keep(
      await pairingRequest(backend.url, { repo: REPO, machine: `box ${AWS}`, user: "carol", client: OPENAI }),
    );
    expect(pairing.status).toBe(200);

    // What peers and people read.
    const peerContext = keep(await b.post({ type: "context", intentId: bIntent }));
    const peerPoll = keep(await b.poll(bIntent));
    // The peer's brief carries alice's work, redacted: her intent, her identity strings, her last checkpoint.
    expect(peerContext.body.data.packet.text).toContain('"Deploy with [REDACTED:github]"');
    expect(peerContext.body.data.packet.text).toContain("custom [REDACTED:github]/model [REDACTED:aws]");
    expect(peerContext.body.data.packet.text).toMatch(/last working "deploy with \[REDACTED:github\]/);
    expect(peerPoll.status).toBe(200);
    keep(await b.post({ type: "scopes" }));
    keep(await a.post({ type: "status" }));
    for (const p of [
      "/api/console/repos",
      `/api/console/repos/${REPO}`,
      `/api/console/repos/${REPO}/scopes`,
      `/api/console/repos/${REPO}/recap?since=${encodeURIComponent(new Date(0).toISOString())}`,
      `/api/console/pairings/${pairing.body.data.userCode}`,
    ])
      keep(await people.get(p));

    const shown = answers.join("\n");
    expect(leaked(shown)).toEqual([]);
    // Redacted, not dropped: the markers are there, and the adapter's own markers are kept exactly.
    for (const marker of ["github", "openai", "aws", "private-key", "secret"])
      expect(shown).toContain(`[REDACTED:${marker}]`);
    const overview = await people.get(`/api/console/repos/${REPO}`);
    expect(JSON.stringify(overview.body)).toContain(JSON.stringify(PRE_REDACTED).slice(1, -1));

    // The database itself.
    const stored = await databaseText(kind, db.url);
    expect(stored).toContain("[REDACTED:github]");
    expect(leaked(stored)).toEqual([]);
  }, 60_000);
});

/** Everything the database holds, as text: the SQLite files' bytes (the WAL too), or every row of every PostgreSQL table. */
async function databaseText(kind: "sqlite" | "postgres", url: string): Promise<string> {
  if (kind === "sqlite") {
    const dir = path.dirname(url.slice("file:".length));
    return readdirSync(dir)
      .map((f) => readFileSync(path.join(dir, f)).toString("latin1"))
      .join("\n");
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
    );
    const out: string[] = [];
    for (const { table_name } of tables.rows) {
      const rows = await client.query<{ row: string }>(
        `SELECT row_to_json(t)::text AS row FROM "${table_name}" t`,
      );
      out.push(...rows.rows.map((r) => r.row));
    }
    expect(out.length).toBeGreaterThan(0);
    return out.join("\n");
  } finally {
    await client.end();
  }
}
