// The spend-control step's engine (decision 0332): evaluates the rules an authorization meets, conditions first,
// then velocity limits against counters kept in buckets, so a decision reads at most 61 rows per counter and never
// the transaction history. A velocity check and its count are one statement under the counters' locks (decision
// 0358): parallel authorizations on one card take turns and never pass a limit together. Where a counter has room,
// that statement also reserves a share of it for this process, spent here without a round trip (decision 0398).
import type { RuleEvaluation } from '../../../schemas/auth-rules.js';
import type { TrailStep } from '../../store/authorization-trail.js';
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
  record: TrailStep;
  settle: (approvedMinor: bigint) => VelocityCount[] | Promise<VelocityCount[]>;
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
  /** Spent from this process's grant: given back to it while it stands. */
  grant?: Grant;
}

/**
 * A share of a counter's room in one bucket, counted in the store as spent and reserved for this process (decision
 * 0398): spent here without a round trip while its limits are the ones it was sized against, and what is left of it
 * given back to the store when it idles, its bucket passes, or the process closes. `done`: its rest is given back.
 */
interface Grant {
  tenantId: string;
  ruleId: string;
  counter: string;
  scopeValue: string;
  bucket: number;
  bucketSeconds: number;
  limitAmount: bigint | null;
  limitCount: number | null;
  amountLeft: bigint;
  countLeft: number;
  usedAt: number;
  done: boolean;
}

/** Authorizations a grant covers at most (of the amount that took it), and the share of the room left it takes at most. */
const GRANT_COUNT = 128;
const GRANT_SHARE = 16;
const GRANT_IDLE_MS = 1_000;

/** Whether a grant was sized in this bucket against these active limits (else it is not spent, nor added to). */
const sameTerms = (g: Grant, bucket: number, limit: { amount: bigint | null; count: number | null }): boolean =>
  g.bucket === bucket && g.limitAmount === limit.amount && g.limitCount === limit.count;

/** A counter an authorization meets: its bucket of now, its window's oldest bucket, the tightest active limits. */
interface Counter {
  c: Reservation;
  oldest: number;
  bucketSeconds: number;
  shadow: boolean;
  limit: { amount: bigint | null; count: number | null };
}

/** One authorization's counters to count in the store (`keys`: the counters' keys, sorted), and the grants it gives back. */
interface TakeCall {
  keys: string[];
  windows: Counter[];
  amountMinor: bigint;
  back: (Grant | undefined)[];
}

/** Per counter: its window before this authorization, whether the authorization was counted, and the grant taken. */
interface TakeRow {
  total_amount: string;
  total_count: string;
  counted: boolean;
  grant_amount: string;
  grant_count: number;
}

interface Waiting extends TakeCall {
  resolve: (rows: TakeRow[]) => void;
  reject: (err: unknown) => void;
}

/** Authorizations of a tenant counted by one call at most. */
const TAKE_GROUP_MAX = 64;

const DEFAULT_REASON: DeclineReason = 'SPEND_CONTROL_DECLINED';
const COMPILED_MAX = 10_000;

const nothingToSettle = (): VelocityCount[] => [];

/** A rule list made ready once per tenant; `id`: a version's approval as stored; `allApproved`: the step when all approve (0443). */
interface Plan {
  versions: { rule: LoadedRule; mode: 'active' | 'shadow'; version: number; compiled: CompiledRule; key: string; id: string }[];
  entityScoped: boolean;
  velocities: number;
  allApproved: TrailStep;
}

