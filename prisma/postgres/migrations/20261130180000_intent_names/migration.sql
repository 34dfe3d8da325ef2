-- CreateTable
CREATE TABLE "IntentName" (
    "repoId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "intentId" TEXT NOT NULL,

    CONSTRAINT "IntentName_pkey" PRIMARY KEY ("intentId","kind","name")
);

-- CreateIndex
CREATE INDEX "IntentName_repoId_kind_name_idx" ON "IntentName"("repoId", "kind", "name");

-- AddForeignKey
ALTER TABLE "IntentName" ADD CONSTRAINT "IntentName_intentId_fkey" FOREIGN KEY ("intentId") REFERENCES "Intent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Backfill: every published record's outputs, capabilities and components, folded.
INSERT INTO "IntentName" ("repoId", "kind", "name", "intentId")
SELECT DISTINCT i."repoId", k."kind", lower(j."value"), i."id"
FROM "Intent" i
CROSS JOIN (VALUES ('output', 'outputs'), ('capability', 'capabilities'), ('component', 'components')) AS k("kind", "field")
CROSS JOIN LATERAL jsonb_array_elements_text(
    CASE WHEN jsonb_typeof(i."record"::jsonb -> k."field") = 'array' THEN i."record"::jsonb -> k."field" ELSE '[]'::jsonb END
) AS j("value")
WHERE i."record" IS NOT NULL
ON CONFLICT DO NOTHING;
