// CoreCaller.invoke counts calls, outcomes by kind and latency per tenant, connector and operation.
import { Type } from '@sinclair/typebox';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import {
  ConnectorTimeoutError,
  ConnectorUnavailableError,
  defineConnector,
  pending,
  rejected,
  succeeded,
  type OperationResult,
  type UpgradeLimitResult,
} from '../../connectors/contract.js';
import { createConnectorServices, LATENCY_BUCKETS_MS } from '../../src/services/connectors.js';
import type { Tenant } from '../../src/services/tenants.js';
import { partialConnector } from './fixtures/partial-connector.js';
import { DEFAULT_TENANT_CONFIG } from '../../schemas/tenant.js';

type Step = { ms: number; outcome: () => OperationResult<UpgradeLimitResult> };

function setup() {
  let clock = 0;
  const script: Step[] = [];
  const scripted = defineConnector({
    id: 'scripted',
    version: '1.0.0',
    optionsSchema: Type.Object({}),
    create: () =>
      partialConnector({
        async upgradeLimit() {
          const step = script.shift()!;
          clock += step.ms;
          return step.outcome();
        },
        async upgradeToPhysical() {
          clock += 3;
          return succeeded({ cardId: 'C', entityId: 'E', kitNo: 'K', state: 'ACTIVE' as const });
        },
      }),
  });
  const logger = pino({ level: 'silent' });
  const { core: service } = createConnectorServices([scripted], logger, 10_000, { now: () => clock });
  const tenant = (id: string): Tenant => ({
    id,
    name: id,
    status: 'active',
    config: { ...DEFAULT_TENANT_CONFIG, connector: { id: 'scripted', options: {} } },
  });
  const limit = (t: Tenant) => service.invoke(t, 'upgradeLimit', { entityId: 'E', amount: '1.00', allowDecrease: false }, { requestId: 'r', logger });
  return { service, script, tenant, limit, logger };
}

const ok = () => succeeded({ entityId: 'E', previousLimit: '1.00', newLimit: '2.00' });

describe('connector stats', () => {
  it('counts each outcome kind and the latency of every call', async () => {
    const { service, script, tenant, limit } = setup();
    const a = tenant('bank-a');
    script.push(
      { ms: 4, outcome: ok },
      { ms: 7, outcome: () => rejected('ENTITY_NOT_FOUND', 'no') },
      { ms: 30, outcome: () => pending() },
      {
        ms: 2,
        outcome: () => {
          throw new ConnectorUnavailableError('down');
        },
      },
      {
        ms: 600,
        outcome: () => {
          throw new ConnectorTimeoutError('slow');
        },
      },
      {
        ms: 20_000,
        outcome: () => {
          throw new Error('bug');
        },
      },
    );
    // One after the other: the fake clock is shared, so concurrent calls would overlap.
    const codes: string[] = [];
    for (let i = 0; i < 6; i++) {
      await limit(a).then(
        () => codes.push('ok'),
        (err: { code?: string; message: string }) => codes.push(err.code ?? err.message),
      );
    }
    expect(codes).toEqual(['ok', 'CL_BUSINESS', 'CL_CORE_PENDING', 'CL_CORE_UNAVAILABLE', 'CL_CORE_TIMEOUT', 'bug']);

    const [s] = service.stats();
    expect(s).toEqual({
      tenant: 'bank-a',
      connector: 'scripted',
      operation: 'upgradeLimit',
      count: 6,
      succeeded: 1,
      errors: { business: 1, pending: 1, unavailable: 1, timeout: 1, internal: 1 },
      latencyMs: { sum: 4 + 7 + 30 + 2 + 600 + 20_000, max: 20_000, buckets: expect.any(Array) },
    });
    const bucketOf = (ms: number) => {
      const i = LATENCY_BUCKETS_MS.findIndex((le) => ms <= le);
      return i === -1 ? LATENCY_BUCKETS_MS.length : i;
    };
    const expected = new Array(LATENCY_BUCKETS_MS.length + 1).fill(0);
    for (const ms of [4, 7, 30, 2, 600, 20_000]) expected[bucketOf(ms)]++;
    expect(s!.latencyMs.buckets).toEqual(expected);
    expect(s!.latencyMs.buckets.at(-1)).toBe(1);
  });

  it('keeps tenants and operations apart, sorted, and hands out copies', async () => {
    const { service, script, tenant, limit, logger } = setup();
    script.push({ ms: 1, outcome: ok }, { ms: 1, outcome: ok });
    await limit(tenant('bank-b'));
    await limit(tenant('bank-a'));
    await service.invoke(tenant('bank-a'), 'upgradeToPhysical', { kitNo: 'K', lockOnUpgrade: false }, { requestId: 'r', logger });
    const stats = service.stats();
    expect(stats.map((s) => `${s.tenant}/${s.operation}:${s.count}`)).toEqual(['bank-a/upgradeLimit:1', 'bank-a/upgradeToPhysical:1', 'bank-b/upgradeLimit:1']);
    stats[0]!.count = 99;
    expect(service.stats()[0]!.count).toBe(1);
  });

  it('does not count a tenant whose connector never started', async () => {
    const { service, logger } = setup();
    const broken: Tenant = { id: 'bank-x', name: 'x', status: 'active', config: { ...DEFAULT_TENANT_CONFIG, connector: { id: 'nope' } } };
    await expect(service.invoke(broken, 'upgradeLimit', { entityId: 'E', amount: '1.00', allowDecrease: false }, { requestId: 'r', logger })).rejects.toMatchObject({
      code: 'CL_UNAVAILABLE',
    });
    expect(service.stats()).toEqual([]);
  });
});
