// The REST connector: drives a core that speaks the Cardline core REST protocol v1
// (schemas/core-protocol.openapi.json) over the shared HTTP transport (deadlines, safe retries, breaker).
import {
  defineConnector,
  type Connector,
  type ConnectorContext,
  type ConnectorDeps,
  type BlockCardInput,
  type CardDetails,
  type CardRef,
  type CardSummary,
  type CreditLimitResult,
  type OperationResult,
  type PhysicalUpgradeInput,
  type PhysicalUpgradeResult,
  type PreferencesInput,
  type SetPinInput,
  type UpgradeLimitInput,
  type UpgradeLimitResult,
} from '../contract.js';
import type { Preferences } from '../../schemas/cards.js';
import type { CoreRequest } from '../http/client.js';
import type { AnswerMapper } from '../http/transport.js';
import { HttpTransport, type HttpTransportHooks, type HttpTransportStats } from '../http/transport.js';
import { RestOptions, resolveRestOptions } from './options.js';
import {
  CARD_CHANGE_SUFFIX,
  HEALTH_PATH,
  PHYSICAL_UPGRADE_PATH,
  cardPath,
  cardResolutionPath,
  creditLimitPath,
  entityCardsPath,
  fromCoreCard,
  fromCoreCardChange,
  fromCoreCardList,
  fromCoreCardResolution,
  fromCoreCreditLimit,
  fromCoreCreditLimitRead,
  fromCorePhysicalUpgrade,
  fromCorePin,
  fromCorePreferences,
  fromCorePreferencesApplied,
  isBareCardId,
  toCoreBlock,
  toCoreCreditLimit,
  toCorePhysicalUpgrade,
  toCorePin,
  toCorePreferences,
  type CardChange,
} from './transformers.js';

export const REST_CONNECTOR_VERSION = '1.0.0';

export const USER_AGENT = `cardline-rest-connector/${REST_CONNECTOR_VERSION}`;

/** Counters since the instance was created, for the metrics endpoint. */
export type RestConnectorStats = HttpTransportStats;

/** Seams for tests: a dispatcher instead of the shared Pool (undici MockAgent), and the jitter source. */
export type RestConnectorHooks = HttpTransportHooks;

/** Contract operations, plus the card lookup some of them make first. */
type Operation = Exclude<keyof Connector, 'health' | 'close'> | 'resolveCard';

export class RestConnector implements Connector {
  constructor(private readonly transport: HttpTransport) {}

  upgradeLimit(input: UpgradeLimitInput, ctx: ConnectorContext): Promise<OperationResult<UpgradeLimitResult>> {
    return this.execute(
      'upgradeLimit',
      { method: 'POST', path: creditLimitPath(input.entityId), body: toCoreCreditLimit(input) },
      ctx,
      (answer) => fromCoreCreditLimit(answer, input),
    );
  }

  upgradeToPhysical(input: PhysicalUpgradeInput, ctx: ConnectorContext): Promise<OperationResult<PhysicalUpgradeResult>> {
    return this.execute(
      'upgradeToPhysical',
      { method: 'POST', path: PHYSICAL_UPGRADE_PATH, body: toCorePhysicalUpgrade(input) },
      ctx,
      (answer) => fromCorePhysicalUpgrade(answer, input),
    );
  }

  activateCard(input: CardRef, ctx: ConnectorContext): Promise<OperationResult<CardSummary>> {
    return this.cardChange('activateCard', 'activate', input, ctx);
  }

  lockCard(input: CardRef, ctx: ConnectorContext): Promise<OperationResult<CardSummary>> {
    return this.cardChange('lockCard', 'lock', input, ctx);
  }

  unlockCard(input: CardRef, ctx: ConnectorContext): Promise<OperationResult<CardSummary>> {
    return this.cardChange('unlockCard', 'unlock', input, ctx);
  }

  blockCard(input: BlockCardInput, ctx: ConnectorContext): Promise<OperationResult<CardSummary>> {
    return this.cardChange('blockCard', 'block', input, ctx, toCoreBlock(input));
  }

  advanceFulfilment(input: { cardId: string }, ctx: ConnectorContext): Promise<OperationResult<CardSummary>> {
    return this.execute(
      'advanceFulfilment',
      { method: 'POST', path: cardPath(input.cardId, CARD_CHANGE_SUFFIX.advanceFulfilment) },
      ctx,
      (answer) => fromCoreCardChange(answer, 'advanceFulfilment', input.cardId),
    );
  }

