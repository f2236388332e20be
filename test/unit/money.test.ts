// Money is exact: decimal strings ⇄ integer minor units, no float anywhere.
import { describe, expect, it } from 'vitest';
import { fromMinor, toMinor } from '../../connectors/shared/money.js';
import { MONEY_PATTERN } from '../../schemas/common.js';

describe('money', () => {
  it.each([
    ['0.01', 1n],
    ['1', 100n],
    ['1.5', 150n],
    ['50000.00', 5_000_000n],
    ['999999999999999.99', 99_999_999_999_999_999n],
  ])('%s is %s minor units and back', (text, minor) => {
    expect(toMinor(text)).toBe(minor);
    expect(toMinor(fromMinor(minor))).toBe(minor);
  });

  it('keeps precision a float would lose', () => {
    expect(fromMinor(toMinor('0.1') + toMinor('0.2'))).toBe('0.30');
    expect(fromMinor(toMinor('999999999999999.99'))).toBe('999999999999999.99');
  });

  it.each(['1.234', '-1', '1e5', '', ' 1', '1,00', 'NaN'])('refuses %j', (text) => {
    expect(() => toMinor(text)).toThrow(RangeError);
  });

  it('the schema pattern accepts positive amounts only', () => {
    const re = new RegExp(MONEY_PATTERN, 'u');
    for (const ok of ['0.01', '1', '10.5', '1000000.00', '000001']) expect(re.test(ok), ok).toBe(true);
    for (const bad of ['0', '0.0', '0.00', '00', '-1', '1.234', '1e3', '.5', '5.', '1 000']) expect(re.test(bad), bad).toBe(false);
  });
});
