// An authorization's trail as stored (decision 0404): the steps as they are, but each rule evaluation of the
// spend-control step as one string, `ruleId:version` when its active version approved, else
// `ruleId:version:mode:outcome[:reason]`. Ten objects of four keys cost PostgreSQL more to parse and store than
// the rest of the row; read back, the evaluations are objects again, exactly as decided. Rows stored before keep
// their objects and are read as they are.
import type { RuleEvaluation } from '../../schemas/auth-rules.js';
import type { StepRecord } from '../../schemas/authorizations.js';

/** A trail's step as stored: its rule evaluations compact, or objects (rows stored before decision 0404). */
export type StoredStep = Omit<StepRecord, 'rules'> & { rules?: (string | RuleEvaluation)[] };

/** Compact when it has only the fields the form knows; an evaluation with another field stays an object. */
function compactEvaluation(e: RuleEvaluation): string | RuleEvaluation {
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

/** The trail as the row keeps it. A rule id is a UUID: it never holds the separator. */
export const storedTrail = (trail: readonly StepRecord[]): StoredStep[] =>
  trail.map((s) => (s.rules ? { ...s, rules: s.rules.map(compactEvaluation) } : s));

/** The trail as it was decided, from its stored form (either form). */
export const decidedTrail = (stored: readonly StoredStep[]): StepRecord[] =>
  stored.map((s) => (s.rules ? { ...s, rules: s.rules.map(expandEvaluation) } : (s as StepRecord)));
