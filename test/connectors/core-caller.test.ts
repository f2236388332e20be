// CoreCaller.invoke: outcomes mapped to the catalogue, each named connector's recent calls counted, and an
// operation its connector does not offer answered 501 without calling it.
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
import { createConnectorServices } from '../../src/services/connectors/index.js';
import type { Tenant } from '../../src/services/tenancy/tenants.js';
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

describe('core caller', () => {
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

    // The connectors view's window: six calls, three of them the core's failures (a refusal and a pending
    // answer are a working core's), latency from the injected clock.
    expect(service.health.window('bank-a', 'scripted')).toEqual({
      windowSeconds: 300,
      calls: 6,
      failures: 3,
      errorRate: 0.5,
      latencyMs: { avg: Math.round(((4 + 7 + 30 + 2 + 600 + 20_000) / 6) * 10) / 10, max: 20_000 },
    });
    expect(service.health.window('bank-b', 'scripted').calls).toBe(0);
  });

  it('answers an operation its connector does not offer 501, without calling the connector', async () => {
    const { service, tenant, logger } = setup();
    let called = 0;
    const err = await service
      .invoke(tenant('bank-a'), 'getCreditLimit', { entityId: 'E' }, { requestId: 'r', logger, routed: () => called++ })
      .catch((e: unknown) => e as { code: string; init: { status: number; businessCode: string; detail: string } });
    expect(err).toMatchObject({
      code: 'CL_NOT_SUPPORTED',
      init: {
        status: 501,
        businessCode: 'OPERATION_NOT_SUPPORTED',
        detail: "The operation getCreditLimit is not offered by the core-banking connector 'scripted' this tenant routes it to; nothing was sent to the core.",
      },
    });
    // Routed (the audit names the connector) but never counted as a call of the core.
    expect(called).toBe(1);
    expect(service.health.window('bank-a', 'scripted').calls).toBe(0);
  });

  it('does not count a tenant whose connector never started', async () => {
    const { service, logger } = setup();
    const broken: Tenant = { id: 'bank-x', name: 'x', status: 'active', config: { ...DEFAULT_TENANT_CONFIG, connector: { id: 'nope' } } };
    await expect(service.invoke(broken, 'upgradeLimit', { entityId: 'E', amount: '1.00', allowDecrease: false }, { requestId: 'r', logger })).rejects.toMatchObject({
      code: 'CL_UNAVAILABLE',
    });
    expect(service.health.window('bank-x', 'nope').calls).toBe(0);
  });
});
