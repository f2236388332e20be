// The mock core: an in-process core-banking simulator holding the demo fixtures, for demos and CI.
import { Type } from '@sinclair/typebox';
import {
  ConnectorTimeoutError,
  defineConnector,
  type Connector,
  type ConnectorContext,
  type PhysicalUpgradeInput,
  type UpgradeLimitInput,
} from '../contract.js';
import { CoreBank } from './core.js';
import { demoFixtures, emptyFixtures, type MockCoreState } from './fixtures.js';

const MockOptions = Type.Object(
  {
    fixtures: Type.Optional(Type.Union([Type.Literal('demo'), Type.Literal('empty')], { default: 'demo' })),
    /** Simulated core latency per call, in milliseconds. */
    latencyMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000 })),
  },
  { additionalProperties: false },
);

/** Waits out the simulated latency; a deadline that passes first is a timeout, and nothing is applied. */
async function simulateLatency(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) throw new ConnectorTimeoutError('deadline passed before the core was called');
  if (!ms) return;
  await new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ConnectorTimeoutError('deadline passed while waiting for the core'));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

export class MockCore implements Connector {
  readonly bank: CoreBank;

  constructor(
    readonly state: MockCoreState,
    private readonly latencyMs = 0,
  ) {
    this.bank = new CoreBank(state);
  }

  async upgradeLimit(input: UpgradeLimitInput, ctx: Pick<ConnectorContext, 'signal' | 'idempotencyKey'>) {
    await simulateLatency(this.latencyMs, ctx.signal);
    return this.bank.upgradeLimit(input, ctx.idempotencyKey);
  }

  async upgradeToPhysical(input: PhysicalUpgradeInput, ctx: Pick<ConnectorContext, 'signal' | 'idempotencyKey'>) {
    await simulateLatency(this.latencyMs, ctx.signal);
    return this.bank.upgradeToPhysical(input, ctx.idempotencyKey);
  }
}

export default defineConnector({
  id: 'mock',
  version: '1.0.0',
  optionsSchema: MockOptions,
  create: (options) => new MockCore(options.fixtures === 'empty' ? emptyFixtures() : demoFixtures(), options.latencyMs ?? 0),
});
