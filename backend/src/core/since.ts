import { CohentError } from "@cohent/protocol";

/** "24h", "30m", "7d" -> the instant that far before `now`. The CLI's --since and the console's ?since= both. */
export function parseSince(text: string, now: Date): Date {
  const m = /^(\d{1,6})([smhd])$/.exec(text);
  if (!m)
    throw new CohentError(
      "INVALID_INPUT",
      `since takes a duration such as 30m, 24h or 7d (got ${text.slice(0, 20)})`,
    );
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as "s" | "m" | "h" | "d"];
  return new Date(now.getTime() - Number(m[1]) * unit);
}
