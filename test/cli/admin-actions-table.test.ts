// The CLI's audited admin actions (src/services/admin-actions.ts) record what the API's operations record: the
// same action name, method, route and success status as the management (or tenant Admin) operation of the
// same route, and every write of the management table has its action, so that a store-mode change and the
// same change through the API read alike in the trail (decision 0195).
import { describe, expect, it } from 'vitest';
import { managementOperations, operations } from '../../src/operations/index.js';
import { ADMIN_ACTIONS } from '../../src/services/admin-actions.js';

const all = [...operations, ...managementOperations];
const actionOf = (op: (typeof all)[number]) => (op.audit ? op.audit.action : undefined) ?? op.id;

describe('admin actions and the operation tables', () => {
  it('each action is recorded as the operation of its route records it', () => {
    for (const [action, spec] of Object.entries(ADMIN_ACTIONS)) {
      if (spec.method === 'CLI') continue; // keys.retire: no API offers it
      const op = all.find((o) => o.method === spec.method && o.url === spec.route);
      expect(op, `${action}: no operation ${spec.method} ${spec.route}`).toBeDefined();
      expect([actionOf(op!), op!.status ?? 200], action).toEqual([action, spec.status]);
    }
  });

  it('every write of the management table has its admin action', () => {
    const writes = managementOperations.filter((op) => op.method !== 'GET').map(actionOf);
    expect(writes.length).toBeGreaterThan(0);
    for (const action of writes) expect(Object.keys(ADMIN_ACTIONS), action).toContain(action);
  });
});
