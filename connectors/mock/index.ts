// The mock core: an in-process core-banking simulator holding the demo fixtures, for demos and CI.
import { Type } from '@sinclair/typebox';
import {
  CONTRACT_OPERATIONS,
  ConnectorTimeoutError,
  defineConnector,
  isWriteOperation,
  type Connector,
  type ConnectorContext,
  type ConnectorOperations,
  type ContractOperation,
  type OperationInput,
  type OperationResult,
  type OperationValue,
} from '../contract.js';
import { deadlinePassed } from '../shared/deadline.js';
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

type Ctx = Pick<ConnectorContext, 'signal' | 'idempotencyKey' | 'dryRun'>;

/** Applies one operation to a bank: a write under its idempotency key, a read as it is. */
export function applyTo<O extends ContractOperation>(bank: CoreBank, operation: O, input: OperationInput<O>, key: string | undefined): OperationResult<OperationValue<O>> {
  const method = bank[operation] as (input: OperationInput<O>, key?: string) => OperationResult<OperationValue<O>>;
  return isWriteOperation(operation) ? method.call(bank, input, key) : method.call(bank, input);
}

/** A dry-run write (shadow, 0112): applied to a copy, answered, dropped with its idempotency records. */
export function dryRunOn<O extends ContractOperation>(state: MockCoreState, operation: O, input: OperationInput<O>): OperationResult<OperationValue<O>> {
  return applyTo(new CoreBank(structuredClone(state)), operation, input, undefined);
}

// The operations are assigned from the table in the constructor; this tells the type checker they are there.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface MockCore extends ConnectorOperations {}

/** The simulated core: every operation of the table, each applied by CoreBank's method of the same name. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class MockCore implements Connector {
  readonly bank: CoreBank;
  /** Writes honour ctx.dryRun (a copy of the state takes them). */
  readonly dryRun = true;

  constructor(
    readonly state: MockCoreState,
    private readonly latencyMs = 0,
  ) {
    this.bank = new CoreBank(state);
  }

  // Operations on the prototype: per-instance closures cost ~2.5 KB per core across 10 000 tenants.
  static {
    for (const operation of CONTRACT_OPERATIONS) {
      Object.defineProperty(MockCore.prototype, operation, {
        value(this: MockCore, input: OperationInput<typeof operation>, ctx: ConnectorContext) {
          return this.call(ctx, operation, input);
        },
        writable: true,
        configurable: true,
      });
    }
  }

  /** Every call, read or write, waits out the latency first; a deadline that passes first applies nothing. */
  private async call<O extends ContractOperation>(ctx: Ctx, operation: O, input: OperationInput<O>): Promise<OperationResult<OperationValue<O>>> {
    // Without latency the signal is not read (the core caller makes it only for a connector that reads it).
    if (this.latencyMs) await simulateLatency(this.latencyMs, ctx.signal);
    else if (deadlinePassed(ctx)) throw new ConnectorTimeoutError('deadline passed before the core was called');
    if (ctx.dryRun && isWriteOperation(operation)) return dryRunOn(this.state, operation, input);
    return applyTo(this.bank, operation, input, ctx.idempotencyKey);
  }
}

export default defineConnector({
  id: 'mock',
  version: '1.0.0',
  optionsSchema: MockOptions,
  offers: CONTRACT_OPERATIONS,
  create: (options) => (new MockCore(options.fixtures === 'empty' ? emptyFixtures() : demoFixtures(), options.latencyMs ?? 0)),
});
