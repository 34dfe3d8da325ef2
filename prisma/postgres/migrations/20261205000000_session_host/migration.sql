-- What each session's hook reports of its client (x-cohent-host), the first guarded call seen, and its checkout.
ALTER TABLE "Session" ADD COLUMN     "checkout" TEXT,
ADD COLUMN     "guardSeenAt" TIMESTAMP(3),
ADD COLUMN     "host" TEXT,
ADD COLUMN     "hostReportedAt" TIMESTAMP(3),
ADD COLUMN     "hostVersion" TEXT,
ADD COLUMN     "wiring" TEXT;
