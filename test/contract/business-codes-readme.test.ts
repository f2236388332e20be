// The README's business-code table is the catalogue of schemas/business-codes.ts, row for row.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BUSINESS_CODES } from '../../schemas/business-codes.js';

describe('README business codes', () => {
  it('lists every code with its title and envelope status, in the order of the catalogue', () => {
    const readme = readFileSync('README.md', 'utf8');
    const section = readme.slice(readme.indexOf('### Business codes'), readme.indexOf('The table is `schemas/business-codes.ts`.'));
    const rows = [...section.matchAll(/^\| `([A-Z0-9_]+)` \| ([^|]+) \| (\d{3}) \|/gm)].map((m) => [m[1], m[2]!.trim(), Number(m[3])]);
    expect(rows).toEqual(Object.entries(BUSINESS_CODES).map(([code, c]) => [code, c.title, c.envelopeStatus]));
  });
});
