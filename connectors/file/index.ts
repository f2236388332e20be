// The file core: the mock's business rules over state kept durably in a directory per tenant.
import { Type, type Static } from '@sinclair/typebox';
import {
  CONTRACT_OPERATIONS,
  defineConnector,
  isWriteOperation,
  operationsOf,
  type Connector,
  type ConnectorContext,
  type ConnectorDeps,
  type ConnectorOperations,
  type ContractOperation,
  type OperationInput,
  type OperationResult,
  type OperationValue,
} from '../contract.js';
import { applyTo, dryRunOn } from '../mock/index.js';
import { FileStore } from './store.js';

export { exportFixtures, importFixtures } from './store.js';

const FileOptions = Type.Object(
  {
    /** The tenant's own directory (created when missing). One process at a time may open it. */
    dir: Type.String({ minLength: 1 }),
    /** The state a directory starts with when it holds none yet; ignored afterwards. */
    fixtures: Type.Optional(Type.Union([Type.Literal('demo'), Type.Literal('empty')], { default: 'demo' })),
    /** How long to wait for another holder of the directory's lock before failing. */
    lockTimeoutMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000, default: 2_000 })),
  },
  { additionalProperties: false },
);
type FileOptions = Static<typeof FileOptions>;

type Ctx = Pick<ConnectorContext, 'signal' | 'idempotencyKey' | 'dryRun'>;

/** What the journal records of a write's input, where that is less than the input: never a PIN block. */
const JOURNALED: { [O in ContractOperation]?: (input: OperationInput<O>) => OperationInput<O> } = {
  setPin: ({ cardId, format, keyId }) => ({ cardId, format, keyId }) as OperationInput<'setPin'>,
};

// The operations are assigned from the table in the constructor; this tells the type checker they are there.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface FileCore extends ConnectorOperations {}

/** The file core: every operation of the table over CoreBank; writes journaled, reads from memory. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class FileCore implements Connector {
  /** Writes honour ctx.dryRun (answered from a copy of the state, nothing journaled). */
  readonly dryRun = true;

  private constructor(readonly store: FileStore) {
    Object.assign(this, operationsOf((operation, input, ctx) => this.call(ctx, operation, input)));
  }

  /** `snapshotEvery` (journal entries between snapshots) is for tests; tenants keep the default. */
  static async open(
    options: FileOptions & { snapshotEvery?: number },
    deps: Pick<ConnectorDeps, 'secrets'> & Partial<Pick<ConnectorDeps, 'logger'>>,
  ): Promise<FileCore> {
    return new FileCore(await FileStore.open({ ...options, logger: deps.logger, secrets: deps.secrets }));
  }

  /** Writes apply in memory, acknowledged once journaled; dry-run writes use a copy; reads come from memory. */
  private call<O extends ContractOperation>(ctx: Ctx, operation: O, input: OperationInput<O>): Promise<OperationResult<OperationValue<O>>> {
    if (!isWriteOperation(operation)) return this.store.read(ctx.signal, (bank) => applyTo(bank, operation, input, undefined));
    if (ctx.dryRun) return this.store.read(ctx.signal, (bank) => dryRunOn(bank.state, operation, input));
    const journaled = (JOURNALED[operation] as ((i: OperationInput<O>) => OperationInput<O>) | undefined)?.(input) ?? input;
    return this.store.write(operation, journaled as never, ctx.idempotencyKey, ctx.signal) as Promise<OperationResult<OperationValue<O>>>;
  }

  async health(): Promise<void> {
    this.store.check();
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

export default defineConnector({
  id: 'file',
  version: '1.0.0',
  optionsSchema: FileOptions,
  offers: CONTRACT_OPERATIONS,
  create: (options, deps) => FileCore.open(options, deps),
});