  updatePreferences(input: PreferencesInput, ctx: ConnectorContext): Promise<OperationResult<Preferences>> {
    return this.execute(
      'updatePreferences',
      { method: 'PUT', path: cardPath(input.cardId, '/preferences'), body: toCorePreferences(input) },
      ctx,
      (answer) => fromCorePreferencesApplied(answer, input),
    );
  }

  /** The PIN block travels in the body only: never in a path, a header or a log line. */
  setPin(input: SetPinInput, ctx: ConnectorContext): Promise<OperationResult<{ cardId: string }>> {
    return this.execute('setPin', { method: 'PUT', path: cardPath(input.cardId, '/pin'), body: toCorePin(input) }, ctx, (answer) =>
      fromCorePin(answer, input.cardId),
    );
  }

  listCards(input: { entityId: string }, ctx: ConnectorContext): Promise<OperationResult<CardSummary[]>> {
    return this.execute('listCards', { method: 'GET', path: entityCardsPath(input.entityId) }, ctx, (answer) => fromCoreCardList(answer, input.entityId));
  }

  getCard(input: { cardId: string }, ctx: ConnectorContext): Promise<OperationResult<CardDetails>> {
    return this.execute('getCard', { method: 'GET', path: cardPath(input.cardId) }, ctx, (answer) => fromCoreCard(answer, input.cardId));
  }

  getPreferences(input: { cardId: string }, ctx: ConnectorContext): Promise<OperationResult<Preferences>> {
    return this.execute('getPreferences', { method: 'GET', path: cardPath(input.cardId, '/preferences') }, ctx, (answer) =>
      fromCorePreferences(answer, input.cardId),
    );
  }

  getCreditLimit(input: { entityId: string }, ctx: ConnectorContext): Promise<OperationResult<CreditLimitResult>> {
    return this.execute('getCreditLimit', { method: 'GET', path: creditLimitPath(input.entityId) }, ctx, (answer) =>
      fromCoreCreditLimitRead(answer, input.entityId),
    );
  }

  /**
   * A lifecycle change by CardRef. The protocol's change paths take a cardId; a reference by entity or kit
   * is resolved first (GET /v1/card-resolution, under the same idempotency key, so that a retry resolves
   * to the card the first attempt changed). A refusal of the lookup is the operation's refusal.
   */
  private async cardChange(op: Operation, change: CardChange, ref: CardRef, ctx: ConnectorContext, body?: unknown): Promise<OperationResult<CardSummary>> {
    let cardId: string;
    if (isBareCardId(ref)) {
      cardId = ref.cardId;
    } else {
      const resolved = await this.execute('resolveCard', { method: 'GET', path: cardResolutionPath(ref, change) }, ctx, fromCoreCardResolution);
      if (resolved.status !== 'succeeded') return resolved as OperationResult<never>;
      cardId = resolved.value.cardId;
    }
    return this.execute(
      op,
      { method: 'POST', path: cardPath(cardId, CARD_CHANGE_SUFFIX[change]), ...(body === undefined ? {} : { body }) },
      ctx,
      (answer) => fromCoreCardChange(answer, change, cardId, body as Partial<BlockCardInput> | undefined),
    );
  }

  /** Ready when the breaker lets calls through and the bank answers its health path. */
  health(): Promise<void> {
    return this.transport.health(HEALTH_PATH);
  }

  stats(): RestConnectorStats {
    return this.transport.stats();
  }

  close(): Promise<void> {
    return this.transport.close();
  }

  private execute<T>(op: Operation, request: CoreRequest, ctx: ConnectorContext, map: AnswerMapper<T>): Promise<OperationResult<T>> {
    return this.transport.call(op, request, ctx, map);
  }
}

/** Builds an instance; the seams in `hooks` are for tests. */
export async function createRestConnector(options: RestOptions, deps: ConnectorDeps, hooks: RestConnectorHooks = {}): Promise<RestConnector> {
  return new RestConnector(await HttpTransport.open(resolveRestOptions(options), USER_AGENT, deps, hooks));
}

export default defineConnector({
  id: 'rest',
  version: REST_CONNECTOR_VERSION,
  optionsSchema: RestOptions,
  create: (options, deps) => createRestConnector(options, deps),
});