export class SpendControls {
  /** Versions never change: each is compiled once (bounded: cleared when full). */
  private readonly compiled = new Map<string, CompiledRule>();
  private readonly plans = new WeakMap<readonly LoadedRule[], Plan>();
  /** This process's grants, by tenant and counter key; superseded ones wait in `spent` to give their rest back. */
  private readonly grants = new Map<string, Grant>();
  private spent: Grant[] = [];
  /** Per tenant with a velocity call under way: the authorizations waiting for the next one. */
  private readonly waiting = new Map<string, Waiting[]>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly rules: AuthRuleStore,
  ) {
    this.timer = setInterval(() => void this.giveBackIdle(false), GRANT_IDLE_MS);
    this.timer.unref();
  }

  /** Gives back every grant's rest (the process is closing). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.giveBackIdle(true);
  }

  /** Gives back the rest of the grants idle for a while or whose bucket passed (all of them with `all`). */
  private giveBackIdle(all: boolean): Promise<void> {
    const now = Date.now();
    for (const [k, g] of this.grants) {
      if (all || now - g.usedAt >= GRANT_IDLE_MS || bucketsAt(new Date(now), g.bucketSeconds).bucket !== g.bucket) {
        this.grants.delete(k);
        this.spent.push(g);
      }
    }
    const rest = this.spent.splice(0).filter((g) => !g.done);
    for (const g of rest) g.done = true;
    if (rest.length === 0) return this.flushing;
    this.flushing = this.flushing.then(() => giveBackRest(this.db, rest)).catch(() => {
      // Not given back: the counter stays stricter until the bucket leaves its window, never looser.
    });
    return this.flushing;
  }

  /** Takes a counter's grant off the table (its rest to be given back by the statement at hand). */
  private takeGrant(k: string): Grant | undefined {
    const g = this.grants.get(k);
    if (!g) return undefined;
    this.grants.delete(k);
    g.done = true;
    return g;
  }

  private install(k: string, g: Grant): void {
    const old = this.grants.get(k);
    if (old && sameTerms(old, g.bucket, { amount: g.limitAmount, count: g.limitCount })) {
      old.amountLeft += g.amountLeft;
      old.countLeft += g.countLeft;
      old.usedAt = g.usedAt;
      return;
    }
    if (old) this.spent.push(old);
    this.grants.set(k, g);
  }

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
          const id = mode === 'active' ? `${rule.id}:${version}` : `${rule.id}:${version}:shadow`;
          return { rule, mode, version, compiled, key: compiled.velocity ? `${rule.id}|${compiled.velocity.counter}|` : '', id };
        }),
      );
      const ids = [...versions.filter((v) => !v.compiled.velocity), ...versions.filter((v) => v.compiled.velocity)].map((v) => v.id);
      const allApproved = Object.freeze({ step: 'spend-controls' as const, outcome: 'approved' as const, evaluated: ids.length, approvedVersions: ids.join(' ') });
      const velocities = versions.filter((v) => v.compiled.velocity).length;
      p = { versions, entityScoped: versions.some((v) => v.compiled.velocity?.spec.scope === 'entity'), velocities, allApproved };
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
    const plan = this.plan(rules);
    const approved: string[] = [];
    const declines: RuleEvaluation[] = [];
    let declined: { rule: LoadedRule; version: number; reason: DeclineReason } | null = null;
    const velocities: { rule: LoadedRule; mode: 'active' | 'shadow'; version: number; compiled: CompiledRule; v: CompiledVelocity; key: string; id: string }[] = [];

    // Conditions first: cheap, and a decline there spares the counters.
    for (const { rule, mode, version, compiled, key, id } of plan.versions) {
      const v = compiled.velocity;
      if (v) {
        if (v.counts(facts)) velocities.push({ rule, mode, version, compiled, v, key: key + (v.spec.scope === 'card' ? ask.cardId : entityId!), id });
        else approved.push(id);
        continue;
      }
      if (!compiled.declines!(facts)) {
        approved.push(id);
        continue;
      }
      const reason = compiled.declineReason ?? DEFAULT_REASON;
      declines.push({ ruleId: rule.id, version, mode, outcome: 'declined', declineReason: reason });
      if (mode === 'active' && !declined) declined = { rule, version, reason };
    }

    let reservations: Reservation[] = [];
    if (!declined && velocities.length > 0) {
      // One counter per rule and thing counted: an active and a shadow version counting the same share it.
      const counters = new Map<string, Counter>();
      for (const { rule, mode, v, key } of velocities) {
        let w = counters.get(key);
        if (!w) {
          const { bucket, oldest } = bucketsAt(ask.at, v.bucketSeconds);
          const scopeValue = v.spec.scope === 'card' ? ask.cardId : entityId!;
          w = { c: { ruleId: rule.id, counter: v.counter, scopeValue, bucket, amountMinor: ask.amountMinor }, oldest, bucketSeconds: v.bucketSeconds, shadow: false, limit: { amount: null, count: null } };
          counters.set(key, w);
        }
        if (mode !== 'active') {
          w.shadow = true;
          continue;
        }
        const l = w.limit;
        if (v.limitMinor !== null && (l.amount === null || v.limitMinor < l.amount)) l.amount = v.limitMinor;
        if (v.limitCount !== null && (l.count === null || v.limitCount < l.count)) l.count = v.limitCount;
      }
      // A counter whose grant covers this amount is spent here (a shadow version needs the window's figures: never);
      // the others go to the store in one round trip (decision 0358): locked in one global order (the key's), so
      // two authorizations needing the same counters never deadlock, counted only when no active limit is passed.
      const now = Date.now();
      const keys = [...counters.keys()].sort();
      const remote: string[] = [];
      const local: Reservation[] = [];
      for (const key of keys) {
        const w = counters.get(key)!;
        const g = w.shadow ? undefined : this.grants.get(`${tenantId}|${key}`);
        if (g && sameTerms(g, w.c.bucket, w.limit) && g.amountLeft >= ask.amountMinor && g.countLeft >= 1) {
          g.amountLeft -= ask.amountMinor;
          g.countLeft -= 1;
          g.usedAt = now;
          w.c.grant = g;
          local.push(w.c);
        } else remote.push(key);
      }
      let totals = new Map<string, { amountMinor: bigint; count: number }>();
      let counted = true;
      if (remote.length > 0) {
        const windows = remote.map((key) => counters.get(key)!);
        const back = remote.map((key) => (counters.get(key)!.shadow ? undefined : this.takeGrant(`${tenantId}|${key}`)));
        let rows: TakeRow[];
        try {
          rows = await this.take(tenantId, { keys: remote, windows, amountMinor: ask.amountMinor, back });
        } catch (err) {
          // What this statement would have given back stays reserved (stricter until it leaves the window).
          await this.giveBackSpent(tenantId, local, ask.amountMinor, 1);
          throw err;
        }
        totals = new Map(remote.map((key, i) => [key, { amountMinor: BigInt(rows[i]!.total_amount), count: Number(rows[i]!.total_count) }]));
        counted = rows[0]?.counted === true;
        if (counted) {
          for (const [i, key] of remote.entries()) {
            const row = rows[i]!;
            const w = counters.get(key)!;
            if (row.grant_count > 0)
              this.install(`${tenantId}|${key}`, {
                tenantId,
                ruleId: w.c.ruleId,
                counter: w.c.counter,
                scopeValue: w.c.scopeValue,
                bucket: w.c.bucket,
                bucketSeconds: w.bucketSeconds,
                limitAmount: w.limit.amount,
                limitCount: w.limit.count,
                amountLeft: BigInt(row.grant_amount),
                countLeft: row.grant_count,
                usedAt: now,
                done: false,
              });
          }
        } else await this.giveBackSpent(tenantId, local, ask.amountMinor, 1);
      }
      for (const { rule, mode, version, compiled, v, key, id } of velocities) {
        const t = totals.get(key);
        // A counter spent from its grant fits: the grant was room under these limits.
        const verdict = t ? velocityVerdict(v, t, ask.amountMinor) : null;
        if (!verdict) {
          approved.push(id);
          continue;
        }
        const reason = compiled.declineReason ?? verdict;
        declines.push({ ruleId: rule.id, version, mode, outcome: 'declined', declineReason: reason });
        if (mode === 'active' && !declined) declined = { rule, version, reason };
      }
      if (counted) reservations = keys.map((key) => counters.get(key)!.c);
    }

    const decided = declined as { rule: LoadedRule; version: number; reason: DeclineReason } | null;
    const evaluated = approved.length + declines.length;
    const record: TrailStep = decided
      ? {
          step: 'spend-controls',
          outcome: 'declined',
          declineReason: decided.reason,
          ruleId: decided.rule.id,
          detail: `declined by rule '${decided.rule.name.slice(0, 120)}' (version ${decided.version})`,
          evaluated,
          rules: declines,
          approvedVersions: approved.join(' '),
        }
      : declines.length > 0 || velocities.length < plan.velocities
        ? { step: 'spend-controls', outcome: 'approved', evaluated, ...(declines.length > 0 ? { rules: declines } : {}), approvedVersions: approved.join(' ') }
        : plan.allApproved;
    return { record, settle: reservations.length ? (approved) => this.settle(tenantId, reservations, approved) : nothingToSettle };
  }

  /**
   * Counts an authorization's counters in the store: at once when no call of its tenant is under way, else with the
   * others waiting for it, in one call (decision 0440).
   */
  private take(tenantId: string, call: TakeCall): Promise<TakeRow[]> {
    return new Promise((resolve, reject) => {
      const queue = this.waiting.get(tenantId);
      const w: Waiting = { keys: call.keys, windows: call.windows, amountMinor: call.amountMinor, back: call.back, resolve, reject };
      if (queue) queue.push(w);
      else {
        this.waiting.set(tenantId, [w]);
        void this.drain(tenantId);
      }
    });
  }

  private async drain(tenantId: string): Promise<void> {
    const queue = this.waiting.get(tenantId)!;
    while (queue.length > 0) {
      const group = queue.splice(0, TAKE_GROUP_MAX);
      if (group.length === 1) {
        await takeOne(this.db, tenantId, group[0]!).then(group[0]!.resolve, group[0]!.reject);
        continue;
      }
      let rows: TakeRow[] | null = null;
      try {
        rows = await takeMany(this.db, tenantId, group);
      } catch {
        // Each alone, its give-backs left reserved: a group whose answer was lost after its commit counts twice, stricter only.
      }
      if (!rows) {
        // Alone and side by side, as before groups: each call locks its counters in the same order.
        await Promise.all(group.map((w) => takeOne(this.db, tenantId, { ...w, back: w.back.map(() => undefined) }).then(w.resolve, w.reject)));
        continue;
      }
      let at = 0;
      for (const w of group) w.resolve(rows.slice(at, (at += w.keys.length)));
    }
    this.waiting.delete(tenantId);
  }

  /** Gives an amount and a count back to the grant it was spent from while it stands, else to the store's bucket. */
  private async giveBackSpent(tenantId: string, spent: Reservation[], amountMinor: bigint, count: number): Promise<void> {
    for (const r of spent) {
      if (r.grant && !r.grant.done) {
        r.grant.amountLeft += amountMinor;
        r.grant.countLeft += count;
        continue;
      }
      try {
        await release(this.db, tenantId, r, amountMinor, count);
      } catch {
        // A count not taken back only makes the limit stricter until its bucket leaves the window.
      }
    }
  }

  /** Takes back what was counted beyond what the pipeline approved (all of it, and the count, on a decline). */
  private settle(tenantId: string, reservations: Reservation[], approvedMinor: bigint): VelocityCount[] | Promise<VelocityCount[]> {
    const counted = approvedMinor === 0n ? [] : reservations.map(({ ruleId, counter, scopeValue, bucket }) => ({ ruleId, counter, scopeValue, bucket }));
    // Approved in full (nearly always): nothing to give back, and no promise turn.
    return approvedMinor > 0n && reservations.every((r) => r.amountMinor === approvedMinor) ? counted : this.giveBackUnheld(tenantId, reservations, approvedMinor).then(() => counted);
  }

  private async giveBackUnheld(tenantId: string, reservations: Reservation[], approvedMinor: bigint): Promise<void> {
    for (const r of reservations) {
      const amount = r.amountMinor - approvedMinor;
      const count = approvedMinor === 0n ? 1 : 0;
      if (amount === 0n && count === 0) continue;
      await this.giveBackSpent(tenantId, [r], amount, count);
    }
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

/** One authorization's check and count (decision 0398). */
async function takeOne(db: Queryable, tenantId: string, call: TakeCall): Promise<TakeRow[]> {
  const { windows, back } = call;
  const r = await db.query<TakeRow>(
    `SELECT total_amount::text, total_count::text, counted, grant_amount::text, grant_count FROM cardline_velocity_take($1, $2::uuid[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint, $8::bigint[], $9::integer[], $10, $11::boolean[], $12, $13, $14::bigint[], $15::bigint[], $16::integer[])`,
    [
      tenantId,
      windows.map((w) => w.c.ruleId),
      windows.map((w) => w.c.counter),
      windows.map((w) => w.c.scopeValue),
      windows.map((w) => String(w.c.bucket)),
      windows.map((w) => String(w.oldest)),
      call.amountMinor.toString(),
      windows.map((w) => (w.limit.amount === null ? null : w.limit.amount.toString())),
      windows.map((w) => w.limit.count),
      BUCKETS_PER_WINDOW,
      windows.map((w) => !w.shadow),
      GRANT_COUNT,
      GRANT_SHARE,
      back.map((g) => (g ? String(g.bucket) : null)),
      back.map((g) => (g ? g.amountLeft.toString() : null)),
      back.map((g) => (g ? g.countLeft : null)),
    ],
    { name: 'auth-rule-counters-take' },
  );
  return r.rows;
}

/**
 * A group's checks and counts in one call: every counter of the group locked first, in the keys' order (the same
 * global order as one authorization's), then each authorization in turn. A counter's grant goes to its first.
 */
async function takeMany(db: Queryable, tenantId: string, group: readonly TakeCall[]): Promise<TakeRow[]> {
  const locks = new Map<string, Counter>();
  const rows: { auth: number; w: Counter; amount: string; grant: boolean; back: Grant | undefined }[] = [];
  for (const [i, call] of group.entries()) {
    const amount = call.amountMinor.toString();
    for (const [j, key] of call.keys.entries()) {
      const w = call.windows[j]!;
      rows.push({ auth: i + 1, w, amount, grant: !w.shadow && !locks.has(key), back: call.back[j] });
      locks.set(key, w);
    }
  }
  const order = [...locks.keys()].sort().map((key) => locks.get(key)!.c);
  const r = await db.query<TakeRow>(
    `SELECT total_amount::text, total_count::text, counted, grant_amount::text, grant_count FROM cardline_velocity_take_many($1, $2::uuid[], $3::text[], $4::text[], $5::integer[], $6::uuid[], $7::text[], $8::text[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[], $13::integer[], $14, $15::boolean[], $16, $17, $18::bigint[], $19::bigint[], $20::integer[])`,
    [
      tenantId,
      order.map((c) => c.ruleId),
      order.map((c) => c.counter),
      order.map((c) => c.scopeValue),
      rows.map((x) => x.auth),
      rows.map((x) => x.w.c.ruleId),
      rows.map((x) => x.w.c.counter),
      rows.map((x) => x.w.c.scopeValue),
      rows.map((x) => String(x.w.c.bucket)),
      rows.map((x) => String(x.w.oldest)),
      rows.map((x) => x.amount),
      rows.map((x) => (x.w.limit.amount === null ? null : x.w.limit.amount.toString())),
      rows.map((x) => x.w.limit.count),
      BUCKETS_PER_WINDOW,
      rows.map((x) => x.grant),
      GRANT_COUNT,
      GRANT_SHARE,
      rows.map((x) => (x.back ? String(x.back.bucket) : null)),
      rows.map((x) => (x.back ? x.back.amountLeft.toString() : null)),
      rows.map((x) => (x.back ? x.back.countLeft : null)),
    ],
    { name: 'auth-rule-counters-take-many' },
  );
  if (r.rows.length !== rows.length) throw new Error(`velocity group: ${r.rows.length} rows for ${rows.length} counters`);
  return r.rows;
}

/** Gives the rest of grants back to their buckets, one statement per tenant (rows summed: an update changes a row once). */
async function giveBackRest(q: Queryable, grants: readonly Grant[]): Promise<void> {
  const byTenant = new Map<string, Map<string, { g: Grant; amount: bigint; count: number }>>();
  for (const g of grants) {
    const rows = byTenant.get(g.tenantId) ?? byTenant.set(g.tenantId, new Map()).get(g.tenantId)!;
    const k = `${g.ruleId}|${g.counter}|${g.scopeValue}|${g.bucket}`;
    const row = rows.get(k);
    if (row) {
      row.amount += g.amountLeft;
      row.count += g.countLeft;
    } else rows.set(k, { g, amount: g.amountLeft, count: g.countLeft });
  }
  for (const [tenantId, rows] of byTenant) {
    const list = [...rows.values()];
    await q.query(
      `UPDATE auth_rule_counters x SET amount_minor = GREATEST(x.amount_minor - u.a, 0), count = GREATEST(x.count - u.n, 0)
         FROM unnest($2::uuid[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::integer[]) AS u(r, c, s, b, a, n)
        WHERE x.tenant_id = $1 AND x.rule_id = u.r AND x.counter = u.c AND x.scope_value = u.s AND x.bucket = u.b`,
      [
        tenantId,
        list.map((r) => r.g.ruleId),
        list.map((r) => r.g.counter),
        list.map((r) => r.g.scopeValue),
        list.map((r) => String(r.g.bucket)),
        list.map((r) => r.amount.toString()),
        list.map((r) => r.count),
      ],
      { name: 'auth-rule-counters-give-back-grants' },
    );
  }
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
