// The pipeline's decision-endpoint step: the tenant's own systems decide within its deadline, or its stand-in stands
// (decision 0338). Recorded on the trail either way; a stand-in says why (`standIn`: timeout, error or busy), and a
// timeout is also an event of record, `authorization.decision-timed-out` (decisions 0353, 0381).
import type { AuthorizationAsk, StepRecord } from '../../schemas/authorizations.js';
import { fromMinor } from '../../connectors/shared/money.js';
import type { Services } from '../services/index.js';
import type { WriterEntry } from '../audit/writer.js';
import type { AuthorizationRecord } from '../services/transactions/authorizations.js';
import type { Tenant } from '../services/tenancy/tenants.js';

type Decided = Pick<AuthorizationRecord, 'id' | 'cardId' | 'status' | 'amountMinor' | 'currency'>;
type Result = StepRecord & {
  approvedMinor?: bigint;
  records?: { of: (a: Decided) => WriterEntry[]; alone: (entry: WriterEntry) => Promise<void>; committed: (a: AuthorizationRecord) => void };
};

const NOT_CONFIGURED: Result = Object.freeze({ step: 'decision-endpoint', outcome: 'skipped', detail: 'not configured' });

type StepInput = { tenant: Tenant; services: Services; authorizationId: string };

/** Without an endpoint the step is decided at once, without a promise turn. */
export function decisionEndpointStep(ask: AuthorizationAsk, ctx: StepInput): Result | Promise<Result> {
  const endpoint = ctx.tenant.config.authorization?.decision;
  return endpoint ? asked(ask, ctx, endpoint) : NOT_CONFIGURED;
}

async function asked(ask: AuthorizationAsk, ctx: StepInput, endpoint: NonNullable<NonNullable<Tenant['config']['authorization']>['decision']>): Promise<Result> {
  const decisions = ctx.services.decisions;
  const decision = await decisions.decide(ctx.tenant.id, ctx.tenant.config.sandbox === true, endpoint, {
    ...ask,
    authorizationId: ctx.authorizationId,
    partialApproval: ctx.tenant.config.authorization?.partialApproval ?? false,
  });
  if (decision.kind === 'answered') {
    const { answer } = decision;
    if (!answer.approved) return { step: 'decision-endpoint', outcome: 'declined', declineReason: answer.declineReason };
    if (answer.approvedMinor === null) return { step: 'decision-endpoint', outcome: 'approved' };
    return { step: 'decision-endpoint', outcome: 'approved', detail: `partial: ${fromMinor(answer.approvedMinor)} approved`, approvedMinor: answer.approvedMinor };
  }
  const record: StepRecord =
    endpoint.standIn === 'approve'
      ? { step: 'decision-endpoint', outcome: 'approved', standIn: decision.cause, detail: `${decision.detail}: stand-in approve` }
      : { step: 'decision-endpoint', outcome: 'declined', declineReason: 'ISSUER_UNAVAILABLE', standIn: decision.cause, detail: `${decision.detail}: stand-in decline` };
  if (decision.cause !== 'timeout') return record;
  // A timeout is an event of record with the authorization's; its late answer, if any, is reconciled once committed.
  const late = decision.late;
  return {
    ...record,
    records: {
      of: (a) => [decisions.timeoutRecord(ctx.tenant.id, endpoint, a)],
      alone: (entry) => decisions.recordTimeout(entry),
      committed: (a) => {
        if (late) decisions.reconcile(ctx.tenant.id, endpoint.standIn, a, late);
      },
    },
  };
}
