// An authorization's trail as stored (decisions 0404, 0443): approving versions in one string (`ruleId:version[:shadow]`),
// declines as `ruleId:version:mode:declined:reason`; read back as a count and the declines, rows stored before too.
import type { RuleEvaluation } from '../../schemas/auth-rules.js';
import type { StepRecord } from '../../schemas/authorizations.js';

/** A step as the pipeline decided it; spend controls also name the versions that approved, to be stored. */
export type TrailStep = StepRecord & { approvedVersions?: string };

export type StoredStep = Omit<StepRecord, 'rules' | 'evaluated'> & { rules?: (string | RuleEvaluation)[]; approved?: string };

/** The stored form of a step shared by many trails (the spend-control step's when every version approves): made once. */
const storedShared = new WeakMap<TrailStep, StoredStep>();

/** Compact when it has only the fields the form knows, else an object; only declines reach it (approvals go in `approved`). */
function compactOf(e: RuleEvaluation): string | RuleEvaluation {
  if (Object.keys(e).length !== (e.declineReason === undefined ? 4 : 5)) return e;
  return `${e.ruleId}:${e.version}:${e.mode}:${e.outcome}${e.declineReason === undefined ? '' : `:${e.declineReason}`}`;
}

function expandEvaluation(s: string | RuleEvaluation): RuleEvaluation {
  if (typeof s !== 'string') return s;
  const [ruleId, version, mode = 'active', outcome = 'approved', declineReason] = s.split(':');
  const e = { ruleId: ruleId!, version: Number(version), mode, outcome } as RuleEvaluation;
  if (declineReason !== undefined) e.declineReason = declineReason as RuleEvaluation['declineReason'];
  return e;
}

function storedStep(s: TrailStep): StoredStep {
  const { evaluated: _evaluated, approvedVersions, rules, ...rest } = s;
  const stored: StoredStep = rest;
  if (approvedVersions) stored.approved = approvedVersions;
  if (rules) stored.rules = rules.map(compactOf);
  return stored;
}

/** The trail as the row keeps it (a rule id is a UUID: no separator in it). */
export const storedTrail = (trail: readonly TrailStep[]): StoredStep[] =>
  trail.map((s) => {
    if (s.evaluated === undefined && !s.rules) return s;
    if (!Object.isFrozen(s)) return storedStep(s);
    let c = storedShared.get(s);
    if (!c) storedShared.set(s, (c = storedStep(s)));
    return c;
  });

/** A stored step as answered: the versions evaluated counted, only the declines listed. */
function decidedStep(s: StoredStep): StepRecord {
  const { approved, rules, ...rest } = s;
  const step: StepRecord = rest;
  const all = (rules ?? []).map(expandEvaluation);
  step.evaluated = (approved ? approved.split(' ').length : 0) + all.length;
  const declines = all.filter((e) => e.outcome === 'declined');
  if (declines.length) step.rules = declines;
  return step;
}

export const decidedTrail = (stored: readonly StoredStep[]): StepRecord[] => stored.map((s) => (s.rules || s.approved ? decidedStep(s) : (s as StepRecord)));
