/**
 * When a rate-limited agent CLI says its limit resets. Claude Code prints the time of day
 * ("resets 3pm (UTC)", "resets 3:30pm (Europe/Berlin)", "resets Dec 3, 3pm (UTC)") or a
 * duration ("resets in 2h 5m"); Codex prints "Try again at 3:05 PM." in the machine's time
 * zone. Anything else gives undefined: the seat is then not parked but reported unavailable.
 */

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const UNIT_MS: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000, ms: 1 };

const RELATIVE = /(?:resets|try again) in\s+((?:\d+(?:\.\d+)?\s*(?:ms|days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b[\s,]*(?:and\s+)?)+)/i;
const ABSOLUTE =
  /(?:resets|try again at)\s+(?:(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(?:(\d{4}),?\s+)?)?(\d{1,2})(?::(\d{2}))?\s*([ap])\.?m\.?(?:\s*\(([^)]+)\))?/i;

/** The reset time a CLI's message names, as an instant after `now`; undefined when it names none. */
export function parseResetTime(text: string, now: Date): Date | undefined {
  const relative = RELATIVE.exec(text);
  if (relative?.[1]) {
    let total = 0;
    for (const part of relative[1].matchAll(/(\d+(?:\.\d+)?)\s*([a-z]+)/gi)) total += Number(part[1]) * unitMs(part[2] ?? "");
    return total > 0 ? new Date(now.getTime() + Math.round(total)) : undefined;
  }
  const absolute = ABSOLUTE.exec(text);
  if (!absolute) return undefined;
  const [, month, day, year, hourText, minuteText, meridiem, zone] = absolute;
  let hour = Number(hourText) % 12;
  if ((meridiem ?? "").toLowerCase() === "p") hour += 12;
  const minute = minuteText === undefined ? 0 : Number(minuteText);
  if (hour > 23 || minute > 59) return undefined;
  const parts = wallClock(now, zone);
  if (!parts) return undefined;
  const wall = {
    year: year !== undefined ? Number(year) : parts.year,
    month: month !== undefined ? MONTHS.indexOf(month.toLowerCase()) : parts.month,
    day: day !== undefined ? Number(day) : parts.day,
    hour,
    minute,
  };
  let at = instantOf(wall, zone);
  if (at === undefined) return undefined;
  // A bare time of day that has passed today means tomorrow; a date that passed means next year.
  if (at.getTime() <= now.getTime()) {
    if (month === undefined) at = instantOf({ ...wall, day: wall.day + 1 }, zone);
    else if (year === undefined) at = instantOf({ ...wall, year: wall.year + 1 }, zone);
  }
  return at;
}

function unitMs(unit: string): number {
  const lower = unit.toLowerCase();
  if (lower === "ms") return 1;
  const key = lower.startsWith("d") ? "d" : lower.startsWith("h") ? "h" : lower.startsWith("m") ? "m" : "s";
  return UNIT_MS[key] ?? 0;
}

interface Wall {
  year: number;
  /** 0-based, as Date takes it. */
  month: number;
  day: number;
  hour: number;
  minute: number;
}

/** The wall-clock date of `at` in `zone` (the machine's own zone when none is named). */
function wallClock(at: Date, zone: string | undefined): Wall | undefined {
  if (zone === undefined) return { year: at.getFullYear(), month: at.getMonth(), day: at.getDate(), hour: at.getHours(), minute: at.getMinutes() };
  const parts = zoneParts(at, zone);
  return parts ? { year: parts.year, month: parts.month - 1, day: parts.day, hour: parts.hour, minute: parts.minute } : undefined;
}

/** The instant a wall-clock time in `zone` stands for (the machine's zone when none is named). */
function instantOf(wall: Wall, zone: string | undefined): Date | undefined {
  if (zone === undefined) return new Date(wall.year, wall.month, wall.day, wall.hour, wall.minute);
  const guess = Date.UTC(wall.year, wall.month, wall.day, wall.hour, wall.minute);
  const first = offsetMs(new Date(guess), zone);
  if (first === undefined) return undefined;
  const second = offsetMs(new Date(guess - first), zone) ?? first;
  return new Date(guess - second);
}

/** How far `zone` is ahead of UTC at `at`. */
function offsetMs(at: Date, zone: string): number | undefined {
  const parts = zoneParts(at, zone);
  if (!parts) return undefined;
  const asUtc = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
  return asUtc - Math.floor(at.getTime() / 1000) * 1000;
}

function zoneParts(at: Date, zone: string): { year: number; month: number; day: number; hour: number; minute: number; second: number } | undefined {
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
  } catch {
    return undefined;
  }
  const value = (type: string): number => Number(format.formatToParts(at).find((part) => part.type === type)?.value ?? NaN);
  const parts = { year: value("year"), month: value("month"), day: value("day"), hour: value("hour"), minute: value("minute"), second: value("second") };
  return Object.values(parts).some((part) => Number.isNaN(part)) ? undefined : parts;
}
