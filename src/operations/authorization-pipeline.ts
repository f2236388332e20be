// The authorization pipeline: card state → spend controls → the tenant's decision endpoint → the core, each step
// recorded; the first decline wins and the steps after it are not called. The processor's route and the sandbox
// route run it, differing only in the core's step (a hold, or the sandbox core's own host decision).
import type { AuthorizationAsk, AuthorizationStep } from '../../schemas/authorizations.js';
import type { DeclineReason } from '../../schemas/transactions.js';
import { fromMinor, toMinor } from '../../connectors/shared/money.js';
import { uuidv7Hex } from '../audit/uuid-text.js';
import type { WriterEntry } from '../audit/writer.js';
import type { AuthorizationRecord, NewAuthorization, TrailStep } from '../services/transactions/authorizations.js';
import type { VelocityCount } from '../services/transactions/spend-controls.js';
import type { CoreCall, EventOf, ExecuteContext } from './define.js';
import type { ValueOf } from '../services/connectors/index.js';
import { DEFAULT_TIME_ZONE } from '../../schemas/tenant.js';
import type { Services } from '../services/index.js';
import type { Tenant } from '../services/tenancy/tenants.js';
import { decisionEndpointStep } from './decision-step.js';

/** What the core's step concluded: the entity, the amount held (approved) or the reason (declined). */
export interface CoreDecision {
  entityId: string;
  approvedMinor: bigint;
  declineReason: DeclineReason | null;
  /** The core's own id where it keeps one (the sandbox core's transaction), else the pipeline's. */
  id?: string;
}

export interface PipelineContext {
  tenant: Tenant;
  core: CoreCall;
  services: Services;
  /** Where given, the authorization's row goes in with the request's audit record (decision 0380). */
  recordAuthorization?: ExecuteContext<unknown, unknown, unknown>['recordAuthorization'];
}

/** What the steps of one authorization share: the card, read once; what to settle once the pipeline decided. */
interface PipelineRun {
  card: () => Promise<ValueOf<'getCard'>>;
  amountMinor: bigint;
  /** Set by spend controls, called once with the amount approved (0 on a decline or a failure): counts it, and says where. */
  settle: Settle | null;
}

type Settle = (approvedMinor: bigint) => VelocityCount[] | Promise<VelocityCount[]>;

/** What a step sees: the pipeline's context and the id the authorization will have (unless the core names its own). */
export interface StepContext extends PipelineContext {
  authorizationId: string;
}

type Decided = Pick<AuthorizationRecord, 'id' | 'cardId' | 'status' | 'amountMinor' | 'currency'>;

/** A step's audit records (a timeout's), appended just before the authorization's own by its statement (decision 0381). */
export interface StepRecords {
  of: (a: Decided) => WriterEntry[];
  alone: (entry: WriterEntry) => Promise<void>;
  committed: (a: AuthorizationRecord) => void;
}

/** A step's record; `approvedMinor` caps what the core is asked to hold (a partial approval by the decision endpoint). */
export type StepResult = TrailStep & { approvedMinor?: bigint; records?: StepRecords };

/** A step before the core: a decline reason stops the pipeline; `skipped` says it had nothing to decide. */
type GatewayStep = (ask: AuthorizationAsk, ctx: StepContext, run: PipelineRun) => StepResult | Promise<StepResult>;

/**
 * The card must be ACTIVE. Read from the core that serves the card (an unknown card is the core's
 * CARD_NOT_FOUND refusal, answered as such): the card processor may not be the credit line's core.
 */
const cardState: GatewayStep = async (_ask, _ctx, run) => {
  const card = await run.card();
  return card.state === 'ACTIVE'
    ? { step: 'card-state', outcome: 'approved' }
    : { step: 'card-state', outcome: 'declined', declineReason: 'CARD_NOT_ACTIVE', detail: `card is ${card.state}` };
};

/** Spend controls: the tenant's rules, the card's and its entity's (decision 0332); `skipped` when there are none. */
const spendControls: GatewayStep = async (ask, { tenant, services }, run) => {
  const { record, settle } = await services.spendControls.decide(
    tenant.id,
    tenant.config.timeZone ?? DEFAULT_TIME_ZONE,
    { cardId: ask.cardId, amountMinor: run.amountMinor, currency: ask.currency, merchant: ask.merchant, channel: ask.channel, at: ask.at },
    async () => (await run.card()).entityId,
  );
  run.settle = settle;
  return record;
};

/** The tenant's real-time decision endpoint, when its configuration names one (src/operations/decision-step.ts). */
const decisionEndpoint: GatewayStep = decisionEndpointStep;

/** The steps before the core's, with the card-state step or without it (the sandbox core checks the card itself). */
const GATEWAY_STEPS: readonly GatewayStep[] = [cardState, spendControls, decisionEndpoint];
const CORE_CHECKS_CARD: readonly GatewayStep[] = [spendControls, decisionEndpoint];

/** A step's record without the cap and records (only the decision endpoint's step adds them). */
const recordOf = ({ approvedMinor: _cap, records: _records, ...record }: StepResult): TrailStep => record;

export interface PipelineOptions {
  /**
   * Whether the gateway reads the card's state itself. The sandbox core's host decision checks it first on its
   * own and records the decline as a transaction, so that route leaves it to the core.
   */
  cardStateInGateway: boolean;
  /** The core's step: its decision on what the gateway let through. */
  decide: (ask: AuthorizationAsk, authorizationId: string) => Promise<CoreDecision>;
}

