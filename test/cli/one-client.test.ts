// One client per table: the CLI and the console reach the management listener only through the SDK's generated
// CardlineAdmin, and every admin action, the CLI's key actions included, is an entry of the operation tables
// (no second path that writes its own audit record or raises an event again). This fails when a CLI command or a
// console page builds a management URL or an answer type of its own, or when an action leaves the table.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MANAGEMENT_OPERATIONS } from '../../sdk/src/generated/management.js';
import { managementOperations, operations } from '../../src/operations/index.js';

const ROOT = join(import.meta.dirname, '..', '..');
const actionOf = (op: (typeof operations)[number]) => (op.audit ? op.audit.action : undefined) ?? op.id;

/** Every .ts file under a folder, as [path, its code without comments]. */
function sources(dir: string): [string, string][] {
  return readdirSync(join(ROOT, dir)).flatMap((name): [string, string][] => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return sources(path);
    if (!name.endsWith('.ts')) return [];
    // Code only: comments may name a route.
    const code = readFileSync(join(ROOT, path), 'utf8')
      .split('\n')
      .filter((l) => !/^\s*(\/\/|\*|\/\*\*)/.test(l))
      .join('\n');
    return [[path, code]];
  });
}

describe("a tenant's key actions are entries of the operation tables", () => {
  it('rotate, retire and client-key registration: a public entry each, and each served to operators by the same declaration', () => {
    const derived = { 'tenant-keys.rotate': 'keys.rotate', 'tenant-keys.retire': 'keys.retire', 'tenant-client-key.register': 'client-key.register' };
    for (const [id, source] of Object.entries(derived)) {
      const pub = operations.find((o) => o.id === source)!;
      const man = managementOperations.find((o) => o.id === id)!;
      expect(pub, source).toBeDefined();
      expect(man, id).toBeDefined();
      // The very functions of the Admin's entry: one declaration, whichever listener runs it.
      expect([man.execute, man.view, man.check, man.event, man.body, man.response, man.refusals]).toEqual([pub.execute, pub.view, pub.check, pub.event, pub.body, pub.response, pub.refusals]);
      expect(actionOf(man)).toBe(actionOf(pub));
      expect(man.url).toBe(pub.url.replace(/^\/v1\/admin/, '/v1/tenants/:tenantId'));
    }
  });

  it("user administration is declared once: each management user entry is the tenant Admin's own", () => {
    const pairs = { 'tenant-user.list': 'user.list', 'tenant-user.create': 'user.create', 'tenant-user.update': 'user.update', 'tenant-user.unlock': 'user.unlock', 'tenant-user.set-password': 'user.password-reset', 'tenant-user.remove': 'user.remove' };
    expect(managementOperations.filter((o) => o.url.startsWith('/v1/tenants/:tenantId/users')).map((o) => o.id).sort()).toEqual(Object.keys(pairs).sort());
    for (const [id, source] of Object.entries(pairs)) {
      const pub = operations.find((o) => o.id === source)!;
      const man = managementOperations.find((o) => o.id === id)!;
      expect([man.execute, man.view, man.check, man.event, man.body, man.response, man.encryptedFields, man.idempotent, man.refusals], id).toEqual([
        pub.execute, pub.view, pub.check, pub.event, pub.body, pub.response, pub.encryptedFields, pub.idempotent, pub.refusals,
      ]);
      // A change is recorded under the Admin's action; an operator's read is not recorded (decision 0292).
      if (man.method === 'GET') expect(man.audit, id).toBe(false);
      else expect(actionOf(man), id).toBe(actionOf(pub));
    }
  });

  it('no second path: the admin-actions module is gone, and no CLI module writes an audit record or raises an event', () => {
    expect(existsSync(join(ROOT, 'src/services/admin-actions.ts'))).toBe(false);
    for (const [file, code] of sources('src/cli')) {
      expect(code, file).not.toMatch(/\.audit\.record\(|domainEvent\(|AuditWriter/);
      expect(code, file).not.toMatch(/\.keys\.(rotate|retire)\(|clientKeys?\.register\(|ClientKeyStore/);
    }
  });
});

describe('the CLI and the console have no management client of their own', () => {
  const clients = [...sources('src/cli'), ...sources('console/src')];

  it('no hand-typed management path and no URL builder: the generated table is the one list of routes', () => {
    for (const [file, code] of clients) {
      expect(code, file).not.toMatch(/['`]\/v1\//);
      // A second URL builder: path parameters filled in, or a query string assembled, by hand.
      expect(code, file).not.toMatch(/\.replace\(\/:\(\\w\+\)\/g|new URLSearchParams|encodeURIComponent\([^)]*\)}\/(users|channels|keys)/);
    }
  });

  it('no hand-written answer types: the console types what it reads from the SDK, and calls CardlineAdmin', () => {
    for (const [file, code] of sources('console/src')) {
      // A page or module declaring the shape of an answer (an interface or object type with fields) instead of the SDK's.
      expect(code, file).not.toMatch(/^(export )?interface (Tenant|User|CoreState|ConnectorView|ShadowSummary|Channel|Delivery|Attempt|Figures|Reading|Page)\b/m);
      expect(code, file).not.toMatch(/\bapi<|fetch\(['`]\/v1/);
    }
    const api = readFileSync(join(ROOT, 'console/src/api.ts'), 'utf8');
    expect(api).toMatch(/new CardlineAdmin\(\{ baseUrl: location\.origin, session:/);
  });

  it('the console and the CLI reach every management operation they call through a generated method', () => {
    const used = new Set<string>();
    for (const [, code] of clients) for (const [, group, method] of code.matchAll(/\b(?:admin|api)\.(\w+)\.(\w+)\(/g)) used.add(`${group}.${method}`);
    const camel = (s: string) => s.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
    const generated = new Set(Object.keys(MANAGEMENT_OPERATIONS).map((id) => id.split('.').map(camel).join('.')));
    const unknown = [...used].filter((u) => !generated.has(u));
    expect(unknown).toEqual([]);
    // The console's pages and the CLI's commands between them use most of the table: a sign they use it.
    expect(used.size).toBeGreaterThan(25);
  });
});
