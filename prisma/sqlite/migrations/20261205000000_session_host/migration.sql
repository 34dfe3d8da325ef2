-- What each session's hook reports of its client (x-cohent-host), the first guarded call seen, and its checkout.
ALTER TABLE "Session" ADD COLUMN "checkout" TEXT;
ALTER TABLE "Session" ADD COLUMN "guardSeenAt" DATETIME;
ALTER TABLE "Session" ADD COLUMN "host" TEXT;
ALTER TABLE "Session" ADD COLUMN "hostReportedAt" DATETIME;
ALTER TABLE "Session" ADD COLUMN "hostVersion" TEXT;
ALTER TABLE "Session" ADD COLUMN "wiring" TEXT;
