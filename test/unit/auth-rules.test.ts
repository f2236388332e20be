// The rule language's engine (src/domain/auth-rules.ts): the grammar's refusals, each attribute's predicate, time
// ranges across midnight in a tenant's zone, and the buckets a velocity window reads.
import { describe, expect, it } from 'vitest';
import type { RuleCondition } from '../../schemas/auth-rules.js';
import { BUCKETS_PER_WINDOW, bucketsAt, compileRule, counterOf, definitionErrors, localMinutes, velocityVerdict, type RuleFacts } from '../../src/domain/auth-rules.js';

const FACTS: RuleFacts = { mcc: '5814', merchantCountry: 'PT', merchantId: 'M-1', channel: 'POS', amountMinor: 4250n, currency: 'EUR', localMinutes: 23 * 60 + 30 };
const declines = (c: RuleCondition, facts: Partial<RuleFacts> = {}) => compileRule({ conditions: [c] }).declines!({ ...FACTS, ...facts });

describe('conditions', () => {
  it.each([
    [{ attribute: 'mcc', operation: 'is-one-of', values: ['5814', '5812'] }, true],
    [{ attribute: 'mcc', operation: 'is-not-one-of', values: ['5814'] }, false],
    [{ attribute: 'mcc', operation: 'above', value: '5813' }, true],
    [{ attribute: 'mcc', operation: 'below', value: '5814' }, false],
    [{ attribute: 'merchantCountry', operation: 'is-not-one-of', values: ['ES'] }, true],
    [{ attribute: 'channel', operation: 'is-one-of', values: ['ECOM'] }, false],
    [{ attribute: 'currency', operation: 'is-one-of', values: ['EUR'] }, true],
    [{ attribute: 'amount', operation: 'above', value: '42.50' }, false],
    [{ attribute: 'amount', operation: 'above', value: '42.49' }, true],
    [{ attribute: 'amount', operation: 'below', value: '42.51' }, true],
    [{ attribute: 'localTime', operation: 'is-one-of', values: ['22:00-06:00'] }, true],
    [{ attribute: 'localTime', operation: 'is-not-one-of', values: ['22:00-06:00'] }, false],
    [{ attribute: 'localTime', operation: 'is-one-of', values: ['08:00-23:30'] }, false],
    [{ attribute: 'localTime', operation: 'above', value: '23:29' }, true],
  ] as [RuleCondition, boolean][])('%j holds: %s', (c, holds) => expect(declines(c)).toBe(holds));

  it('a merchant without an id is in no list', () => {
    expect(declines({ attribute: 'merchantId', operation: 'is-one-of', values: ['M-1'] }, { merchantId: null })).toBe(false);
    expect(declines({ attribute: 'merchantId', operation: 'is-not-one-of', values: ['M-1'] }, { merchantId: null })).toBe(true);
  });

  it('every condition must hold for the rule to decline', () => {
    const rule = compileRule({ conditions: [{ attribute: 'mcc', operation: 'is-one-of', values: ['5814'] }, { attribute: 'channel', operation: 'is-one-of', values: ['ECOM'] }] });
    expect(rule.declines!(FACTS)).toBe(false);
    expect(rule.declines!({ ...FACTS, channel: 'ECOM' })).toBe(true);
  });

  it('the grammar names each refusal by its field', () => {
    expect(definitionErrors({ conditions: [{ attribute: 'currency', operation: 'below', value: 'EUR' }] }, 'r')).toEqual([{ field: 'conditions.0.operation', message: 'Invalid', objectName: 'r' }]);
    expect(definitionErrors({ conditions: [{ attribute: 'localTime', operation: 'is-one-of', values: ['06:00-22:00', '6-22'] }] }, 'r')).toEqual([
      { field: 'conditions.0.values.1', message: 'Pattern', objectName: 'r' },
    ]);
    expect(definitionErrors({ velocity: { scope: 'card', window: '1h', limitCount: 1 } }, 'r', 'conditions')).toEqual([{ field: 'velocity', message: 'Invalid', objectName: 'r' }]);
  });
});

describe('velocity', () => {
  it('a window is read in its bucket and the 60 before it: never shorter than the window', () => {
    const at = new Date('2026-11-28T12:00:30Z');
    const { bucket, oldest } = bucketsAt(at, 60);
    expect(bucket - oldest).toBe(BUCKETS_PER_WINDOW);
    // The oldest bucket read starts at or before one window ago.
    expect(oldest * 60 * 1000).toBeLessThanOrEqual(at.getTime() - 3_600_000);
  });

  it('declines what would pass the amount or the count', () => {
    const v = compileRule({ velocity: { scope: 'card', window: '24h', limitAmount: '100.00', limitCount: 3 } }).velocity!;
    expect(velocityVerdict(v, { amountMinor: 6000n, count: 1 }, 4000n)).toBeNull();
    expect(velocityVerdict(v, { amountMinor: 6000n, count: 1 }, 4001n)).toBe('VELOCITY_AMOUNT_EXCEEDED');
    expect(velocityVerdict(v, { amountMinor: 0n, count: 3 }, 1n)).toBe('VELOCITY_COUNT_EXCEEDED');
  });

  it('versions counting the same thing share a counter; another filter or window starts another', () => {
    const base = { scope: 'card' as const, window: '24h' as const, limitCount: 3 };
    expect(counterOf({ ...base, limitCount: 5 })).toBe(counterOf(base));
    expect(counterOf({ ...base, window: '7d' })).not.toBe(counterOf(base));
    expect(counterOf({ ...base, filters: [{ attribute: 'channel', operation: 'is-one-of', values: ['ATM'] }] })).not.toBe(counterOf(base));
  });
});

it("reads the local time on the tenant's wall clock", () => {
  const at = new Date('2026-07-01T22:15:00Z');
  expect(localMinutes(at, 'UTC')).toBe(22 * 60 + 15);
  expect(localMinutes(at, 'Europe/Lisbon')).toBe(23 * 60 + 15);
  expect(localMinutes(at, 'Asia/Kolkata')).toBe(3 * 60 + 45);
});
