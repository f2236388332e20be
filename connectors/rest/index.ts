// The REST connector: drives a core that speaks the Cardline core REST protocol v1 over the shared HTTP
// transport. Each operation is one line: the protocol entry it uses, its body transformer, its answer mapper.
import {
  CONTRACT_OPERATIONS,
  defineConnector,
  type Connector,
  type ConnectorOperations,
  type ConnectorContext,
  type CardRef,
  type CardSummary,
  type ConnectorDeps,
  type ContractOperation,
  type OperationInput,
  type OperationResult,
  type OperationValue,
} from '../contract.js';
import { type CoreBlockRequest } from '../../schemas/core-protocol.js';
import { CORE_PROTOCOL, type CoreOperation, type CoreRule, type RuleInput } from './protocol.js';
import type { CoreAnswer, Classified } from '../http/failures.js';
import { HttpTransport, type HttpTransportHooks, type HttpTransportStats } from '../http/transport.js';
import { RestOptions, resolveRestOptions } from './options.js';
import {
  corePath,
  coreRequest,
  fromCoreCard,
  fromCoreCardChange,
  fromCoreCardList,
  fromCoreCardIssued,
  fromCoreCardReplaced,
  fromCoreCardResolution,
  fromCoreEntityRead,
  fromCoreEntityRegistered,
  fromCoreEntityUpdated,
  fromCoreRepayment,
  fromCoreTransaction,
  fromCoreTransactionPage,
  fromCoreCreditLimit,
  fromCoreCreditLimitRead,
  fromCorePhysicalUpgrade,
  fromCorePin,
  fromCorePreferences,
  fromCorePreferencesApplied,
  isBareCardId,
  toCoreAuthorization,
  toCoreBlock,
  toCoreEntityRegistration,
  toCoreEntityUpdate,
  toCoreReplacement,
  toCoreRepayment,
  toCoreCreditLimit,
  toCorePhysicalUpgrade,
  toCorePin,
  toCorePreferences,
  type CardChange,
} from './transformers.js';

const REST_CONNECTOR_VERSION = '1.0.0';
const USER_AGENT = `cardline-rest-connector/${REST_CONNECTOR_VERSION}`;

/** Counters since the instance was created, for the metrics endpoint. */
type RestConnectorStats = HttpTransportStats;

/** Seams for tests: a dispatcher instead of the shared Pool (undici MockAgent), and the jitter source. */
export type RestConnectorHooks = HttpTransportHooks;

/** An instance: every operation of the contract, the core's health, the transport's counters. */
export type RestConnector = ConnectorOperations & {
  health(): Promise<void>;
  stats(): RestConnectorStats;
  breakerState(): NonNullable<ReturnType<NonNullable<Connector['breakerState']>>>;
  breakerScope(): string;
  close(): Promise<void>;
};

/** How one contract operation runs over the transport. */
type RestOperation<O extends ContractOperation> = (
  transport: HttpTransport,
  input: OperationInput<O>,
  ctx: ConnectorContext,
) => Promise<OperationResult<OperationValue<O>>>;

/** A call of one protocol entry: target filled from the input, body from `body`, the answer read by `answer`. */
const call =
  <R extends CoreRule, T>(entry: CoreOperation<R>, answer: (answer: CoreAnswer, input: RuleInput<R>) => Classified<T>, body?: (input: RuleInput<R>) => unknown) =>
  (transport: HttpTransport, input: RuleInput<R>, ctx: ConnectorContext): Promise<OperationResult<T>> =>
    transport.call(entry.serves, coreRequest(entry, input, body), ctx, (a) => answer(a, input));

/**
 * A lifecycle change by CardRef: a reference by entity or kit is resolved first under the same key, so a
 * retry resolves to the card the first attempt changed.
 */
const byCardRef =
  <I extends CardRef>(entry: CoreOperation<'activateCard' | 'lockCard' | 'unlockCard' | 'blockCard'>, change: CardChange, body?: (input: I) => CoreBlockRequest) =>
  async (transport: HttpTransport, input: I, ctx: ConnectorContext): Promise<OperationResult<CardSummary>> => {
    let cardId: string;
    if (isBareCardId(input)) {
      cardId = input.cardId;
    } else {
      const resolved = await call(CORE_PROTOCOL.resolveCard, fromCoreCardResolution)(transport, { action: change, ...input }, ctx);
      if (resolved.status !== 'succeeded') return resolved;
      cardId = resolved.value.cardId;
    }
    const sent = body?.(input);
    const request = { method: entry.method, path: corePath(entry, { cardId }), ...(sent ? { body: sent } : {}) };
    return transport.call(entry.serves, request, ctx, (a) => fromCoreCardChange(a, change, cardId, sent));
  };

