import type { RepoPageRow, RepoPages } from "./contract.js";
import type { Handle } from "./handle.js";
import { inListSql, listParam } from "./sql/exec.js";

const dateOrNull = (v: unknown): Date | null =>
  v === null || v === undefined ? null : v instanceof Date ? v : new Date(v as string);
const ms = (v: unknown) => dateOrNull(v)?.getTime() ?? 0;

/** `q` as a LIKE pattern matching it anywhere, lower-cased, with `\`, `%` and `_` taken literally. */
const containing = (q: string) => `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
const SEARCH = `LOWER("name") LIKE ? ESCAPE '\\'`;

/**
 * The repository list, a page at a time: the search, the count and the page in SQL (the name's unique
 * index orders them), then each row of the page's names in one statement, never every repository's.
 */
export const repoPages = (h: Handle): RepoPages => {
  const { x } = h;
  return {
    matching: async (q, offset, limit) => {
      const where = q ? `WHERE ${SEARCH}` : "";
      const args = q ? [containing(q)] : [];
      const total = Number(
        (await x.get(`SELECT COUNT(*) AS "n" FROM "Repository" ${where}`, ...args))?.n ?? 0,
      );
      const names = (
        limit === null
          ? await x.all(`SELECT "name" FROM "Repository" ${where} ORDER BY "name" ASC`, ...args)
          : await x.all(
              `SELECT "name" FROM "Repository" ${where} ORDER BY "name" ASC LIMIT ? OFFSET ?`,
              ...args,
              limit,
              offset,
            )
      ).map((r) => r.name as string);
      return { total, names };
    },
    summaries: async (names) => {
      if (names.length === 0) return [];
      const rows = await x.all(
        `SELECT r."id", r."name", r."goal",
           (SELECT COUNT(*) FROM "Intent" i WHERE i."repoId" = r."id" AND i."closedAt" IS NULL) AS "openIntents",
           (SELECT COUNT(*) FROM "AgentToken" t WHERE t."repoId" = r."id" AND t."revokedAt" IS NULL) AS "activeTokens",
           (SELECT e."createdAt" FROM "Event" e WHERE e."repoId" = r."id" ORDER BY e."seq" DESC LIMIT 1) AS "lastActivityAt"
         FROM "Repository" r WHERE ${inListSql(x.dialect, `r."name"`)} ORDER BY r."name" ASC`,
        listParam(x.dialect, names),
      );
      const ids = rows.map((r) => r.id as string);
      const people = new Map<string, string[]>();
      for (const p of await x.all(
        `SELECT "repoId", "person" FROM "AgentToken" WHERE ${inListSql(x.dialect, `"repoId"`)} AND "revokedAt" IS NULL
           GROUP BY "repoId", "person" ORDER BY "repoId" ASC, MIN("createdAt") ASC, "person" ASC`,
        listParam(x.dialect, ids),
      ))
        people.set(p.repoId as string, [...(people.get(p.repoId as string) ?? []), p.person as string]);
      return rows.map((r): RepoPageRow => ({
        id: r.id as string,
        name: r.name as string,
        goal: r.goal as string,
        openIntents: Number(r.openIntents),
        activeTokens: Number(r.activeTokens),
        people: people.get(r.id as string) ?? [],
        lastActivityAt: dateOrNull(r.lastActivityAt),
      }));
    },
    fingerprint: async (repoId) => {
      const [event, repo, pairing, tokens, seen, catches, wiring] = await Promise.all([
        x.get(`SELECT MAX("seq") AS "seq" FROM "Event" WHERE "repoId" = ?`, repoId),
        x.get(`SELECT "name", "goal" FROM "Repository" WHERE "id" = ?`, repoId),
        x.get(
          `SELECT COUNT(*) AS "n", MAX(p."updatedAt") AS "at" FROM "Pairing" p JOIN "Repository" r ON r."name" = p."repoName" WHERE r."id" = ?`,
          repoId,
        ),
        x.get(
          `SELECT COUNT(*) AS "n", COUNT("revokedAt") AS "revoked" FROM "AgentToken" WHERE "repoId" = ?`,
          repoId,
        ),
        x.get(
          `SELECT MAX("lastSeenAt") AS "seen", MAX("hostReportedAt") AS "host" FROM "Session" WHERE "repoId" = ?`,
          repoId,
        ),
        x.get(`SELECT COUNT(*) AS "n" FROM "GuardCatch" WHERE "repoId" = ?`, repoId),
        x.get(
          `SELECT COUNT("clearedAt") AS "n", MAX("reportedAt") AS "reported", MAX("clearedAt") AS "cleared" FROM "WiringReport" WHERE "repoId" = ?`,
          repoId,
        ),
      ]);
      return [
        Number(event?.seq ?? 0),
        repo ? `${String(repo.goal).length}.${hash(String(repo.goal))}` : "gone",
        Number(pairing?.n ?? 0),
        ms(pairing?.at),
        Number(tokens?.n ?? 0),
        Number(tokens?.revoked ?? 0),
        ms(seen?.seen),
        ms(seen?.host),
        Number(catches?.n ?? 0),
        Number(wiring?.n ?? 0),
        ms(wiring?.reported),
        ms(wiring?.cleared),
      ].join(":");
    },
  };
};

/** A short, stable digest of a text (FNV-1a), so that a goal's change moves the fingerprint without carrying it. */
function hash(s: string): string {
  let v = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) v = Math.imul(v ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return v.toString(36);
}
