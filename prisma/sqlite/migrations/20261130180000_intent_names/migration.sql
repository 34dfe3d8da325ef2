-- CreateTable
CREATE TABLE "IntentName" (
    "repoId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "intentId" TEXT NOT NULL,

    PRIMARY KEY ("intentId", "kind", "name"),
    CONSTRAINT "IntentName_intentId_fkey" FOREIGN KEY ("intentId") REFERENCES "Intent" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "IntentName_repoId_kind_name_idx" ON "IntentName"("repoId", "kind", "name");

-- Backfill: every published record's outputs, capabilities and components, folded.
-- SQLite's lower() folds ASCII only; names with other upper-case letters are re-folded
-- by the server when their intent's record is next written.
INSERT OR IGNORE INTO "IntentName" ("repoId", "kind", "name", "intentId")
SELECT i."repoId", k."kind", lower(j."value"), i."id"
FROM "Intent" i
JOIN (SELECT 'output' AS "kind", '$.outputs' AS "path"
      UNION ALL SELECT 'capability', '$.capabilities'
      UNION ALL SELECT 'component', '$.components') k
JOIN json_each(i."record", k."path") j
WHERE i."record" IS NOT NULL AND json_valid(i."record") AND j."type" = 'text';