/** Every contract operation, one line each. */
const OPERATIONS: { [O in ContractOperation]: RestOperation<O> } = {
  upgradeLimit: call(CORE_PROTOCOL.setCreditLimit, fromCoreCreditLimit, toCoreCreditLimit),
  upgradeToPhysical: call(CORE_PROTOCOL.upgradeToPhysical, fromCorePhysicalUpgrade, toCorePhysicalUpgrade),
  activateCard: byCardRef(CORE_PROTOCOL.activateCard, 'activate'),
  lockCard: byCardRef(CORE_PROTOCOL.lockCard, 'lock'),
  unlockCard: byCardRef(CORE_PROTOCOL.unlockCard, 'unlock'),
  blockCard: byCardRef(CORE_PROTOCOL.blockCard, 'block', toCoreBlock),
  advanceFulfilment: call(CORE_PROTOCOL.advanceFulfilment, (a, i) => fromCoreCardChange(a, 'advanceFulfilment', i.cardId)),
  updatePreferences: call(CORE_PROTOCOL.updatePreferences, fromCorePreferencesApplied, toCorePreferences),
  // The PIN block travels in the body only: never in a path, a header or a log line.
  setPin: call(CORE_PROTOCOL.setPin, (a, i) => fromCorePin(a, i.cardId), toCorePin),
  listCards: call(CORE_PROTOCOL.listCards, (a, i) => fromCoreCardList(a, i.entityId)),
  getCard: call(CORE_PROTOCOL.getCard, (a, i) => fromCoreCard(a, i.cardId)),
  getPreferences: call(CORE_PROTOCOL.getPreferences, (a, i) => fromCorePreferences(a, i.cardId)),
  getCreditLimit: call(CORE_PROTOCOL.getCreditLimit, (a, i) => fromCoreCreditLimitRead(a, i.entityId)),
  registerEntity: call(CORE_PROTOCOL.registerEntity, fromCoreEntityRegistered, toCoreEntityRegistration),
  getEntity: call(CORE_PROTOCOL.getEntityProfile, (a, i) => fromCoreEntityRead(a, i.entityId)),
  updateEntity: call(CORE_PROTOCOL.updateEntity, fromCoreEntityUpdated, toCoreEntityUpdate),
  issueCard: call(CORE_PROTOCOL.issueCard, fromCoreCardIssued),
  replaceCard: call(CORE_PROTOCOL.replaceCard, fromCoreCardReplaced, toCoreReplacement),
  authorize: call(CORE_PROTOCOL.authorize, fromCoreTransaction, toCoreAuthorization),
  repay: call(CORE_PROTOCOL.repay, fromCoreRepayment, toCoreRepayment),
  listTransactions: call(CORE_PROTOCOL.listTransactions, fromCoreTransactionPage),
};

function restConnector(transport: HttpTransport): RestConnector {
  const operations = Object.fromEntries(
    Object.entries(OPERATIONS).map(([name, run]) => [name, (input: never, ctx: ConnectorContext) => (run as RestOperation<ContractOperation>)(transport, input, ctx)]),
  ) as ConnectorOperations;
  return {
    ...operations,
    // Ready when the breaker lets calls through and the bank answers its health path.
    health: () => transport.health(CORE_PROTOCOL.bankHealth.path),
    stats: () => transport.stats(),
    breakerState: () => transport.stats().breaker.state,
    breakerScope: () => transport.breakerScope,
    close: () => transport.close(),
  };
}

/** Builds an instance; the seams in `hooks` are for tests. */
export async function createRestConnector(options: RestOptions, deps: ConnectorDeps, hooks: RestConnectorHooks = {}): Promise<RestConnector> {
  return restConnector(await HttpTransport.open(resolveRestOptions(options), USER_AGENT, deps, hooks));
}

export default defineConnector({
  id: 'rest',
  version: REST_CONNECTOR_VERSION,
  optionsSchema: RestOptions,
  offers: CONTRACT_OPERATIONS,
  create: (options, deps) => createRestConnector(options, deps),
});
