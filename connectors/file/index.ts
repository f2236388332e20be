// The file core: the mock's business rules over state kept durably in a directory per tenant.
import { Type, type Static } from '@sinclair/typebox';
import {
  defineConnector,
  type AuthorizationInput,
  type BlockCardInput,
  type CardRef,
  type Connector,
  type ConnectorContext,
  type ConnectorDeps,
  type PhysicalUpgradeInput,
  type PreferencesInput,
  type RegisterEntityInput,
  type ReplaceCardInput,
  type RepaymentInput,
  type SetPinInput,
  type TransactionQuery,
  type UpdateEntityInput,
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

type Ctx = Pick<ConnectorContext, 'signal' | 'idempotencyKey'>;

export class FileCore implements Connector {
  private constructor(readonly store: FileStore) {}

  /** `snapshotEvery` (journal entries between snapshots) is for tests; tenants keep the default. */
  static async open(
    options: FileOptions & { snapshotEvery?: number },
    deps: Pick<ConnectorDeps, 'secrets'> & Partial<Pick<ConnectorDeps, 'logger'>>,
  ): Promise<FileCore> {
    return new FileCore(await FileStore.open({ ...options, logger: deps.logger, secrets: deps.secrets }));
  }

  // Writes: applied in memory, journaled and acknowledged once durable (store.ts).

  upgradeLimit(input: UpgradeLimitInput, ctx: Ctx) {
    return this.store.write('upgradeLimit', input, ctx.idempotencyKey, ctx.signal);
  }

  upgradeToPhysical(input: PhysicalUpgradeInput, ctx: Ctx) {
    return this.store.write('upgradeToPhysical', input, ctx.idempotencyKey, ctx.signal);
  }

  activateCard(input: CardRef, ctx: Ctx) {
    return this.store.write('activateCard', input, ctx.idempotencyKey, ctx.signal);
  }

  lockCard(input: CardRef, ctx: Ctx) {
    return this.store.write('lockCard', input, ctx.idempotencyKey, ctx.signal);
  }

  unlockCard(input: CardRef, ctx: Ctx) {
    return this.store.write('unlockCard', input, ctx.idempotencyKey, ctx.signal);
  }

  blockCard(input: BlockCardInput, ctx: Ctx) {
    return this.store.write('blockCard', input, ctx.idempotencyKey, ctx.signal);
  }

  updatePreferences(input: PreferencesInput, ctx: Ctx) {
    return this.store.write('updatePreferences', input, ctx.idempotencyKey, ctx.signal);
  }

  advanceFulfilment(input: { cardId: string }, ctx: Ctx) {
    return this.store.write('advanceFulfilment', { cardId: input.cardId }, ctx.idempotencyKey, ctx.signal);
  }

  /** The journal records the change (card, format, key id), never the PIN block. */
  setPin(input: SetPinInput, ctx: Ctx) {
    return this.store.write('setPin', { cardId: input.cardId, format: input.format, keyId: input.keyId }, ctx.idempotencyKey, ctx.signal);
  }

  registerEntity(input: RegisterEntityInput, ctx: Ctx) {
    return this.store.write('registerEntity', input, ctx.idempotencyKey, ctx.signal);
  }

  updateEntity(input: UpdateEntityInput, ctx: Ctx) {
    return this.store.write('updateEntity', input, ctx.idempotencyKey, ctx.signal);
  }

  issueCard(input: { entityId: string }, ctx: Ctx) {
    return this.store.write('issueCard', { entityId: input.entityId }, ctx.idempotencyKey, ctx.signal);
  }

  replaceCard(input: ReplaceCardInput, ctx: Ctx) {
    return this.store.write('replaceCard', input, ctx.idempotencyKey, ctx.signal);
  }

  authorize(input: AuthorizationInput, ctx: Ctx) {
    return this.store.write('authorize', input, ctx.idempotencyKey, ctx.signal);
  }

  repay(input: RepaymentInput, ctx: Ctx) {
    return this.store.write('repay', input, ctx.idempotencyKey, ctx.signal);
  }

  // Reads: served from memory, not journaled.

  getEntity(input: { entityId: string }, ctx: Ctx) {
    return this.store.read(ctx.signal, (bank) => bank.getEntity(input));
  }

  listTransactions(input: TransactionQuery, ctx: Ctx) {
    return this.store.read(ctx.signal, (bank) => bank.listTransactions(input));
  }

  listCards(input: { entityId: string }, ctx: Ctx) {
    return this.store.read(ctx.signal, (bank) => bank.listCards(input));
  }

  getCard(input: { cardId: string }, ctx: Ctx) {
    return this.store.read(ctx.signal, (bank) => bank.getCard(input));
  }

  getPreferences(input: { cardId: string }, ctx: Ctx) {
    return this.store.read(ctx.signal, (bank) => bank.getPreferences(input));
  }

  getCreditLimit(input: { entityId: string }, ctx: Ctx) {
    return this.store.read(ctx.signal, (bank) => bank.getCreditLimit(input));
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
  create: (options, deps) => FileCore.open(options, deps),
});
