// Days in a tenant's time zone (configuration `timeZone`, default UTC): what a day of a report, a daily
// limit or a date filter is. Pure functions over Intl; no floats, no library.

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const MS_PER_DAY = 86_400_000;

/** The UTC time of a calendar day's midnight (as if the day were in UTC), or null for a day that does not exist. */
function utcMidnight(day: string): number | null {
  const m = DAY.exec(day);
  if (!m) return null;
  const t = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return new Date(t).toISOString().slice(0, 10) === day && Number(m[1]) >= 1 ? t : null;
}

/** Whether `day` is a real calendar day written YYYY-MM-DD. */
export const isDay = (day: string): boolean => utcMidnight(day) !== null;

/** How far the zone's wall clock is ahead of UTC at an instant, in milliseconds. */
function offsetAt(instant: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(instant));
  const n = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  return Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second')) - Math.floor(instant / 1000) * 1000;
}

/** The instant the day begins in the zone (its local midnight; the first instant of the day where midnight is skipped). */
export function startOfDay(day: string, timeZone: string): Date {
  const midnight = utcMidnight(day);
  if (midnight === null) throw new RangeError(`not a day: ${day}`);
  // Two passes settle the offset, also across a change of offset on that day.
  let t = midnight - offsetAt(midnight, timeZone);
  t = midnight - offsetAt(t, timeZone);
  return new Date(t);
}

/** The day after `day`. */
export const nextDay = (day: string): string => new Date(utcMidnight(day)! + MS_PER_DAY).toISOString().slice(0, 10);

/** Days from `from` to `to`, both counted: 2026-01-01..2026-01-01 is 1. */
export const daysInRange = (from: string, to: string): number => (utcMidnight(to)! - utcMidnight(from)!) / MS_PER_DAY + 1;

const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-](\d{2}):\d{2})$/i;

/** A query bound as an instant: a day is its start in the zone (an inclusive `to`: the next day's); else with offset. */
export function boundOf(value: string, timeZone: string, end: boolean): Date | null {
  if (DAY.test(value)) return isDay(value) ? startOfDay(end ? nextDay(value) : value, timeZone) : null;
  const m = INSTANT.exec(value);
  if (!m || (m[4] !== undefined && Number(m[4]) > 15)) return null;
  const t = Date.parse(value);
  return Number.isFinite(t) && Number(value.slice(0, 4)) >= 1 ? new Date(t) : null;
}
