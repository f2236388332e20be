// The rule language of spend controls (decision 0332): which attribute takes which operation and spelling, a
// definition compiled once into predicates, and the buckets velocity counters are kept in. Pure functions: the
// pipeline's step and the backtest evaluate with the same code.
import { createHash } from 'node:crypto';
import type { FieldError } from '../../schemas/common.js';
import { AMOUNT_PATTERN } from '../../schemas/common.js';
import type { RuleCondition, RuleDefinition, RuleOperation, RuleVelocity, VelocityWindow } from '../../schemas/auth-rules.js';
import { CHANNELS, COUNTRY_PATTERN, MCC_PATTERN, type DeclineReason } from '../../schemas/transactions.js';
import { toMinor } from '../../connectors/shared/money.js';

/** What a rule sees of an authorization. */
export interface RuleFacts {
  mcc: string;
  merchantCountry: string;
  merchantId: string | null;
  channel: string;
  amountMinor: bigint;
  currency: string;
  /** Minutes since local midnight in the tenant's zone. */
  localMinutes: number;
}

const LIST_OPS: readonly RuleOperation[] = ['is-one-of', 'is-not-one-of'];
const ORDER_OPS: readonly RuleOperation[] = ['above', 'below'];
const ALL_OPS: readonly RuleOperation[] = [...LIST_OPS, ...ORDER_OPS];

const TIME = /^([01]\d|2[0-3]):([0-5]\d)$/;
const TIME_RANGE = /^([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-3]):([0-5]\d)$/;
const minutesOf = (h: string, m: string) => Number(h) * 60 + Number(m);

/** Per attribute: the operations it takes, and whether a list value / a single value is spelled right. */
const GRAMMAR: Record<RuleCondition['attribute'], { ops: readonly RuleOperation[]; item: (v: string) => boolean; single?: (v: string) => boolean; message: string }> = {
  mcc: { ops: ALL_OPS, item: (v) => new RegExp(MCC_PATTERN).test(v), message: 'Pattern' },
  merchantCountry: { ops: LIST_OPS, item: (v) => new RegExp(COUNTRY_PATTERN).test(v), message: 'Pattern' },
  merchantId: { ops: LIST_OPS, item: () => true, message: 'Invalid' },
  channel: { ops: LIST_OPS, item: (v) => (CHANNELS as readonly string[]).includes(v), message: 'Invalid' },
  amount: { ops: ORDER_OPS, item: () => false, single: (v) => new RegExp(AMOUNT_PATTERN).test(v), message: 'DecimalAmount' },
  currency: { ops: LIST_OPS, item: (v) => /^[A-Z]{3}$/.test(v), message: 'Pattern' },
  // A list holds ranges of the day ("22:00-06:00" crosses midnight); above / below compare with one time.
  localTime: { ops: ALL_OPS, item: (v) => TIME_RANGE.test(v), single: (v) => TIME.test(v), message: 'Pattern' },
};

/** Field errors of one condition, under `path` (`conditions.0`, `velocity.filters.1`). */
function conditionErrors(c: RuleCondition, path: string, objectName: string): FieldError[] {
  const g = GRAMMAR[c.attribute];
  const err = (field: string, message: string): FieldError => ({ field: `${path}.${field}`, message, objectName });
  if (!g.ops.includes(c.operation)) return [err('operation', 'Invalid')];
  if (LIST_OPS.includes(c.operation)) {
    if (c.value !== undefined) return [err('value', 'UnknownProperty')];
    if (c.values === undefined) return [err('values', 'NotNull')];
    return c.values.flatMap((v, i) => (g.item(v) ? [] : [err(`values.${i}`, g.message)]));
  }
  if (c.values !== undefined) return [err('values', 'UnknownProperty')];
  if (c.value === undefined) return [err('value', 'NotNull')];
  return (g.single ?? g.item)(c.value) ? [] : [err('value', g.message)];
}

/** The checks the schema cannot express: one kind, each condition's operation and spelling, a velocity's limits. */
export function definitionErrors(d: RuleDefinition, objectName: string, kind?: 'conditions' | 'velocity'): FieldError[] {
  const errors: FieldError[] = [];
  const has = { conditions: d.conditions !== undefined, velocity: d.velocity !== undefined };
  if (has.conditions && has.velocity) errors.push({ field: 'velocity', message: 'Invalid', objectName });
  else if (kind && ((kind === 'conditions' && has.velocity) || (kind === 'velocity' && has.conditions))) {
    // A rule keeps its kind across versions: a new kind is a new rule.
    errors.push({ field: kind === 'conditions' ? 'velocity' : 'conditions', message: 'Invalid', objectName });
  }
  d.conditions?.forEach((c, i) => errors.push(...conditionErrors(c, `conditions.${i}`, objectName)));
  if (d.velocity) {
    if (d.velocity.limitAmount === undefined && d.velocity.limitCount === undefined) errors.push({ field: 'velocity.limitAmount', message: 'NotNull', objectName });
    d.velocity.filters?.forEach((c, i) => errors.push(...conditionErrors(c, `velocity.filters.${i}`, objectName)));
  }
  return errors;
}

type Predicate = (f: RuleFacts) => boolean;

