// Shadow counts (decision 0116): each outcome on the metric at once, in the store by one statement per
// flush however many calls there were, kept for the next flush when the store refuses; a failing shadow
// logged once per interval, not once per call.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { ConnectorInstances } from '../../src/services/connectors/connector-instances.js';
import { ShadowService } from '../../src/services/connectors/shadow.js';
import type { Tenant } from '../../src/services/tenancy/tenants.js';
import type { Db } from '../../src/store/db.js';

const tenant = {
  id: 'bank-1',
  config: {
    connectors: { old: { id: 'mock', options: {} }, new: { id: 'rest', options: {} } },
    routing: { default: 'old' },
    shadow: { connector: 'new', operations: ['credit-line'] },
  },
} as unknown as Tenant;

/** A shadow core whose every call fails, and a store that records its statements (refusing the first `refuse`). */
function setup(refuse = 0) {
  const statements: { sql: string; params: unknown[] }[] = [];
  let refusals = refuse;
  const db = {
    query: async (sql: string, params: unknown[] = []) => {
      if (refusals > 0) {
        refusals--;
        throw new Error('store unavailable');
      }
      statements.push({ sql, params });
      return { rows: [] };
    },
  } as unknown as Db;
  const instances = {
    acquire: async () => ({ connector: { getCreditLimit: async () => Promise.reject(new Error('core unavailable')) }, release: () => {} }),
  } as unknown as ConnectorInstances;
  const warnings: unknown[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line)) });
  const metric: string[] = [];
  const shadow = new ShadowService(db, instances, log, { shadowCall: (_t, op, outcome) => void metric.push(`${op} ${outcome}`) }, { flushMs: 3_600_000 });
  return { shadow, statements, warnings, metric };
}

const offer = (shadow: ShadowService, n: number) => {
  for (let i = 0; i < n; i++) shadow.offer(tenant, 'getCreditLimit', { entityId: 'ENT-1001' }, { status: 'succeeded', value: { creditLimit: '1.00' } }, `req-${i}`);
};

describe('shadow counts', () => {
  it('writes 30 failed calls in one statement, and logs one warning for them', async () => {
    const { shadow, statements, warnings, metric } = setup();
    offer(shadow, 30);
    await shadow.close();
    expect(metric).toEqual(Array(30).fill('getCreditLimit error'));
    expect(statements).toHaveLength(1);
    expect(statements[0]!.params).toEqual([['bank-1'], ['getCreditLimit'], ['error'], [30]]);
    expect(warnings.filter((w) => (w as { msg: string }).msg === 'shadow call failed')).toHaveLength(1);
  });

  it('keeps the counts for the next flush when the store refuses them', async () => {
    const { shadow, statements } = setup(1);
    offer(shadow, 5);
    await shadow.settled(); // the first flush is refused
    expect(statements).toEqual([]);
    offer(shadow, 2);
    await shadow.close();
    expect(statements.map((s) => s.params)).toEqual([[['bank-1'], ['getCreditLimit'], ['error'], [7]]]);
  });
});
