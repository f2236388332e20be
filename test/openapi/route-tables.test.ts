// The tables of routes in docs/api.md (public listener) and docs/operating.md (management listener) are the
// ones generated from the operation tables: regenerate them with `npm run openapi` (decision 0193).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { managementOperations, operations } from '../../src/operations/index.js';
import { ROUTE_TABLE_FILES, routeTable, withRouteTable } from '../../src/openapi/route-table.js';

describe('the documentation tables of routes', () => {
  it.each(['public', 'management'] as const)('the %s table is the generated one', (listener) => {
    const text = readFileSync(ROUTE_TABLE_FILES[listener], 'utf8');
    expect(withRouteTable(text, listener)).toBe(text);
  });

  it('each names every entry of its own table and none of the other', () => {
    const pathOf = (url: string) => url.replace(/:(\w+)/g, '{$1}');
    const publicTable = routeTable('public');
    const managementTable = routeTable('management');
    for (const op of operations) {
      expect(publicTable).toContain(`| \`${op.method} ${pathOf(op.url)}\` |`);
      expect(managementTable).not.toContain(`| \`${op.method} ${pathOf(op.url)}\` |`);
    }
    for (const op of managementOperations) {
      expect(managementTable).toContain(`| \`${op.method} ${pathOf(op.url)}\` | ${op.summary} | \`${op.id}\` | problem | operator key |`);
      expect(publicTable).not.toContain(`| \`${op.method} ${pathOf(op.url)}\` |`);
    }
  });
});