/** Runs the steps in order and records the authorization with its trail. */
export async function runPipeline(ask: AuthorizationAsk, ctx: PipelineContext, opts: PipelineOptions): Promise<AuthorizationRecord> {
  let card: Promise<ValueOf<'getCard'>> | undefined;
  const run: PipelineRun = { card: () => (card ??= ctx.core('getCard', { cardId: ask.cardId })), amountMinor: toMinor(ask.amount), settle: null };
  const settle: Settle = (approvedMinor) => {
    const pending = run.settle;
    run.settle = null;
    return pending ? pending(approvedMinor) : [];
  };
  try {
    return await decide(ask, ctx, opts, run, settle);
  } finally {
    // A failure before the decision counts nothing; once settled, nothing is left to settle.
    if (run.settle) await settle(0n);
  }
}

async function decide(
  ask: AuthorizationAsk,
  ctx: PipelineContext,
  opts: PipelineOptions,
  run: PipelineRun,
  settle: Settle,
): Promise<AuthorizationRecord> {
  const generatedId = `auth_${uuidv7Hex()}`;
  // Field by field, not a spread with a field after it (decision 0422): one shape for every authorization.
  const stepContext: StepContext = { tenant: ctx.tenant, core: ctx.core, services: ctx.services, recordAuthorization: ctx.recordAuthorization, authorizationId: generatedId };
  const trail: TrailStep[] = [];
  const { amountMinor } = run;
  let declined: { step: AuthorizationStep; reason: DeclineReason } | null = null;
  let capMinor: bigint | null = null;
  const stepRecords: StepRecords[] = [];
  for (const step of opts.cardStateInGateway ? GATEWAY_STEPS : CORE_CHECKS_CARD) {
    const pending = step(ask, stepContext, run);
    const result = pending instanceof Promise ? await pending : pending;
    const { approvedMinor: cap, records } = result;
    const record: TrailStep = cap === undefined && records === undefined ? result : recordOf(result);
    trail.push(record);
    if (cap !== undefined) capMinor = cap;
    if (records) stepRecords.push(records);
    if (record.outcome === 'declined') {
      declined = { step: record.step, reason: record.declineReason! };
      break;
    }
  }
  let entityId: string | null = null;
  let approvedMinor = 0n;
  let id = generatedId;
  if (!declined) {
    const decision = await opts.decide(capMinor === null ? ask : { ...ask, amount: fromMinor(capMinor) }, generatedId);
    entityId = decision.entityId;
    id = decision.id ?? generatedId;
    if (decision.declineReason) {
      trail.push({ step: 'core', outcome: 'declined', declineReason: decision.declineReason });
      declined = { step: 'core', reason: decision.declineReason };
    } else {
      approvedMinor = decision.approvedMinor;
      trail.push({ step: 'core', outcome: 'approved', ...(approvedMinor < amountMinor ? { detail: `partial: ${fromMinor(approvedMinor)} held` } : {}) });
    }
  }
  const settled = settle(approvedMinor);
  const velocity = settled instanceof Promise ? await settled : settled;
  const decided: NewAuthorization = {
    id,
    cardId: ask.cardId,
    entityId,
    status: declined ? 'DECLINED' : 'APPROVED',
    declineReason: declined?.reason ?? null,
    decidedBy: declined?.step ?? 'core',
    amountMinor,
    approvedMinor,
    currency: ask.currency,
    merchant: ask.merchant,
    channel: ask.channel,
    networkReference: ask.networkReference,
    trail,
    at: ask.at,
    velocity,
  };
  const { recordAuthorization } = ctx;
  const entries = stepRecords.map((r) => r.of(decided));
  const committed = (a: AuthorizationRecord) => stepRecords.forEach((r) => r.committed(a));
  if (recordAuthorization) {
    const before = entries.flat();
    const recorded = await ctx.services.authorizations.insert(ctx.tenant.id, decided, (row) =>
      recordAuthorization(row, before.length ? { before, committed: () => committed(recorded) } : undefined),
    );
    return recorded;
  }
  // No record follows at once (the sandbox route, an approved execution): the row first, then the steps' records.
  const recorded = await ctx.services.authorizations.insert(ctx.tenant.id, decided);
  for (const [i, r] of stepRecords.entries()) for (const entry of entries[i]!) await r.alone(entry);
  committed(recorded);
  return recorded;
}

/** The event of record of a decided authorization. */
export function authorizationEvent(a: AuthorizationRecord): EventOf {
  const common = {
    authorizationId: a.id,
    cardId: a.cardId,
    entityId: a.entityId,
    amount: fromMinor(a.amountMinor),
    approvedAmount: fromMinor(a.approvedMinor),
    currency: a.currency,
    channel: a.channel,
    mcc: a.merchant.mcc,
    merchantCountry: a.merchant.country,
    decidedBy: a.decidedBy,
  };
  return a.status === 'APPROVED'
    ? { type: 'authorization.approved', payload: { ...common, status: 'APPROVED', declineReason: null } }
    : { type: 'authorization.declined', payload: { ...common, status: 'DECLINED', declineReason: a.declineReason! } };
}
