// The SDK's generated code is the operation table's: regenerated in memory, it matches what is committed
// (run `npm run sdk:generate` after changing an operation), and every operation has its method.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { GENERATED_DIR, generate } from '../../sdk/scripts/generate.js';
import { Cardline, OPERATIONS, type CardOperationResponse, type Paged, type Pending, type TransactionPageResponse, type TransactionView, type UpgradeLimitBody } from '../../sdk/src/index.js';
import { operations } from '../../src/operations/index.js';

describe('the SDK generated from the operation table', () => {
  it('matches the committed files (npm run sdk:generate)', async () => {
    const files = await generate();
    expect(Object.keys(files).sort()).toEqual(['events.ts', 'operations.ts', 'types.ts']);
    for (const [file, text] of Object.entries(files)) {
      expect(await readFile(join(GENERATED_DIR, file), 'utf8'), `sdk/src/generated/${file} is stale: run npm run sdk:generate`).toBe(text);
    }
  });

  it('has one method per operation, named after its id, path parameters first', () => {
    const cl = new Cardline({ baseUrl: 'http://127.0.0.1:1', tenant: 'demo' }) as unknown as Record<string, Record<string, unknown>>;
    const camel = (s: string) => s.replace(/-([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
    for (const op of operations) {
      const [ns, method] = op.id.includes('.') ? op.id.split('.').map(camel) : [undefined, camel(op.id)];
      const fn = ns ? cl[ns]?.[method!] : cl[method!];
      expect(typeof fn, op.id).toBe('function');
      const meta = OPERATIONS[op.id as keyof typeof OPERATIONS];
      expect([meta.method, meta.path, meta.dialect], op.id).toEqual([op.method, op.url, op.dialect]);
    }
    expect(Object.keys(OPERATIONS)).toHaveLength(operations.length);
  });

  it('types requests and results', () => {
    const cl = new Cardline({ baseUrl: 'http://127.0.0.1:1', tenant: 'demo' });
    expectTypeOf(cl.creditLimit.upgrade).parameter(0).toEqualTypeOf<UpgradeLimitBody>();
    expectTypeOf(cl.card.lock).parameter(0).toEqualTypeOf<string>();
    expectTypeOf(cl.card.lock).returns.resolves.toEqualTypeOf<CardOperationResponse | Pending>();
    expectTypeOf(cl.transaction.list).returns.toEqualTypeOf<Paged<TransactionView, TransactionPageResponse>>();
    expectTypeOf<ReturnType<typeof cl.keys.public>>().resolves.toHaveProperty('keys');
  });
});
