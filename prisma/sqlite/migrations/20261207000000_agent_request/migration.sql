-- A write's request id (idempotency-key) and its first answer: a retry is answered with it, never run again.
-- CreateTable
CREATE TABLE "AgentRequest" (
    "tokenId" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "bodyHash" TEXT NOT NULL,
    "outcome" TEXT,
    "createdAt" DATETIME NOT NULL,

    PRIMARY KEY ("tokenId", "key")
);

-- CreateIndex
CREATE INDEX "AgentRequest_createdAt_idx" ON "AgentRequest"("createdAt");

