/**
 * `npm run ops -- <stack> logs --since <time>`: the values the host's journalctl takes, checked on the
 * workstation before ssh (scripts/ops-everyday.ts, logOptions). No imports: a rule, as settings/git-ref.ts.
 */
/** systemd's time units (parse_time's table) that `--since <n> <unit> ago` takes, in seconds. */
const UNIT_SECONDS: Readonly<Record<string, number>> = {
  ...Object.fromEntries(["s", "sec", "second", "seconds"].map((u) => [u, 1])),
  ...Object.fromEntries(["m", "min", "minute", "minutes"].map((u) => [u, 60])),
  ...Object.fromEntries(["h", "hr", "hour", "hours"].map((u) => [u, 3600])),
  ...Object.fromEntries(["d", "day", "days"].map((u) => [u, 86_400])),
  ...Object.fromEntries(["w", "week", "weeks"].map((u) => [u, 604_800])),
  // systemd's month and year: 30.44 and 365.25 days.
  ...Object.fromEntries(["M", "month", "months"].map((u) => [u, 2_629_800])),
  ...Object.fromEntries(["y", "year", "years"].map((u) => [u, 31_557_600])),
};
const AGO = /^(\d{1,9}) ?([A-Za-z]+) ago$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})(?: (\d{2}):(\d{2})(?::(\d{2}))?)?$/;
const TIME = /^(\d{2}):(\d{2})(?::(\d{2}))?$/;

export const SINCE_EXPECTED =
  "a date (2026-05-01, 2026-05-01 14:00 or 14:00:30, a space between them; from 1970 to 9999-12-30), a time of day " +
  "(14:00, 00:00 to 23:59), a time ago (30 min ago, 2h ago, 1 day ago) or now, today, yesterday, tomorrow";

/**
 * Whether the host's journalctl (systemd 252, Amazon Linux 2023) takes `value` for `--since`, in the forms
 * SINCE_EXPECTED names: its parse_timestamp reads dates with strptime (a month 1-12, a day 1-31 in any
 * month, which mktime then carries over; hours 0-23, minutes 0-59, seconds 0-61) from 1970 to 9999-12-30, and
 * refuses a time before 1970. __tests__/scripts/ops.test.ts holds this against the real journalctl.
 */
export function isSince(value: string, now = Date.now()): boolean {
  if (["now", "today", "yesterday", "tomorrow"].includes(value)) return true;
  const ago = AGO.exec(value);
  if (ago) return ago[2] in UNIT_SECONDS && Number(ago[1]) * UNIT_SECONDS[ago[2]] <= now / 1000;
  const clock = (hour?: string, minute?: string, second?: string) =>
    hour === undefined ||
    (Number(hour) <= 23 && Number(minute) <= 59 && (second === undefined || Number(second) <= 61));
  const time = TIME.exec(value);
  if (time) return clock(time[1], time[2], time[3]);
  const date = DATE.exec(value);
  if (!date) return false;
  const [year, month, day] = [Number(date[1]), Number(date[2]), Number(date[3])];
  return (
    year >= 1970 &&
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= 31 &&
    clock(date[4], date[5], date[6]) &&
    (year < 9999 || month < 12 || day <= 30)
  );
}
