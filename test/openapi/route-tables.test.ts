// The tables of routes in docs/api.md (public listener) and docs/operating.md (management listener), generated
// from the operation tables (decision 0193): each names its own listener's routes and none of the other's.
// That the committed tables are the generated ones is test/contract/derived-files.test.ts's.
import { describe, expect, it } from 'vitest';
import { managementOperations, operations } from '../../src/operations/index.js';
import { routeTable } from '../../src/openapi/route-table.js';

describe('the documentation tables of routes', () => {
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
