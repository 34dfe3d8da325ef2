-- Each intent's place in its repository's decisions, the resolver's "earlier" (taken under the
-- repository lock each time the intent declares a record). Intents that already have a record
-- take theirs in the order they were published.
ALTER TABLE "Intent" ADD COLUMN "place" INTEGER;
UPDATE "Intent" SET "place" = (
  SELECT n."place" FROM (
    SELECT "id", ROW_NUMBER() OVER (PARTITION BY "repoId" ORDER BY "createdAt", "id") AS "place"
    FROM "Intent" WHERE "record" IS NOT NULL
  ) n WHERE n."id" = "Intent"."id"
) WHERE "record" IS NOT NULL;
CREATE UNIQUE INDEX "Intent_repoId_place_key" ON "Intent"("repoId", "place");
