// Days of a tenant's time zone: where a day starts, across offsets and daylight-saving changes.
import { describe, expect, it } from 'vitest';
import { boundOf, daysInRange, isDay, nextDay, startOfDay } from '../../src/domain/days.js';

describe('startOfDay', () => {
  it.each([
    ['2026-03-10', 'UTC', '2026-03-10T00:00:00.000Z'],
    ['2026-03-10', 'Asia/Kolkata', '2026-03-09T18:30:00.000Z'],
    ['2026-03-10', 'Pacific/Kiritimati', '2026-03-09T10:00:00.000Z'],
    ['2026-03-10', 'America/Los_Angeles', '2026-03-10T07:00:00.000Z'],
    // Daylight saving starts at 02:00 on 2026-03-08 in New York: the day still starts at 00:00 EST.
    ['2026-03-08', 'America/New_York', '2026-03-08T05:00:00.000Z'],
    ['2026-03-09', 'America/New_York', '2026-03-09T04:00:00.000Z'],
    // And ends at 02:00 on 2026-11-01: the day starts at 00:00 EDT.
    ['2026-11-01', 'America/New_York', '2026-11-01T04:00:00.000Z'],
    ['2026-03-29', 'Europe/Lisbon', '2026-03-29T00:00:00.000Z'],
    ['2026-03-30', 'Europe/Lisbon', '2026-03-29T23:00:00.000Z'],
  ])('%s in %s starts at %s', (day, zone, instant) => {
    expect(startOfDay(day, zone).toISOString()).toBe(instant);
  });
});

describe('days', () => {
  it('isDay, nextDay, daysInRange', () => {
    expect([isDay('2024-02-29'), isDay('2026-02-29'), isDay('2026-13-01'), isDay('26-01-01')]).toEqual([true, false, false, false]);
    expect([nextDay('2024-02-28'), nextDay('2026-12-31')]).toEqual(['2024-02-29', '2027-01-01']);
    expect([daysInRange('2026-01-01', '2026-01-01'), daysInRange('2024-01-01', '2024-12-31'), daysInRange('2026-01-02', '2026-01-01')]).toEqual([1, 366, 0]);
  });

  it('boundOf: a day is its start (an inclusive end: the next day\'s start); a date-time needs its offset', () => {
    expect(boundOf('2026-03-10', 'Asia/Kolkata', false)?.toISOString()).toBe('2026-03-09T18:30:00.000Z');
    expect(boundOf('2026-03-10', 'Asia/Kolkata', true)?.toISOString()).toBe('2026-03-10T18:30:00.000Z');
    expect(boundOf('2026-03-10T10:00:00+05:30', 'UTC', false)?.toISOString()).toBe('2026-03-10T04:30:00.000Z');
    expect([boundOf('2026-03-10T10:00:00', 'UTC', false), boundOf('2026-02-30', 'UTC', false), boundOf('2026-03-10T10:00:00+16:00', 'UTC', false)]).toEqual([null, null, null]);
  });
});
