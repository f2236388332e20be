// The file core: the mock's business rules over state kept durably in a directory per tenant.
import { Type, type Static } from '@sinclair/typebox';
import {
  defineConnector,
  type Connector,
  type ConnectorContext,
  type ConnectorDeps,
  type PhysicalUpgradeInput,
  type UpgradeLimitInput,
} from '../contract.js';
import { FileStore } from './store.js';

export { exportFixtures, importFixtures } from './store.js';

export const FileOptions = Type.Object(
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
export type FileOptions = Static<typeof FileOptions>;

export class FileCore implements Connector {
  private constructor(readonly store: FileStore) {}

  /** `snapshotEvery` (journal entries between snapshots) is for tests; tenants keep the default. */
  static async open(options: FileOptions & { snapshotEvery?: number }, logger?: ConnectorDeps['logger']): Promise<FileCore> {
    return new FileCore(await FileStore.open({ ...options, logger }));
  }

  upgradeLimit(input: UpgradeLimitInput, ctx: Pick<ConnectorContext, 'signal' | 'idempotencyKey'>) {
    return this.store.upgradeLimit(input, ctx.idempotencyKey, ctx.signal);
  }

  upgradeToPhysical(input: PhysicalUpgradeInput, ctx: Pick<ConnectorContext, 'signal' | 'idempotencyKey'>) {
    return this.store.upgradeToPhysical(input, ctx.idempotencyKey, ctx.signal);
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
  create: (options, deps) => FileCore.open(options, deps.logger),
});
