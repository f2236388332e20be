// The API guide's business-code table (docs/api.md, "Business codes") is the catalogue of schemas/business-codes.ts, row for row.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BUSINESS_CODES } from '../../schemas/business-codes.js';

describe('docs/api.md business codes', () => {
  it('lists every code with its title and envelope status, in the order of the catalogue', () => {
    const doc = readFileSync('docs/api.md', 'utf8');
    const start = doc.indexOf('\n### Business codes\n');
    expect(start).toBeGreaterThan(-1);
    const end = doc.indexOf('\n#', start + 1);
    const section = doc.slice(start, end === -1 ? undefined : end);
    const rows = [...section.matchAll(/^\| `([A-Z0-9_]+)` \| ([^|]+) \| (\d{3}) \|/gm)].map((m) => [m[1], m[2]!.trim(), Number(m[3])]);
    expect(rows).toEqual(Object.entries(BUSINESS_CODES).map(([code, c]) => [code, c.title, c.envelopeStatus]));
  });
});
