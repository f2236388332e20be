// Connector instances on many tenants (issue 21, decision 0210): started on first use, at most
// `maxInstances` kept (the least recently used idle one is closed), never closed under a call in flight,
// and readiness probes only what is started or known to have failed.
import { Type } from '@sinclair/typebox';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { defineConnector, succeeded, type UpgradeLimitResult } from '../../connectors/contract.js';
import { createConnectorServices } from '../../src/services/connectors/index.js';
import type { Tenant } from '../../src/services/tenancy/tenants.js';
import { DEFAULT_TENANT_CONFIG } from '../../schemas/tenant.js';
import { partialConnector } from './fixtures/partial-connector.js';

function setup(maxInstances: number) {
  /** Per tenant: instances created and closed. */
  const life = new Map<string, { created: number; closed: number }>();
  const gates: (() => void)[] = [];
  const counted = defineConnector({
    id: 'counted',
    version: '1.0.0',
    optionsSchema: Type.Object({ hold: Type.Optional(Type.Boolean()), broken: Type.Optional(Type.Boolean()) }),
    create: ({ hold, broken }, { tenantId }) => {
      if (broken) throw new Error('core refused the handshake');
      const record = life.get(tenantId) ?? { created: 0, closed: 0 };
      record.created++;
      life.set(tenantId, record);
      return partialConnector({
        async upgradeLimit(input) {
          if (hold) await new Promise<void>((resolve) => gates.push(resolve));
          return succeeded<UpgradeLimitResult>({ entityId: input.entityId, previousLimit: '1.00', newLimit: input.amount });
        },
        async close() {
          record.closed++;
        },
      });
    },
  });
  const logger = pino({ level: 'silent' });
  const services = createConnectorServices([counted], logger, 5_000, { maxInstances });
  const tenant = (id: string, options: { hold?: boolean; broken?: boolean } = {}): Tenant => ({
    id,
    name: id,
    status: 'active',
    config: { ...DEFAULT_TENANT_CONFIG, connector: { id: 'counted', options } },
  });
  const limit = (t: Tenant) =>
    services.core.invoke(t, 'upgradeLimit', { entityId: 'E', amount: '2.00', allowDecrease: false }, { requestId: 'r', logger });
  const openGate = async () => {
    while (gates.length === 0) await new Promise((r) => setTimeout(r, 1));
    gates.shift()!();
  };
  /** Waits until `check` holds (closing is asynchronous): no fixed sleep. */
  const until = async (check: () => boolean) => {
    while (!check()) await new Promise((r) => setTimeout(r, 1));
  };
  return { services, life, tenant, limit, openGate, until };
}

describe('connector instances on many tenants', () => {
  it('starts none before listening when there are more than it keeps, and each on its first call', async () => {
    const { services, life, tenant, limit } = setup(2);
    const tenants = ['t1', 't2', 't3'].map((id) => tenant(id));
    expect(await services.connectors.start(tenants)).toEqual([]);
    expect(life.size).toBe(0);
    expect(services.connectors.size).toBe(0);
    await limit(tenants[0]!);
    expect(life.get('t1')).toEqual({ created: 1, closed: 0 });
    expect(life.has('t2')).toBe(false);
    await limit(tenants[0]!);
    expect(life.get('t1')).toEqual({ created: 1, closed: 0 });
  });

  it('starts every connector before listening when they fit, as before', async () => {
    const { services, life, tenant } = setup(3);
    expect(await services.connectors.start(['t1', 't2', 't3'].map((id) => tenant(id)))).toEqual([]);
    expect([...life.keys()].sort()).toEqual(['t1', 't2', 't3']);
  });

  it('still finds a broken configuration before listening when it starts none', async () => {
    const { services, tenant } = setup(1);
    const bad: Tenant = { ...tenant('bad'), config: { ...DEFAULT_TENANT_CONFIG, connector: { id: 'counted', options: { hold: 'yes' } } } };
    const degraded = await services.connectors.start([tenant('good'), bad]);
    expect(degraded).toHaveLength(1);
    expect(degraded[0]!.tenant).toBe('bad');
    expect(services.connectors.size).toBe(0);
  });

  it('keeps at most maxInstances, closing the least recently used idle one', async () => {
    const { services, life, tenant, limit, until } = setup(2);
    const [a, b, c] = ['a', 'b', 'c'].map((id) => tenant(id)) as [Tenant, Tenant, Tenant];
    await limit(a);
    await limit(b);
    await limit(a); // b is now the least recently used
    await limit(c);
    await until(() => life.get('b')!.closed === 1);
    expect(services.connectors.size).toBe(2);
    expect(services.connectors.evicted).toBe(1);
    expect(life.get('a')).toEqual({ created: 1, closed: 0 });
    expect(life.get('c')).toEqual({ created: 1, closed: 0 });
    // b's next call starts it again (and pushes out a, now the least recently used).
    await limit(b);
    expect(life.get('b')).toEqual({ created: 2, closed: 1 });
    await until(() => life.get('a')!.closed === 1);
    expect(services.connectors.size).toBe(2);
  });

  it('never closes an instance with a call in flight: the idle one goes instead', async () => {
    const { services, life, tenant, limit, openGate, until } = setup(1);
    const busy = tenant('busy', { hold: true });
    const held = limit(busy);
    await until(() => services.connectors.inFlight('busy') === 1);
    await limit(tenant('idle'));
    // Over the bound while busy holds a call: the newest idle instance is the only one that may go.
    await until(() => life.get('idle')!.closed === 1);
    expect(life.get('busy')).toEqual({ created: 1, closed: 0 });
    await openGate();
    await expect(held).resolves.toBeDefined();
    expect(life.get('busy')).toEqual({ created: 1, closed: 0 });
  });

  it('closes what it keeps on shutdown', async () => {
    const { services, life, tenant, limit } = setup(5);
    await limit(tenant('a'));
    await limit(tenant('b'));
    await services.connectors.close();
    expect(life.get('a')).toEqual({ created: 1, closed: 1 });
    expect(life.get('b')).toEqual({ created: 1, closed: 1 });
  });

  it('readiness starts no connector: it probes started ones and lists failed starts', async () => {
    const { services, life, tenant, limit } = setup(1);
    const tenants = [tenant('used'), tenant('unused'), tenant('broken', { broken: true })];
    await services.connectors.start(tenants);
    await limit(tenants[0]!);
    expect(await services.connectors.readiness(tenants)).toEqual([]);
    expect(life.has('unused')).toBe(false);
    // A first call whose start fails is listed from then on, though nothing of it is kept.
    await expect(limit(tenants[2]!)).rejects.toThrow();
    expect(await services.connectors.readiness(tenants)).toEqual([
      { tenant: 'broken', reason: expect.stringContaining('failed to start: core refused the handshake') },
    ]);
    expect(life.has('unused')).toBe(false);
  });
});
