-- CreateTable
CREATE TABLE "ConsoleSession" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tokenHash" TEXT NOT NULL,
    "csrfToken" TEXT NOT NULL,
    "person" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "githubToken" TEXT,
    "createdAt" DATETIME NOT NULL,
    "expiresAt" DATETIME NOT NULL,
    "lastSeenAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "LoginLink" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tokenHash" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL,
    "expiresAt" DATETIME NOT NULL,
    "usedAt" DATETIME
);

-- CreateTable
CREATE TABLE "Pairing" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "repoName" TEXT NOT NULL,
    "machine" TEXT NOT NULL,
    "user" TEXT NOT NULL,
    "client" TEXT,
    "userCode" TEXT NOT NULL,
    "deviceCodeHash" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "interval" INTEGER NOT NULL,
    "approvedBy" TEXT,
    "person" TEXT,
    "tokenId" TEXT,
    "lastPolledAt" DATETIME,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL,
    "expiresAt" DATETIME NOT NULL,
    "decidedAt" DATETIME
);

-- CreateIndex
CREATE UNIQUE INDEX "ConsoleSession_tokenHash_key" ON "ConsoleSession"("tokenHash");

-- CreateIndex
CREATE UNIQUE INDEX "LoginLink_tokenHash_key" ON "LoginLink"("tokenHash");

-- CreateIndex
CREATE UNIQUE INDEX "Pairing_userCode_key" ON "Pairing"("userCode");

-- CreateIndex
CREATE UNIQUE INDEX "Pairing_deviceCodeHash_key" ON "Pairing"("deviceCodeHash");

-- CreateIndex
CREATE INDEX "Pairing_repoName_status_idx" ON "Pairing"("repoName", "status");

