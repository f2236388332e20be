// One implementation per admin action (issue 22, decision 0198): every admin action is an entry of the
// operation tables, except the few the CLI does on a tenant's keys that no management route offers
// (src/services/admin-actions.ts). This fails when an admin action is declared outside the operation table.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { managementOperations, operations } from '../../src/operations/index.js';
import { ADMIN_ACTIONS } from '../../src/services/admin-actions.js';

const ROOT = join(import.meta.dirname, '..', '..');
const actionOf = (op: (typeof operations)[number]) => (op.audit ? op.audit.action : undefined) ?? op.id;

describe('admin actions live in the operation table', () => {
  it('the CLI-side actions are the key actions only, none of them a management route', () => {
    expect(Object.keys(ADMIN_ACTIONS).sort()).toEqual(['client-key.register', 'keys.retire', 'keys.rotate']);
    const management = new Set(managementOperations.map(actionOf));
    for (const action of Object.keys(ADMIN_ACTIONS)) expect(management.has(action), action).toBe(false);
  });

  it('each of them that an API offers is recorded as that public operation records it', () => {
    for (const [action, spec] of Object.entries(ADMIN_ACTIONS)) {
      if (spec.method === 'CLI') continue; // keys.retire: no API offers it
      const op = operations.find((o) => o.method === spec.method && o.url === spec.route);
      expect(op, `${action}: no operation ${spec.method} ${spec.route}`).toBeDefined();
      expect([actionOf(op!), op!.status ?? 200], action).toEqual([action, spec.status]);
    }
  });

  it('no CLI command or service outside the table writes a management action on its own', () => {
    const exported = readFileSync(join(ROOT, 'src/services/admin-actions.ts'), 'utf8').match(/export (?:async )?function (\w+)/g) ?? [];
    expect(exported.map((e) => e.split(' ').pop()).sort()).toEqual(['adminRegisterClientKey', 'adminRetireKey', 'adminRotateKeys', 'cliActor']);
    for (const file of readdirSync(join(ROOT, 'src/cli'))) {
      // Code only: comments may name a route.
      const text = readFileSync(join(ROOT, 'src/cli', file), 'utf8').split('\n').filter((l) => !/^\s*(\/\/|\*|\/\*\*)/.test(l)).join('\n');
      // A hand-typed management path (the commands call api.operation / allOf by id).
      expect(text, file).not.toMatch(/['`]\/v1\/(tenants|operator-keys)/);
      expect(text, file).not.toMatch(/\.audit\.record\(/);
    }
  });
});
