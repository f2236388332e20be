// Reports as CSV (RFC 4180: a header row, CRLF, fields quoted when they must be), every text cell that a
// spreadsheet would read as a formula neutralised with a leading single quote (OWASP, CSV injection).
import { stringify } from 'csv-stringify/sync';

/** A cell a spreadsheet would evaluate: it starts with =, +, -, @, a tab or a carriage return. */
const FORMULA_START = /^[=+\-@\t\r]/;

export const neutralise = (cell: string): string => (FORMULA_START.test(cell) ? `'${cell}` : cell);

/** Rows as CSV under a header of `columns`, in that order; null is an empty cell. */
export function toCsv(columns: readonly string[], rows: readonly Record<string, unknown>[]): string {
  const records = rows.map((row) => columns.map((c) => {
    const value = row[c];
    if (value === null || value === undefined) return '';
    return typeof value === 'string' ? neutralise(value) : String(value);
  }));
  // csv-stringify leaves a lone CR or LF unquoted, which a spreadsheet takes as a new row: RFC 4180 quotes any.
  return stringify(records, { header: true, columns: [...columns], record_delimiter: 'windows', quoted_match: /[\r\n]/ });
}

/** Whether the request prefers text/csv to JSON (q-values and wildcards; JSON on a tie or without Accept). */
export function prefersCsv(accept: string | undefined): boolean {
  if (!accept) return false;
  const ranges = accept.split(',').map((part) => {
    const [range = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = q === undefined ? 1 : Number(q.slice(2));
    return { range: range.trim(), q: Number.isFinite(value) ? value : 0 };
  });
  const quality = (type: string) => {
    const [main] = type.split('/');
    const exact = ranges.find((r) => r.range === type);
    if (exact) return exact.q;
    const sub = ranges.find((r) => r.range === `${main}/*`);
    if (sub) return sub.q;
    return ranges.find((r) => r.range === '*/*')?.q ?? 0;
  };
  const csv = quality('text/csv');
  return csv > 0 && csv > quality('application/json');
}
