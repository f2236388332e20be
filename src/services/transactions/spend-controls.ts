// The spend-control step's engine (decision 0332): evaluates the rules an authorization meets, conditions first,
// then velocity limits against counters kept in buckets, so a decision reads at most 61 rows per counter and never
// the transaction history. A velocity check and its count are one statement under the counters' locks (decision
// 0358, the store's cardline_velocity_count): parallel authorizations on one card take turns and never pass a limit
// together.
import type { RuleEvaluation } from '../../../schemas/auth-rules.js';
import type { StepRecord } from '../../../schemas/authorizations.js';
import type { DeclineReason } from '../../../schemas/transactions.js';
import { BUCKETS_PER_WINDOW, bucketsAt, compileRule, localMinutes, velocityVerdict, type CompiledRule, type CompiledVelocity, type RuleFacts } from '../../domain/auth-rules.js';
import type { Db, Queryable } from '../../store/db.js';
import type { AuthRuleStore, LoadedRule } from './auth-rules.js';

/** What the step needs of an authorization. */
export interface SpendAsk {
  cardId: string;
  amountMinor: bigint;
  currency: string;
  merchant: { mcc: string; country: string; id?: string };
  channel: string;
  at: Date;
}

/** The step's record; `settle` counts what was approved, releases the rest, and names the buckets it stays in (0354). */
export interface SpendDecision {
  record: StepRecord;
  settle: (approvedMinor: bigint) => Promise<VelocityCount[]>;
}

/** A counter's bucket an authorization was counted in. */
export interface VelocityCount {
  ruleId: string;
  counter: string;
  scopeValue: string;
  bucket: number;
}

/** A count added to a bucket by this authorization, to be taken back if it is not approved in full. */
interface Reservation extends VelocityCount {
  amountMinor: bigint;
}

const DEFAULT_REASON: DeclineReason = 'SPEND_CONTROL_DECLINED';
const COMPILED_MAX = 10_000;

const nothingToSettle = async (): Promise<VelocityCount[]> => [];

/** A rule list made ready once: the cached tenant list is the same array until a change, so per tenant, not per request. */
interface Plan {
  versions: { rule: LoadedRule; mode: 'active' | 'shadow'; version: number; compiled: CompiledRule; key: string }[];
  entityScoped: boolean;
}

export class SpendControls {
  /** Versions never change: each is compiled once (bounded: cleared when full). */
  private readonly compiled = new Map<string, CompiledRule>();
  private readonly plans = new WeakMap<readonly LoadedRule[], Plan>();

  constructor(
    private readonly db: Db,
    private readonly rules: AuthRuleStore,
  ) {}

  private compile(ruleId: string, version: number, definition: LoadedRule['versions'][number]['definition']): CompiledRule {
    const key = `${ruleId}:${version}`;
    let c = this.compiled.get(key);
    if (!c) {
      if (this.compiled.size >= COMPILED_MAX) this.compiled.clear();
      c = compileRule(definition);
      this.compiled.set(key, c);
    }
    return c;
  }

  private plan(rules: readonly LoadedRule[]): Plan {
    let p = this.plans.get(rules);
    if (!p) {
      const versions = rules.flatMap((rule) =>
        rule.versions.map(({ mode, version, definition }) => {
          const compiled = this.compile(rule.id, version, definition);
          return { rule, mode, version, compiled, key: compiled.velocity ? `${rule.id}|${compiled.velocity.counter}|` : '' };
        }),
      );
      p = { versions, entityScoped: versions.some((v) => v.compiled.velocity?.spec.scope === 'entity') };
      this.plans.set(rules, p);
    }
    return p;
  }

