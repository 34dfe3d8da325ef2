-- CreateTable
CREATE TABLE "ClaimWait" (
    "id" TEXT NOT NULL,
    "repoId" TEXT NOT NULL,
    "intentId" TEXT NOT NULL,
    "paths" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ClaimWait_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Notice" (
    "id" TEXT NOT NULL,
    "repoId" TEXT NOT NULL,
    "intentId" TEXT NOT NULL,
    "sessionId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "paths" TEXT NOT NULL,
    "peer" TEXT,
    "note" TEXT,
    "reason" TEXT,
    "queueLength" INTEGER,
    "waitedMs" INTEGER,
    "text" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "toldAt" TIMESTAMP(3),
    "packetId" TEXT,

    CONSTRAINT "Notice_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ReleaseAsk" (
    "id" TEXT NOT NULL,
    "repoId" TEXT NOT NULL,
    "fromIntentId" TEXT NOT NULL,
    "toIntentId" TEXT NOT NULL,
    "paths" TEXT NOT NULL,
    "note" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "honouredAt" TIMESTAMP(3),
    "closedAt" TIMESTAMP(3),

    CONSTRAINT "ReleaseAsk_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "ClaimWait_intentId_key" ON "ClaimWait"("intentId");

-- CreateIndex
CREATE INDEX "ClaimWait_repoId_createdAt_id_idx" ON "ClaimWait"("repoId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "Notice_sessionId_toldAt_idx" ON "Notice"("sessionId", "toldAt");

-- CreateIndex
CREATE INDEX "Notice_intentId_toldAt_idx" ON "Notice"("intentId", "toldAt");

-- CreateIndex
CREATE INDEX "Notice_repoId_kind_createdAt_idx" ON "Notice"("repoId", "kind", "createdAt");

-- CreateIndex
CREATE INDEX "ReleaseAsk_toIntentId_closedAt_idx" ON "ReleaseAsk"("toIntentId", "closedAt");

-- CreateIndex
CREATE INDEX "ReleaseAsk_fromIntentId_closedAt_idx" ON "ReleaseAsk"("fromIntentId", "closedAt");

-- CreateIndex
CREATE INDEX "ReleaseAsk_repoId_closedAt_idx" ON "ReleaseAsk"("repoId", "closedAt");

-- CreateIndex
CREATE INDEX "ReleaseAsk_repoId_createdAt_idx" ON "ReleaseAsk"("repoId", "createdAt");

-- AddForeignKey
ALTER TABLE "ClaimWait" ADD CONSTRAINT "ClaimWait_intentId_fkey" FOREIGN KEY ("intentId") REFERENCES "Intent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ClaimWait" ADD CONSTRAINT "ClaimWait_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository"("id") ON DELETE CASCADE ON UPDATE CASCADE;
