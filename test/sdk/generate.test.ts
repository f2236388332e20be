// The SDK's generated code is the operation tables': every operation has its method, public ones on `Cardline`,
// management ones on `CardlineAdmin`, with typed requests and results. Whether sdk/src/generated/ is what
// `npm run generate` writes now is test/contract/derived-files.test.ts's.
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
  type TenantView,
  type TransactionPageResponse,
  type TransactionView,
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
    expectTypeOf(cl.transaction.list).returns.toEqualTypeOf<Paged<TransactionView, TransactionPageResponse>>();
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
