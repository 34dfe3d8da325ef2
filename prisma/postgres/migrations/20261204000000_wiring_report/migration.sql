-- CreateTable
CREATE TABLE "WiringReport" (
    "id" TEXT NOT NULL,
    "repoId" TEXT NOT NULL,
    "tokenId" TEXT NOT NULL,
    "checkout" TEXT NOT NULL,
    "sessionId" TEXT NOT NULL,
    "changes" TEXT NOT NULL,
    "reportedAt" TIMESTAMP(3) NOT NULL,
    "clearedAt" TIMESTAMP(3),

    CONSTRAINT "WiringReport_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "WiringReport_repoId_clearedAt_idx" ON "WiringReport"("repoId", "clearedAt");

-- CreateIndex
CREATE UNIQUE INDEX "WiringReport_tokenId_checkout_key" ON "WiringReport"("tokenId", "checkout");

-- AddForeignKey
ALTER TABLE "WiringReport" ADD CONSTRAINT "WiringReport_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository"("id") ON DELETE CASCADE ON UPDATE CASCADE;

