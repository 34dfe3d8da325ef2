-- CreateTable
CREATE TABLE "WiringReport" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "repoId" TEXT NOT NULL,
    "tokenId" TEXT NOT NULL,
    "checkout" TEXT NOT NULL,
    "sessionId" TEXT NOT NULL,
    "changes" TEXT NOT NULL,
    "reportedAt" DATETIME NOT NULL,
    "clearedAt" DATETIME,
    CONSTRAINT "WiringReport_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "WiringReport_repoId_clearedAt_idx" ON "WiringReport"("repoId", "clearedAt");

-- CreateIndex
CREATE UNIQUE INDEX "WiringReport_tokenId_checkout_key" ON "WiringReport"("tokenId", "checkout");

