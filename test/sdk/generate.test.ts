// The SDK's generated code is the operation tables': every operation has its method, public ones on `Cardline`,
// management ones on `CardlineAdmin`, with typed requests and results. Whether sdk/src/generated/ is what
// `npm run generate` writes now is test/contract/derived-files.test.ts's.
import { readFileSync } from 'node:fs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  Cardline,
  CardlineAdmin,
  MANAGEMENT_OPERATIONS,
  OPERATIONS,
  type CallOptions,
  type CardOperationResponse,
  type MessageResponse,
  type Paged,
  type Pending,
  type TenantCreateBody,
  type TenantCreatedResponse,
  type TenantPageResponse,
  type TenantListQuery,
  type TenantView,
  type TransactionPageResponse,
  type TransactionQuery,
  type TransactionListItem,
  type UpgradeLimitBody,
  type UserCreateBody,
  type UserResponse,
} from '../../sdk/src/index.js';
import type { Operation } from '../../src/operations/define.js';
import { managementOperations, operations } from '../../src/operations/index.js';

const camel = (s: string) => s.replace(/-([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
/** Each operation of `table` is a method of `client`, named after its id, with the table's method, path and dialect. */
function expectMethods(client: object, table: readonly Operation[], meta: Record<string, { method: string; path: string; dialect: string }>) {
  const c = client as Record<string, Record<string, unknown>>;
  for (const op of table) {
    const [ns, method] = op.id.includes('.') ? op.id.split('.').map(camel) : [undefined, camel(op.id)];
    const fn = ns ? c[ns]?.[method!] : c[method!];
    expect(typeof fn, op.id).toBe('function');
    const m = meta[op.id]!;
    expect([m.method, m.path, m.dialect], op.id).toEqual([op.method, op.url, op.dialect]);
  }
  expect(Object.keys(meta)).toHaveLength(table.length);
}

describe('the SDK generated from the operation table', () => {
  it('has one method per operation, named after its id, path parameters first', () => {
    expectMethods(new Cardline({ baseUrl: 'http://127.0.0.1:1', tenant: 'demo' }), operations, OPERATIONS);
  });

  it('has one CardlineAdmin method per management operation; the tenant whose key a password is encrypted to is named', () => {
    expectMethods(new CardlineAdmin({ baseUrl: 'http://127.0.0.1:1', operatorKey: 'clop_x' }), managementOperations, MANAGEMENT_OPERATIONS);
    for (const op of managementOperations) {
      expect((MANAGEMENT_OPERATIONS[op.id as keyof typeof MANAGEMENT_OPERATIONS] as { tenantParam?: string }).tenantParam, op.id).toBe(op.tenantParam);
    }
    expect(MANAGEMENT_OPERATIONS['tenant-user.create']).toMatchObject({ kind: 'write', encryptedFields: ['password'], tenantParam: 'tenantId' });
    expect(MANAGEMENT_OPERATIONS['tenant-user.set-password']).toMatchObject({ kind: 'write', encryptedFields: ['password'], tenantParam: 'tenantId' });
    expect(MANAGEMENT_OPERATIONS['tenant.list']).toMatchObject({ kind: 'read', paged: true });
  });

  it('types requests and results', () => {
    const cl = new Cardline({ baseUrl: 'http://127.0.0.1:1', tenant: 'demo' });
    expectTypeOf(cl.creditLimit.upgrade).parameter(0).toEqualTypeOf<UpgradeLimitBody>();
    expectTypeOf(cl.card.lock).parameter(0).toEqualTypeOf<string>();
    expectTypeOf(cl.card.lock).returns.resolves.toEqualTypeOf<CardOperationResponse | Pending>();
    expectTypeOf(cl.transaction.list).returns.toEqualTypeOf<Paged<TransactionListItem, TransactionPageResponse>>();
    expectTypeOf<ReturnType<typeof cl.keys.public>>().resolves.toHaveProperty('keys');

    const admin = new CardlineAdmin({ baseUrl: 'http://127.0.0.1:1', operatorKey: 'clop_x' });
    expectTypeOf(admin.tenant.create).parameter(0).toEqualTypeOf<TenantCreateBody>();
    expectTypeOf(admin.tenant.create).returns.resolves.toEqualTypeOf<TenantCreatedResponse>();
    expectTypeOf(admin.tenant.list).returns.toEqualTypeOf<Paged<TenantView, TenantPageResponse>>();
    expectTypeOf(admin.tenantUser.create).parameters.toEqualTypeOf<[string, UserCreateBody, CallOptions?]>();
    expectTypeOf(admin.tenantUser.create).returns.resolves.toEqualTypeOf<UserResponse>();
    expectTypeOf(admin.operatorKey.revoke).returns.resolves.toEqualTypeOf<MessageResponse>();
  });
});

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

/** The generated query type's name of each operation, from its method's signature. */
function queryTypes(file: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of read(file).matchAll(/\(([^()]*)\)[^\n]*=>\n\s+t\.(?:call|paged)(?:<[^\n]*>)?\((?:MANAGEMENT_)?OPERATIONS\["([^"]+)"\]/g)) {
    const query = /query\??: (?:Omit<)?(\w+)/.exec(m[1]!);
    if (query) out.set(m[2]!, query[1]!);
  }
  return out;
}

/** Each property's type text of a generated object type. */
function propertiesOf(types: string, name: string): Record<string, string> {
  const decl = new RegExp(`export type ${name} = \\{\\n([\\s\\S]*?)\\n\\};`).exec(types);
  if (!decl) throw new Error(`types.ts declares no object type ${name}`);
  return Object.fromEntries([...decl[1]!.matchAll(/^ {2}(\w+)\??: (.*);$/gm)].map((p) => [p[1]!, p[2]!]));
}

describe('query values typed as the documents describe them', () => {
  it('an integer of either OpenAPI document (limit) is a number, every other query value is not', () => {
    const types = read('sdk/src/generated/types.ts');
    let integers = 0;
    for (const [document, table, file] of [
      ['schemas/openapi.json', operations, 'sdk/src/generated/operations.ts'],
      ['schemas/management-openapi.json', managementOperations, 'sdk/src/generated/management.ts'],
    ] as const) {
      const doc = JSON.parse(read(document)) as { paths: Record<string, Record<string, { parameters?: { in: string; name: string; schema: { type?: string } }[] }>> };
      const queries = queryTypes(file);
      for (const op of table.filter((o) => o.query)) {
        const params = doc.paths[op.url.replace(/:(\w+)/g, '{$1}')]?.[op.method.toLowerCase()]?.parameters?.filter((p) => p.in === 'query');
        expect(params?.length, `${document} ${op.id}`).toBeGreaterThan(0);
        const props = propertiesOf(types, queries.get(op.id)!);
        for (const p of params!) {
          const numeric = p.schema.type === 'integer' || p.schema.type === 'number';
          integers += numeric ? 1 : 0;
          expect(props[p.name] === 'number', `${op.id} ${p.name}: ${props[p.name]}`).toBe(numeric);
        }
      }
    }
    expect(integers).toBeGreaterThanOrEqual(10);
    expectTypeOf<TransactionQuery['limit']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<TenantListQuery['limit']>().toEqualTypeOf<number | undefined>();
  });
});
