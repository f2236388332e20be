// ConnectorInstances: one instance per tenant configuration; a replaced instance is closed only after its
// last call in flight returns, at once when it has none, and every instance is closed on shutdown.
import { Type } from '@sinclair/typebox';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { defineConnector, succeeded, type UpgradeLimitResult } from '../../connectors/contract.js';
import { createConnectorServices } from '../../src/services/connectors/index.js';
import type { Tenant } from '../../src/services/tenancy/tenants.js';
import { DEFAULT_TENANT_CONFIG } from '../../schemas/tenant.js';
import { partialConnector } from './fixtures/partial-connector.js';

function setup() {
  /** Per instance (named by its `build` option): calls answered so far and whether it was closed. */
  const built = new Map<number, { answered: number; closed: number }>();
  const gates: (() => void)[] = [];
  const gated = defineConnector({
    id: 'gated',
    version: '1.0.0',
    optionsSchema: Type.Object({ build: Type.Integer(), fail: Type.Optional(Type.Boolean()) }),
    create: ({ build, fail }) => {
      const record = { answered: 0, closed: 0 };
      built.set(build, record);
      return partialConnector({
        // Holds each call until the test opens its gate.
        async upgradeLimit(input) {
          await new Promise<void>((resolve) => gates.push(resolve));
          record.answered++;
          if (fail) throw new Error('connector bug');
          return succeeded<UpgradeLimitResult>({ entityId: input.entityId, previousLimit: '1.00', newLimit: input.amount });
        },
        async close() {
          record.closed++;
        },
      });
    },
  });
  const logger = pino({ level: 'silent' });
  const services = createConnectorServices([gated], logger, 5_000);
  const tenant = (build: number, fail = false): Tenant => ({
    id: 'bank-a',
    name: 'Bank A',
    status: 'active',
    config: { ...DEFAULT_TENANT_CONFIG, connector: { id: 'gated', options: { build, ...(fail ? { fail } : {}) } } },
  });
  const limit = (t: Tenant) =>
    services.core.invoke(t, 'upgradeLimit', { entityId: 'E', amount: '2.00', allowDecrease: false }, { requestId: 'r', logger });
  /** Opens the gate of the oldest held call. */
  const openGate = async () => {
    while (gates.length === 0) await new Promise((r) => setTimeout(r, 1));
    gates.shift()!();
  };
  const settle = () => new Promise((r) => setTimeout(r, 5));
  return { services, built, tenant, limit, openGate, settle };
}

describe('connector instances', () => {
  it('keeps one instance while the configuration is unchanged', async () => {
    const { services, tenant } = setup();
    const first = await services.connectors.forTenant(tenant(1));
    expect(await services.connectors.forTenant(tenant(1))).toBe(first);
    expect(await services.connectors.forTenant(tenant(2))).not.toBe(first);
  });

  it('closes a replaced instance only after its last call in flight returns', async () => {
    const { services, built, tenant, limit, openGate, settle } = setup();
    const v1 = tenant(1);
    const held = [limit(v1), limit(v1)];
    await settle();
    expect(services.connectors.inFlight('bank-a')).toBe(2);

    // The configuration changes while two calls are in flight: new calls go to the new instance.
    const v2 = tenant(2);
    const newer = limit(v2);
    await settle();
    expect(built.get(1)).toEqual({ answered: 0, closed: 0 });
    await openGate(); // the first v1 call returns…
    await openGate(); // …then the second (v2's call is third in line)
    await expect(Promise.all(held)).resolves.toHaveLength(2);
    await settle();
    expect(built.get(1)).toEqual({ answered: 2, closed: 1 });

    await openGate();
    await expect(newer).resolves.toMatchObject({ newLimit: '2.00' });
    expect(built.get(2)).toEqual({ answered: 1, closed: 0 });
  });

  it('does not close a replaced instance while one call is still in flight', async () => {
    const { services, built, tenant, limit, openGate, settle } = setup();
    const held = [limit(tenant(1)), limit(tenant(1))];
    await settle();
    await services.connectors.forTenant(tenant(2)); // replaced, with two calls in flight
    await openGate();
    await held[0];
    await settle();
    expect(built.get(1)).toEqual({ answered: 1, closed: 0 });
    await openGate();
    await held[1];
    await settle();
    expect(built.get(1)).toEqual({ answered: 2, closed: 1 });
  });

  it('closes a replaced instance at once when nothing is in flight, and a failed call still releases it', async () => {
    const { services, built, tenant, limit, openGate, settle } = setup();
    const failing = limit(tenant(1, true));
    await openGate();
    await expect(failing).rejects.toThrow('connector bug');
    expect(services.connectors.inFlight('bank-a')).toBe(0);
    await services.connectors.forTenant(tenant(2));
    await settle();
    expect(built.get(1)!.closed).toBe(1);
    expect(built.get(2)!.closed).toBe(0);
  });

  it('close() closes the current instance and replaced ones still in flight', async () => {
    const { services, built, tenant, limit, openGate, settle } = setup();
    const held = limit(tenant(1));
    await settle();
    await services.connectors.forTenant(tenant(2));
    await services.connectors.close();
    expect(built.get(1)!.closed).toBe(1);
    expect(built.get(2)!.closed).toBe(1);
    await openGate();
    await held;
    await settle();
    // Released after shutdown: not closed a second time.
    expect(built.get(1)!.closed).toBe(1);
  });
});
