// The REST connector against the real mock core server (in-process, 127.0.0.1, port 0): both operations,
// business refusals, idempotent retries, and faults (timeouts, 5xx, resets, breaker) with state checks.
import { createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import {
  ConnectorTimeoutError,
  ConnectorUnavailableError,
  type ConnectorContext,
  type ConnectorDeps,
} from '../../connectors/contract.js';
import { createRestConnector, type RestConnector } from '../../connectors/rest/index.js';
import type { RestOptions } from '../../connectors/rest/options.js';
import { mulberry32 } from '../../connectors/mock-core/faults.js';
import { buildMockCore } from '../../connectors/mock-core/server.js';
import { ephemeralSecrets } from '../../connectors/shared/ephemeral-secrets.js';

const logger = pino({ level: 'silent' }) as unknown as ConnectorDeps['logger'];
const deps: ConnectorDeps = { tenantId: 'rest-bank', logger, secrets: ephemeralSecrets() };

let core: FastifyInstance;
let base: string;
const open: RestConnector[] = [];

beforeAll(async () => {
  core = buildMockCore({ maxHoldMs: 5_000 });
  base = await core.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(() => core.close());
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  await core.inject({ method: 'PUT', url: '/__admin/faults', payload: {} });
  await core.inject({ method: 'POST', url: '/__admin/reset' });
});

let bankSeq = 0;
/** A connector on its own bank (fresh demo fixtures); its breaker is per test through distinct settings. */
async function connector(options: Partial<RestOptions> = {}, bank = `bank-${++bankSeq}`): Promise<{ c: RestConnector; bank: string }> {
  const c = await createRestConnector(
    {
      baseUrl: `${base}/banks/${bank}`,
      retries: { max: 2, baseDelayMs: 1, maxDelayMs: 5 },
      // openMs varies per test so that no two tests share a breaker (breakers are shared per origin + settings).
      breaker: { failureThreshold: 5, openMs: 30_000 + bankSeq },
      ...options,
    },
    deps,
  );
  open.push(c);
  return { c, bank };
}

const ctx = (over: Partial<ConnectorContext> = {}): ConnectorContext => ({
  tenantId: 'rest-bank',
  requestId: `req-${Math.random().toString(36).slice(2)}`,
  logger,
  signal: AbortSignal.timeout(2_000),
  ...over,
});

const entity = async (bank: string, entityId = 'ENT-1001') => (await core.inject({ method: 'GET', url: `/banks/${bank}/v1/entities/${entityId}` })).json();
const setFaults = (payload: object) => core.inject({ method: 'PUT', url: '/__admin/faults', payload });

describe('operations', () => {
  it('raises a credit limit', async () => {
    const { c, bank } = await connector();
    const result = await c.upgradeLimit({ entityId: 'ENT-1001', amount: '75000.00', allowDecrease: false }, ctx());
    expect(result).toEqual({ status: 'succeeded', value: { entityId: 'ENT-1001', previousLimit: '50000.00', newLimit: '75000.00' } });
    expect((await entity(bank)).creditLimit).toBe('75000.00');
  });

  it('upgrades a virtual card to a free kit, locked until activation', async () => {
    const { c, bank } = await connector();
    const result = await c.upgradeToPhysical(
      { kitNo: 'KIT-2001', entityId: 'ENT-1001', lockOnUpgrade: true, communicationAddress: { usePrimaryAddress: true }, plasticCode: { code: 'STD' } },
      ctx(),
    );
    expect(result).toEqual({ status: 'succeeded', value: { cardId: 'CARD-3001', entityId: 'ENT-1001', kitNo: 'KIT-2001', state: 'PENDING_ACTIVATION' } });
    expect((await entity(bank)).cards[0]).toMatchObject({ form: 'PHYSICAL', state: 'PENDING_ACTIVATION', kitNo: 'KIT-2001' });
  });

  it('upgrades with a pre-allocated kit and no entity', async () => {
    const { c } = await connector();
    const result = await c.upgradeToPhysical({ kitNo: 'KIT-2101', lockOnUpgrade: false }, ctx());
    expect(result).toEqual({ status: 'succeeded', value: { cardId: 'CARD-3003', entityId: 'ENT-1003', kitNo: 'KIT-2101', state: 'ACTIVE' } });
  });

  it.each([
    ['an unknown kit', 'PPCUST_018', (c: RestConnector) => c.upgradeToPhysical({ kitNo: 'KIT-9999', entityId: 'ENT-1001', lockOnUpgrade: false }, ctx())],
    ['a kit of another entity', 'PPCUST_018', (c: RestConnector) => c.upgradeToPhysical({ kitNo: 'KIT-2101', entityId: 'ENT-1001', lockOnUpgrade: false }, ctx())],
    ['a decrease', 'LIMIT_DECREASE_NOT_ALLOWED', (c: RestConnector) => c.upgradeLimit({ entityId: 'ENT-1001', amount: '10.00', allowDecrease: false }, ctx())],
    ['an unknown entity', 'ENTITY_NOT_FOUND', (c: RestConnector) => c.upgradeLimit({ entityId: 'ENT-0000', amount: '10.00', allowDecrease: true }, ctx())],
  ])('refuses %s with %s', async (_name, code, call) => {
    const { c, bank } = await connector();
    const result = await call(c);
    expect(result).toMatchObject({ status: 'rejected', code, message: expect.any(String) });
    expect((await entity(bank)).creditLimit).toBe('50000.00');
  });

  it('a retry with the same idempotency key answers the first outcome and applies once', async () => {
    const { c, bank } = await connector();
    const first = await c.upgradeLimit({ entityId: 'ENT-1001', amount: '60000.00', allowDecrease: false }, ctx({ idempotencyKey: 'idem-a' }));
    await c.upgradeLimit({ entityId: 'ENT-1001', amount: '65000.00', allowDecrease: false }, ctx());
    const retry = await c.upgradeLimit({ entityId: 'ENT-1001', amount: '60000.00', allowDecrease: false }, ctx({ idempotencyKey: 'idem-a' }));
    expect(retry).toEqual(first);
    expect((await entity(bank)).creditLimit).toBe('65000.00');
  });

  it('health() resolves while the core is up', async () => {
    const { c } = await connector();
    await expect(c.health()).resolves.toBeUndefined();
  });
});

describe('faults', () => {
  it('a core that never answers → ConnectorTimeoutError at the deadline; nothing applied', async () => {
    const { c, bank } = await connector();
    await setFaults({ timeoutRate: 1 });
    const started = Date.now();
    await expect(
      c.upgradeLimit({ entityId: 'ENT-1001', amount: '75000.00', allowDecrease: false }, ctx({ signal: AbortSignal.timeout(200), idempotencyKey: 'k-t' })),
    ).rejects.toBeInstanceOf(ConnectorTimeoutError);
    expect(Date.now() - started).toBeLessThan(30_000); // the 200 ms deadline: the core never answers
    await expect(
      c.upgradeToPhysical({ kitNo: 'KIT-2001', entityId: 'ENT-1001', lockOnUpgrade: false }, ctx({ signal: AbortSignal.timeout(200) })),
    ).rejects.toBeInstanceOf(ConnectorTimeoutError);
    await setFaults({});
    expect(await entity(bank)).toMatchObject({ creditLimit: '50000.00', cards: [{ form: 'VIRTUAL' }] });
    expect(c.stats()).toMatchObject({ calls: 2, timeouts: 2 });
  });

  it('503 from the core → ConnectorUnavailableError; retried only with an idempotency key', async () => {
    const { c, bank } = await connector();
    await setFaults({ errorRate: 1 });
    await expect(c.upgradeLimit({ entityId: 'ENT-1001', amount: '75000.00', allowDecrease: false }, ctx())).rejects.toBeInstanceOf(ConnectorUnavailableError);
    expect(c.stats().retries).toBe(0);
    await expect(
      c.upgradeLimit({ entityId: 'ENT-1001', amount: '75000.00', allowDecrease: false }, ctx({ idempotencyKey: 'k-503' })),
    ).rejects.toBeInstanceOf(ConnectorUnavailableError);
    expect(c.stats().retries).toBe(2);
    await setFaults({});
    expect((await entity(bank)).creditLimit).toBe('50000.00');
  });

  it('a reset connection → ConnectorUnavailableError; nothing applied', async () => {
    const { c, bank } = await connector();
    await setFaults({ resetRate: 1 });
    await expect(
      c.upgradeToPhysical({ kitNo: 'KIT-2001', entityId: 'ENT-1001', lockOnUpgrade: false }, ctx()),
    ).rejects.toBeInstanceOf(ConnectorUnavailableError);
    await setFaults({});
    expect((await entity(bank)).cards[0].form).toBe('VIRTUAL');
  });

  it('a fault on the first attempt is retried under the idempotency key and applied once', async () => {
    // A seed whose first draw faults (errorRate 0.5) and whose second does not.
    let seed = 1;
    for (; ; seed++) {
      const r = mulberry32(seed);
      if (r() < 0.5 && r() >= 0.5) break;
    }
    const { c, bank } = await connector();
    await setFaults({ errorRate: 0.5, seed });
    const result = await c.upgradeLimit({ entityId: 'ENT-1001', amount: '75000.00', allowDecrease: false }, ctx({ idempotencyKey: 'k-retry' }));
    expect(result).toEqual({ status: 'succeeded', value: { entityId: 'ENT-1001', previousLimit: '50000.00', newLimit: '75000.00' } });
    expect(c.stats()).toMatchObject({ calls: 1, succeeded: 1, retries: 1 });
    await setFaults({});
    expect((await entity(bank)).creditLimit).toBe('75000.00');
  });

  it('the breaker opens after repeated faults, fails fast, half-opens after openMs and closes on a good probe', async () => {
    const { c, bank } = await connector({ breaker: { failureThreshold: 3, openMs: 150 }, retries: { max: 0, baseDelayMs: 1, maxDelayMs: 1 } });
    // The breaker's clock (Date) stands still until the test moves it: on a loaded machine the calls below
    // may take longer than openMs, which must not half-open the breaker before the test says so.
    vi.useFakeTimers({ toFake: ['Date'] });
    onTestFinished(() => void vi.useRealTimers());
    await setFaults({ resetRate: 1 });
    for (let i = 0; i < 3; i++) {
      await expect(c.upgradeLimit({ entityId: 'ENT-1001', amount: '75000.00', allowDecrease: false }, ctx())).rejects.toBeInstanceOf(ConnectorUnavailableError);
    }
    expect(c.stats().breaker).toMatchObject({ state: 'open', opens: 1 });

    await setFaults({}); // the core is back, but the breaker does not know yet
    await expect(c.upgradeLimit({ entityId: 'ENT-1001', amount: '75000.00', allowDecrease: false }, ctx())).rejects.toThrow(/circuit breaker is open/);
    expect((await entity(bank)).creditLimit).toBe('50000.00');
    await expect(c.health()).rejects.toBeInstanceOf(ConnectorUnavailableError);

    vi.setSystemTime(Date.now() + 170);
    expect(c.stats().breaker.state).toBe('half-open');
    expect((await c.upgradeLimit({ entityId: 'ENT-1001', amount: '75000.00', allowDecrease: false }, ctx())).status).toBe('succeeded');
    expect(c.stats()).toMatchObject({ shortCircuits: 1, breaker: { state: 'closed', opens: 1 } });
  });

  it('a half-open probe that fails re-opens the breaker', async () => {
    const { c } = await connector({ breaker: { failureThreshold: 2, openMs: 100 }, retries: { max: 0, baseDelayMs: 1, maxDelayMs: 1 } });
    await setFaults({ errorRate: 1 });
    for (let i = 0; i < 2; i++) await expect(c.upgradeLimit({ entityId: 'ENT-1001', amount: '1.00', allowDecrease: true }, ctx())).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 120));
    await expect(c.upgradeLimit({ entityId: 'ENT-1001', amount: '1.00', allowDecrease: true }, ctx())).rejects.toThrow(/answered 503/);
    expect(c.stats().breaker).toMatchObject({ state: 'open', opens: 2 });
  });

  it('a core that is down (connection refused) → retried, then ConnectorUnavailableError', async () => {
    // A port that was just free: nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const c = await createRestConnector({ baseUrl: `http://127.0.0.1:${port}/banks/demo`, retries: { max: 2, baseDelayMs: 1, maxDelayMs: 2 } }, deps);
    open.push(c);
    await expect(c.upgradeLimit({ entityId: 'ENT-1001', amount: '1.00', allowDecrease: true }, ctx())).rejects.toThrow(/ECONNREFUSED/);
    expect(c.stats()).toMatchObject({ retries: 2, failures: 1 });
    await expect(c.health()).rejects.toBeInstanceOf(ConnectorUnavailableError);
  });
});

describe('auth against the core', () => {
  let secured: FastifyInstance;
  let securedBase: string;
  beforeAll(async () => {
    secured = buildMockCore({ auth: { type: 'bearer', token: 'core-token' } });
    securedBase = await secured.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => secured.close());

  it('bearer: the right token is accepted, a wrong one is unavailable (never a business answer)', async () => {
    const good = await createRestConnector({ baseUrl: `${securedBase}/banks/demo`, auth: { type: 'bearer', token: 'core-token' } }, deps);
    const bad = await createRestConnector({ baseUrl: `${securedBase}/banks/demo`, auth: { type: 'bearer', token: 'nope' } }, deps);
    open.push(good, bad);
    expect((await good.upgradeLimit({ entityId: 'ENT-1001', amount: '75000.00', allowDecrease: false }, ctx())).status).toBe('succeeded');
    await expect(bad.upgradeLimit({ entityId: 'ENT-1001', amount: '76000.00', allowDecrease: false }, ctx())).rejects.toThrow(/401/);
  });
});
