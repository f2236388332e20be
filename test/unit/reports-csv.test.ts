// CSV of reports: RFC 4180 quoting, formula cells neutralised (OWASP CSV injection), content negotiation.
import { describe, expect, it } from 'vitest';
import { neutralise, prefersCsv, toCsv } from '../../src/reports/csv.js';

describe('neutralise', () => {
  it.each(['=1+1', '+1', '-1', '@SUM(A1)', '\tx', '\rx'])('%j starts a formula: prefixed with a quote', (cell) => {
    expect(neutralise(cell)).toBe(`'${cell}`);
  });
  it.each(['ENT-1001', '50000.00', "'already", ' =not first', ''])('%j is left as it is', (cell) => {
    expect(neutralise(cell)).toBe(cell);
  });
});

describe('toCsv', () => {
  it('a header row, CRLF line ends, quotes where RFC 4180 needs them, null as an empty cell', () => {
    const csv = toCsv(['a', 'b', 'c'], [
      { a: 'plain', b: 'with, comma', c: null },
      { a: 'with "quote"', b: 'two\r\nlines', c: 3 },
      { a: '=cmd|"/C calc"!A0', b: '-2', c: 0 },
    ]);
    expect(csv).toBe('a,b,c\r\nplain,"with, comma",\r\n"with ""quote""","two\r\nlines",3\r\n"\'=cmd|""/C calc""!A0",\'-2,0\r\n');
  });

  it('no rows: the header alone', () => {
    expect(toCsv(['date', 'count'], [])).toBe('date,count\r\n');
  });
});

describe('prefersCsv', () => {
  it.each([
    [undefined, false],
    ['', false],
    ['text/csv', true],
    ['TEXT/CSV; charset=utf-8', true],
    ['text/csv, application/json', false],
    ['application/json;q=0.9, text/csv', true],
    ['text/csv;q=0', false],
    ['*/*', false],
    ['text/*, application/*;q=0.5', true],
  ])('%j → %s', (accept, csv) => {
    expect(prefersCsv(accept)).toBe(csv);
  });
});
