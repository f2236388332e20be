// A core call's deadline (decision 0402): its AbortSignal is made only when the connector reads `ctx.signal`, and
// whenever it is read (before the deadline, after it, or from a copy of the context) it aborts at the deadline.
import { Type } from '@sinclair/typebox';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ConnectorTimeoutError, defineConnector, succeeded, type ConnectorContext } from '../../connectors/contract.js';
import { MockCore } from '../../connectors/mock/index.js';
import { demoFixtures } from '../../connectors/mock/fixtures.js';
import { CALL_DEADLINE } from '../../connectors/shared/deadline.js';
import { createConnectorServices } from '../../src/services/connectors/index.js';
import type { Tenant } from '../../src/services/tenancy/tenants.js';
import { DEFAULT_TENANT_CONFIG } from '../../schemas/tenant.js';
import { partialConnector } from './fixtures/partial-connector.js';

const DEADLINE_MS = 5;
const pastDeadline = () => new Promise((resolve) => setTimeout(resolve, DEADLINE_MS * 10));
const TIMEOUT = { code: 'CL_CORE_TIMEOUT', init: { status: 504 } };

function callerWith(
  upgradeLimit: (ctx: ConnectorContext) => Promise<void>,
  call: { idempotencyKey?: string | undefined; traceparent?: string; routed?: (connector: string) => void } = {},
) {
  const seen: { aborted: boolean; reason: unknown }[] = [];
  const connector = defineConnector({
    id: 'deadline',
    version: '1.0.0',
    optionsSchema: Type.Object({}),
    create: () =>
      partialConnector({
        async upgradeLimit(_input, ctx) {
          await upgradeLimit(ctx);
          return succeeded({ entityId: 'E', previousLimit: '1.00', newLimit: '2.00' });
        },
      }),
  });
  const logger = pino({ level: 'silent' });
  const { core } = createConnectorServices([connector], logger, DEADLINE_MS);
  const tenant: Tenant = { id: 'bank', name: 'bank', status: 'active', config: { ...DEFAULT_TENANT_CONFIG, connector: { id: 'deadline', options: {} } } };
  const limit = () => core.invoke(tenant, 'upgradeLimit', { entityId: 'E', amount: '1.00', allowDecrease: false }, { requestId: 'r', logger, ...call });
  return { limit, seen };
}

describe('a core call past its deadline', () => {
  it('aborts a signal read before the deadline, and answers the core timeout', async () => {
    const { limit, seen } = callerWith(async (ctx) => {
      const signal = ctx.signal;
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
      seen.push({ aborted: signal.aborted, reason: signal.reason });
    });
    await expect(limit()).rejects.toMatchObject(TIMEOUT);
    expect(seen).toEqual([{ aborted: true, reason: expect.objectContaining({ name: 'TimeoutError' }) }]);
  });

  it('gives a connector that first reads the signal after the deadline one already aborted', async () => {
    const { limit, seen } = callerWith(async (ctx) => {
      await pastDeadline();
      seen.push({ aborted: ctx.signal.aborted, reason: ctx.signal.reason });
    });
    await expect(limit()).rejects.toMatchObject(TIMEOUT);
    expect(seen).toEqual([{ aborted: true, reason: expect.objectContaining({ name: 'TimeoutError' }) }]);
  });

  it('carries the signal into a copy of the context', async () => {
    const { limit, seen } = callerWith(async (ctx) => {
      const copy = { ...ctx };
      await pastDeadline();
      seen.push({ aborted: copy.signal.aborted, reason: copy.signal.reason });
    });
    await expect(limit()).rejects.toMatchObject(TIMEOUT);
    expect(seen[0]!.aborted).toBe(true);
  });

  it('answers a timeout from the mock core without latency, which checks the deadline without the signal', async () => {
    const core = new MockCore(demoFixtures());
    const expired = { requestId: 'r', tenantId: 'bank', [CALL_DEADLINE]: { expired: true } } as unknown as ConnectorContext;
    Object.defineProperty(expired, 'signal', { get: () => expect.unreachable('the mock core made the signal') });
    await expect(core.getCreditLimit({ entityId: 'ENT-1001' }, expired)).rejects.toBeInstanceOf(ConnectorTimeoutError);
  });
});

describe("a core call's context (decision 0422: built by a constructor)", () => {
  it("carries the request's fields and the tenant, its signal an own enumerable property that a copy keeps, made only when read", async () => {
    const fields: unknown[] = [];
    const { limit } = callerWith(
      async (ctx) => {
        fields.push(Object.keys(ctx).filter((k) => k !== 'routed' && k !== 'logger').sort());
        fields.push({ tenantId: ctx.tenantId, requestId: ctx.requestId, idempotencyKey: ctx.idempotencyKey, traceparent: ctx.traceparent, dryRun: ctx.dryRun });
        fields.push(Object.getOwnPropertyDescriptor(ctx, 'signal')?.enumerable);
        const deadline = (ctx as unknown as Record<symbol, { signal: AbortSignal }>)[CALL_DEADLINE]!;
        const copy = { ...ctx };
        fields.push(copy.signal === deadline.signal && copy.signal === ctx.signal && !copy.signal.aborted);
        fields.push((copy as unknown as Record<symbol, unknown>)[CALL_DEADLINE] === deadline);
      },
      { idempotencyKey: 'key-1', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    );
    await expect(limit()).resolves.toEqual({ entityId: 'E', previousLimit: '1.00', newLimit: '2.00' });
    expect(fields).toEqual([
      ['idempotencyKey', 'requestId', 'signal', 'tenantId', 'traceparent'],
      { tenantId: 'bank', requestId: 'r', idempotencyKey: 'key-1', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', dryRun: undefined },
      true,
      true,
      true,
    ]);
  });

  it('has no traceparent while tracing is off', async () => {
    const seen: boolean[] = [];
    const { limit } = callerWith(async (ctx) => {
      seen.push('traceparent' in ctx);
    });
    await limit();
    expect(seen).toEqual([false]);
  });
});

describe("a core call's context as the operation step's call makes it", () => {
  // What `{ ...ctx, tenantId, get signal() {…} }` gave before decision 0422: a plugin that logs, hashes or compares it sees the same.
  const spreadOf = (ctx: object) => ({ ...ctx, tenantId: 'bank', signal: null });
  const calls = [
    { idempotencyKey: undefined, routed: () => undefined },
    { idempotencyKey: 'key-1', routed: () => undefined, traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
  ];

  it.each(calls)('is a plain object with the keys of the spread, in its order (traceparent: $traceparent)', async (call) => {
    const seen: unknown[] = [];
    const { limit } = callerWith(async (ctx) => {
      seen.push({ keys: Object.keys(ctx), plain: Object.getPrototypeOf(ctx) === Object.prototype && ctx.constructor === Object });
    }, call);
    await limit();
    expect(seen).toEqual([{ keys: Object.keys(spreadOf({ requestId: 'r', logger: null, ...call })), plain: true }]);
  });
});