  /**
   * Decides the step. `entityOf` reads the card's entity (free where the card-state step already read the card);
   * it is called only when a rule needs it.
   */
  async decide(tenantId: string, timeZone: string, ask: SpendAsk, entityOf: () => Promise<string>): Promise<SpendDecision> {
    let entityId: string | null = null;
    const first = await this.rules.forAuthorization(tenantId, ask.cardId, null);
    const { entityRules } = first;
    let { rules } = first;
    if (entityRules || this.plan(rules).entityScoped) {
      entityId = await entityOf();
      if (entityRules) rules = (await this.rules.forAuthorization(tenantId, ask.cardId, entityId)).rules;
    }
    if (rules.length === 0) return { record: { step: 'spend-controls', outcome: 'skipped', detail: 'no rules' }, settle: nothingToSettle };

    const facts: RuleFacts = {
      mcc: ask.merchant.mcc,
      merchantCountry: ask.merchant.country,
      merchantId: ask.merchant.id ?? null,
      channel: ask.channel,
      amountMinor: ask.amountMinor,
      currency: ask.currency,
      localMinutes: localMinutes(ask.at, timeZone),
    };
    const evaluations: RuleEvaluation[] = [];
    let declined: { rule: LoadedRule; version: number; reason: DeclineReason } | null = null;
    const velocities: { rule: LoadedRule; mode: 'active' | 'shadow'; version: number; compiled: CompiledRule; v: CompiledVelocity; key: string }[] = [];

    // Conditions first: cheap, and a decline there spares the counters.
    for (const { rule, mode, version, compiled, key } of this.plan(rules).versions) {
      const v = compiled.velocity;
      if (v) {
        if (v.counts(facts)) velocities.push({ rule, mode, version, compiled, v, key: key + (v.spec.scope === 'card' ? ask.cardId : entityId!) });
        else evaluations.push({ ruleId: rule.id, version, mode, outcome: 'approved' });
        continue;
      }
      const hit = compiled.declines!(facts);
      const reason = compiled.declineReason ?? DEFAULT_REASON;
      evaluations.push({ ruleId: rule.id, version, mode, outcome: hit ? 'declined' : 'approved', ...(hit ? { declineReason: reason } : {}) });
      if (hit && mode === 'active' && !declined) declined = { rule, version, reason };
    }

    let reservations: Reservation[] = [];
    if (!declined && velocities.length > 0) {
      // One counter per rule and thing counted: an active and a shadow version counting the same share it.
      const counters = new Map<string, { c: Reservation; oldest: number; limit: { amount: bigint | null; count: number | null } }>();
      for (const { rule, mode, v, key } of velocities) {
        let w = counters.get(key);
        if (!w) {
          const { bucket, oldest } = bucketsAt(ask.at, v.bucketSeconds);
          const scopeValue = v.spec.scope === 'card' ? ask.cardId : entityId!;
          w = { c: { ruleId: rule.id, counter: v.counter, scopeValue, bucket, amountMinor: ask.amountMinor }, oldest, limit: { amount: null, count: null } };
          counters.set(key, w);
        }
        if (mode !== 'active') continue;
        const l = w.limit;
        if (v.limitMinor !== null && (l.amount === null || v.limitMinor < l.amount)) l.amount = v.limitMinor;
        if (v.limitCount !== null && (l.count === null || v.limitCount < l.count)) l.count = v.limitCount;
      }
      // One round trip (decision 0358): the counters locked in one global order (the key's), so two authorizations
      // needing the same counters never deadlock; counted only when no active limit is passed.
      const keys = [...counters.keys()].sort();
      const windows = keys.map((key) => counters.get(key)!);
      const r = await this.db.query<{ total_amount: string; total_count: string; counted: boolean }>(
        `SELECT total_amount::text, total_count::text, counted FROM cardline_velocity_count($1, $2::uuid[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint, $8::bigint[], $9::integer[], $10)`,
        [
          tenantId,
          windows.map((w) => w.c.ruleId),
          windows.map((w) => w.c.counter),
          windows.map((w) => w.c.scopeValue),
          windows.map((w) => String(w.c.bucket)),
          windows.map((w) => String(w.oldest)),
          ask.amountMinor.toString(),
          windows.map((w) => (w.limit.amount === null ? null : w.limit.amount.toString())),
          windows.map((w) => w.limit.count),
          BUCKETS_PER_WINDOW,
        ],
        { name: 'auth-rule-counters-count' },
      );
      const totals = new Map(keys.map((key, i) => [key, { amountMinor: BigInt(r.rows[i]!.total_amount), count: Number(r.rows[i]!.total_count) }]));
      for (const { rule, mode, version, compiled, v, key } of velocities) {
        const verdict = velocityVerdict(v, totals.get(key)!, ask.amountMinor);
        const reason = compiled.declineReason ?? verdict ?? undefined;
        evaluations.push({ ruleId: rule.id, version, mode, outcome: verdict ? 'declined' : 'approved', ...(verdict ? { declineReason: reason } : {}) });
        if (verdict && mode === 'active' && !declined) declined = { rule, version, reason: reason! };
      }
      if (r.rows[0]?.counted) reservations = [...counters.values()].map((w) => w.c);
    }

    const decided = declined as { rule: LoadedRule; version: number; reason: DeclineReason } | null;
    const record: StepRecord = decided
      ? {
          step: 'spend-controls',
          outcome: 'declined',
          declineReason: decided.reason,
          ruleId: decided.rule.id,
          detail: `declined by rule '${decided.rule.name.slice(0, 120)}' (version ${decided.version})`,
          rules: evaluations,
        }
      : { step: 'spend-controls', outcome: 'approved', rules: evaluations };
    return { record, settle: reservations.length ? (approved) => this.settle(tenantId, reservations, approved) : nothingToSettle };
  }

  /** Takes back what was counted beyond what the pipeline approved (all of it, and the count, on a decline). */
  private async settle(tenantId: string, reservations: Reservation[], approvedMinor: bigint): Promise<VelocityCount[]> {
    for (const r of reservations) {
      const amount = r.amountMinor - approvedMinor;
      const count = approvedMinor === 0n ? 1 : 0;
      if (amount === 0n && count === 0) continue;
      try {
        await release(this.db, tenantId, r, amount, count);
      } catch {
        // A count not taken back only makes the limit stricter until its bucket leaves the window.
      }
    }
    return approvedMinor === 0n ? [] : reservations.map(({ ruleId, counter, scopeValue, bucket }) => ({ ruleId, counter, scopeValue, bucket }));
  }
}

/**
 * Gives back what a reversal or a final clearing's release took off a hold, and the count once nothing is held
 * (decision 0354); never below zero. Without the counter's lock: a check meanwhile only sees a stricter figure.
 */
export async function giveBack(q: Queryable, tenantId: string, counts: readonly VelocityCount[], amountMinor: bigint, count: 0 | 1): Promise<void> {
  if (amountMinor === 0n && count === 0) return;
  for (const c of counts) await release(q, tenantId, c, amountMinor, count);
}

/** Takes an amount and a count off one bucket, never below zero. */
async function release(q: Queryable, tenantId: string, c: VelocityCount, amountMinor: bigint, count: number): Promise<void> {
  await q.query(
    `UPDATE auth_rule_counters SET amount_minor = GREATEST(amount_minor - $6::bigint, 0), count = GREATEST(count - $7, 0)
     WHERE tenant_id = $1 AND rule_id = $2::uuid AND counter = $3 AND scope_value = $4 AND bucket = $5`,
    [tenantId, c.ruleId, c.counter, c.scopeValue, c.bucket, amountMinor.toString(), count],
    { name: 'auth-rule-counters-release' },
  );
}