function compileCondition(c: RuleCondition): Predicate {
  const negate = c.operation === 'is-not-one-of';
  const list = (read: (f: RuleFacts) => string | null): Predicate => {
    const set = new Set(c.values);
    return (f) => {
      const v = read(f);
      // A merchant without an id is in no list.
      return (v !== null && set.has(v)) !== negate;
    };
  };
  const above = c.operation === 'above';
  switch (c.attribute) {
    case 'mcc':
      if (!ORDER_OPS.includes(c.operation)) return list((f) => f.mcc);
      return above ? (f) => Number(f.mcc) > Number(c.value) : (f) => Number(f.mcc) < Number(c.value);
    case 'merchantCountry':
      return list((f) => f.merchantCountry);
    case 'merchantId':
      return list((f) => f.merchantId);
    case 'channel':
      return list((f) => f.channel);
    case 'currency':
      return list((f) => f.currency);
    case 'amount': {
      const bound = toMinor(c.value!);
      return above ? (f) => f.amountMinor > bound : (f) => f.amountMinor < bound;
    }
    case 'localTime': {
      if (ORDER_OPS.includes(c.operation)) {
        const m = TIME.exec(c.value!)!;
        const bound = minutesOf(m[1]!, m[2]!);
        return above ? (f) => f.localMinutes > bound : (f) => f.localMinutes < bound;
      }
      // Start included, end excluded; a range whose end is not after its start crosses midnight.
      const ranges = c.values!.map((v) => {
        const m = TIME_RANGE.exec(v)!;
        return [minutesOf(m[1]!, m[2]!), minutesOf(m[3]!, m[4]!)] as const;
      });
      const inAny = (t: number) => ranges.some(([s, e]) => (s < e ? t >= s && t < e : t >= s || t < e));
      return (f) => inAny(f.localMinutes) !== negate;
    }
  }
}

const all = (ps: Predicate[]): Predicate => (f) => ps.every((p) => p(f));

export const WINDOW_SECONDS: Record<VelocityWindow, number> = { '1h': 3_600, '24h': 86_400, '7d': 604_800, '30d': 2_592_000 };
/** A window is kept in 60 buckets; a decision reads the bucket now and the 60 before it (decision 0332). */
export const BUCKETS_PER_WINDOW = 60;

export interface CompiledVelocity {
  spec: RuleVelocity;
  limitMinor: bigint | null;
  limitCount: number | null;
  bucketSeconds: number;
  /** Counters are shared by the versions of a rule that count the same thing (scope, window, filters). */
  counter: string;
  counts: Predicate;
}

/** A version ready to evaluate: conditions → `declines`; a velocity limit → what it counts and its limits. */
export interface CompiledRule {
  declineReason: DeclineReason | undefined;
  declines?: Predicate;
  velocity?: CompiledVelocity;
}

/** The counter a velocity definition keeps: a digest of what it counts. */
export function counterOf(v: RuleVelocity): string {
  const canonical = JSON.stringify([v.scope, v.window, (v.filters ?? []).map((c) => [c.attribute, c.operation, c.values ?? null, c.value ?? null])]);
  return createHash('sha256').update(canonical).digest('hex').slice(0, 16);
}

export function compileRule(d: RuleDefinition): CompiledRule {
  if (d.velocity) {
    const v = d.velocity;
    return {
      declineReason: d.declineReason,
      velocity: {
        spec: v,
        limitMinor: v.limitAmount === undefined ? null : toMinor(v.limitAmount),
        limitCount: v.limitCount ?? null,
        bucketSeconds: WINDOW_SECONDS[v.window] / BUCKETS_PER_WINDOW,
        counter: counterOf(v),
        counts: all((v.filters ?? []).map(compileCondition)),
      },
    };
  }
  return { declineReason: d.declineReason, declines: all((d.conditions ?? []).map(compileCondition)) };
}

/** The bucket an instant falls in, and the oldest bucket a decision at that instant counts. */
export function bucketsAt(at: Date, bucketSeconds: number): { bucket: number; oldest: number } {
  const bucket = Math.floor(at.getTime() / 1000 / bucketSeconds);
  return { bucket, oldest: bucket - BUCKETS_PER_WINDOW };
}

/** Whether one more authorization of `amountMinor` stays within the limit, given what the window holds; else why not. */
export function velocityVerdict(v: CompiledVelocity, totals: { amountMinor: bigint; count: number }, amountMinor: bigint): DeclineReason | null {
  if (v.limitMinor !== null && totals.amountMinor + amountMinor > v.limitMinor) return 'VELOCITY_AMOUNT_EXCEEDED';
  if (v.limitCount !== null && totals.count + 1 > v.limitCount) return 'VELOCITY_COUNT_EXCEEDED';
  return null;
}

const formatters = new Map<string, { f: Intl.DateTimeFormat; minute: number; value: number }>();
/** Minutes since midnight of the zone's wall clock at an instant (formatted once per zone and UTC minute: offsets are whole minutes). */
export function localMinutes(at: Date, timeZone: string): number {
  let z = formatters.get(timeZone);
  if (!z) {
    z = { f: new Intl.DateTimeFormat('en-GB', { timeZone, hourCycle: 'h23', hour: '2-digit', minute: '2-digit' }), minute: NaN, value: 0 };
    formatters.set(timeZone, z);
  }
  const minute = Math.floor(at.getTime() / 60_000);
  if (minute !== z.minute) {
    const parts = z.f.formatToParts(at);
    z.value = Number(parts.find((p) => p.type === 'hour')!.value) * 60 + Number(parts.find((p) => p.type === 'minute')!.value);
    z.minute = minute;
  }
  return z.value;
}
