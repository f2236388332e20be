// An authorization's trail as stored (decision 0404): each rule evaluation as `ruleId:version` (an active approval) or
// `ruleId:version:mode:outcome[:reason]`, read back as the object decided; rows stored before keep their objects.
import type { RuleEvaluation } from '../../schemas/auth-rules.js';
import type { StepRecord } from '../../schemas/authorizations.js';

export type StoredStep = Omit<StepRecord, 'rules'> & { rules?: (string | RuleEvaluation)[] };

/** The stored form of the frozen evaluations spend controls share across trails (decision 0417): made once each. */
const compacted = new WeakMap<RuleEvaluation, string | RuleEvaluation>();

function compactEvaluation(e: RuleEvaluation): string | RuleEvaluation {
  if (!Object.isFrozen(e)) return compactOf(e);
  let c = compacted.get(e);
  if (c === undefined) compacted.set(e, (c = compactOf(e)));
  return c;
}

/** Compact when it has only the fields the form knows; an evaluation with another field stays an object. */
function compactOf(e: RuleEvaluation): string | RuleEvaluation {
  if (Object.keys(e).length !== (e.declineReason === undefined ? 4 : 5)) return e;
  if (e.mode === 'active' && e.outcome === 'approved' && e.declineReason === undefined) return `${e.ruleId}:${e.version}`;
  return `${e.ruleId}:${e.version}:${e.mode}:${e.outcome}${e.declineReason === undefined ? '' : `:${e.declineReason}`}`;
}

function expandEvaluation(s: string | RuleEvaluation): RuleEvaluation {
  if (typeof s !== 'string') return s;
  const [ruleId, version, mode = 'active', outcome = 'approved', declineReason] = s.split(':');
  const e = { ruleId: ruleId!, version: Number(version), mode, outcome } as RuleEvaluation;
  if (declineReason !== undefined) e.declineReason = declineReason as RuleEvaluation['declineReason'];
  return e;
}

/** The trail as the row keeps it (a rule id is a UUID: no separator in it). */
export const storedTrail = (trail: readonly StepRecord[]): StoredStep[] =>
  trail.map((s) => (s.rules ? { ...s, rules: s.rules.map(compactEvaluation) } : s));

export const decidedTrail = (stored: readonly StoredStep[]): StepRecord[] =>
  stored.map((s) => (s.rules ? { ...s, rules: s.rules.map(expandEvaluation) } : (s as StepRecord)));
