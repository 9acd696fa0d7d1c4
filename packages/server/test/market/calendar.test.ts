import { describe, expect, it } from 'vitest';
import {
  addTradingDays,
  instantOf,
  localTime,
  NSE,
  nextOpen,
  sessionAt,
  settlementDate,
} from '../../src/services/market/calendar.ts';

const NONE = new Set<string>();
/** An instant given in East Africa Time (UTC+3, no daylight saving). */
const eat = (local: string) => new Date(`${local}+03:00`);

describe('the NSE calendar', () => {
  it('reads instants in Nairobi time', () => {
    expect(localTime('Africa/Nairobi', new Date('2026-11-30T21:30:00Z'))).toEqual({
      date: '2026-12-01',
      weekday: 2,
      minutes: 30,
    });
    expect(instantOf('Africa/Nairobi', '2026-12-01', '09:31').toISOString()).toBe('2026-12-01T06:31:00.000Z');
  });

  it.each([
    ['2026-11-30T08:59', 'CLOSED'],
    ['2026-11-30T09:00', 'PRE_OPEN'],
    ['2026-11-30T09:30', 'PRE_OPEN'],
    ['2026-11-30T09:31', 'OPEN'],
    ['2026-11-30T10:00', 'OPEN'],
    ['2026-11-30T14:59', 'OPEN'],
    ['2026-11-30T15:00', 'CLOSED'],
    ['2026-11-30T15:05', 'CLOSED'],
    ['2026-11-28T10:00', 'CLOSED'],
    ['2026-11-29T10:00', 'CLOSED'],
  ] as const)('%s EAT is %s (Monday 30 November 2026; the 28th and 29th a weekend)', (local, state) => {
    expect(sessionAt(NSE, eat(local), NONE).state).toBe(state);
  });

  it('a holiday the operator set is closed all day, and skipped by the next open and settlement', () => {
    const holidays = new Set(['2026-12-01']);
    const session = sessionAt(NSE, eat('2026-12-01T10:00'), holidays);
    expect(session).toEqual({ state: 'CLOSED', date: '2026-12-01', tradingDay: false });
    expect(nextOpen(NSE, eat('2026-11-30T15:05'), holidays).toISOString()).toBe('2026-12-02T06:31:00.000Z');
    // Executed Monday 30 Nov: T+3 trading days skips the holiday (Tue) → Wed 2, Thu 3, Fri 4.
    expect(settlementDate(NSE, eat('2026-11-30T10:00'), holidays)).toBe('2026-12-04');
  });

  it('the next open: now while open, later today before it, the next trading day after it', () => {
    const open = eat('2026-11-30T10:00');
    expect(nextOpen(NSE, open, NONE)).toBe(open);
    expect(nextOpen(NSE, eat('2026-11-30T08:00'), NONE).toISOString()).toBe('2026-11-30T06:31:00.000Z');
    expect(nextOpen(NSE, eat('2026-11-30T09:10'), NONE).toISOString()).toBe('2026-11-30T06:31:00.000Z');
    // Friday after the close: Monday.
    expect(nextOpen(NSE, eat('2026-12-04T15:30'), NONE).toISOString()).toBe('2026-12-07T06:31:00.000Z');
  });

  it('settles T+3 trading days after the trade date, over weekends', () => {
    expect(addTradingDays(NSE, '2026-12-02', 3, NONE)).toBe('2026-12-07');
    expect(settlementDate(NSE, eat('2026-12-04T14:00'), NONE)).toBe('2026-12-09');
  });
});
