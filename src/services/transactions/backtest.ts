// A backtest replays the stored authorizations of a range through one version of a rule, in time order, with
// velocity counters simulated in memory the way the step keeps them; it reads and writes nothing else.
import type { BacktestReport, RuleDefinition, RuleLevel } from '../../../schemas/auth-rules.js';
import type { DeclineReason } from '../../../schemas/transactions.js';
import { fromMinor } from '../../../connectors/shared/money.js';
import { bucketsAt, compileRule, localMinutes, velocityVerdict, WINDOW_SECONDS } from '../../domain/auth-rules.js';
import { Errors } from '../../errors.js';
import type { Queryable } from '../../store/db.js';
import type { AuthorizationMerchant } from '../../../schemas/authorizations.js';

/** The most authorizations one backtest replays: a longer range is refused, to be split. */
export const BACKTEST_MAX_AUTHORIZATIONS = 200_000;
const PAGE = 2_000;
const SAMPLES = 10;

interface Row {
  id: string;
  card_id: string;
  entity_id: string | null;
  status: 'APPROVED' | 'DECLINED';
  amount_minor: string;
  approved_minor: string;
  currency: string;
  merchant: AuthorizationMerchant;
  channel: string;
  created_at: Date | string;
}

export interface BacktestTarget {
  ruleId: string;
  version: number;
  level: RuleLevel;
  targetId: string;
  definition: RuleDefinition;
}

export async function backtest(db: Queryable, tenantId: string, timeZone: string, t: BacktestTarget, from: Date, to: Date): Promise<BacktestReport> {
  const rule = compileRule(t.definition);
  const v = rule.velocity;
  // A velocity limit starts the range with the window before it already counted, as the live counters would.
  const start = v ? new Date(from.getTime() - WINDOW_SECONDS[v.spec.window] * 1000) : from;
  const where =
    t.level === 'card' ? 'AND card_id = $4' : t.level === 'entity' ? 'AND entity_id = $4' : 'AND $4::text IS NULL';
  const buckets = new Map<string, Map<number, { amountMinor: bigint; count: number }>>();
  const declined = { count: 0, minor: 0n };
  const changed = { count: 0, minor: 0n };
  const byReason = new Map<DeclineReason, { count: number; minor: bigint }>();
  const samples: string[] = [];
  let evaluated = 0;
  let seen = 0;
  let after: { at: string; id: string } | null = null;
  for (;;) {
    const r: { rows: Row[] } = await db.query<Row>(
      `SELECT id, card_id, entity_id, status, amount_minor::text, approved_minor::text, currency, merchant, channel, created_at FROM authorizations
       WHERE tenant_id = $1 AND created_at >= $2 AND created_at < $3 ${where}
         AND ($5::timestamptz IS NULL OR (created_at, id) > ($5::timestamptz, $6::text))
       ORDER BY created_at, id LIMIT ${PAGE}`,
      [tenantId, start.toISOString(), to.toISOString(), t.level === 'tenant' ? null : t.targetId, after?.at ?? null, after?.id ?? null],
    );
    for (const a of r.rows) {
      if (++seen > BACKTEST_MAX_AUTHORIZATIONS) {
        throw Errors.badRequest(`The range holds more than ${BACKTEST_MAX_AUTHORIZATIONS} authorizations to replay; backtest a shorter range.`);
      }
      const at = new Date(a.created_at);
      const amountMinor = BigInt(a.amount_minor);
      const facts = {
        mcc: a.merchant.mcc,
        merchantCountry: a.merchant.country,
        merchantId: a.merchant.id ?? null,
        channel: a.channel,
        amountMinor,
        currency: a.currency,
        localMinutes: localMinutes(at, timeZone),
      };
      const inRange = at >= from;
      let reason: DeclineReason | null = null;
      if (v) {
        const scopeValue = v.spec.scope === 'card' ? a.card_id : a.entity_id;
        if (scopeValue === null || !v.counts(facts)) {
          if (inRange) evaluated++;
          continue;
        }
        const { bucket, oldest } = bucketsAt(at, v.bucketSeconds);
        let counter = buckets.get(scopeValue);
        if (!counter) buckets.set(scopeValue, (counter = new Map()));
        const totals = { amountMinor: 0n, count: 0 };
        for (const [b, c] of counter) {
          if (b < oldest) counter.delete(b);
          else {
            totals.amountMinor += c.amountMinor;
            totals.count += c.count;
          }
        }
        const verdict = inRange ? velocityVerdict(v, totals, amountMinor) : null;
        if (verdict) reason = rule.declineReason ?? verdict;
        // What the pipeline approved counts, unless this version would have declined it.
        else if (a.status === 'APPROVED') {
          const c = counter.get(bucket) ?? { amountMinor: 0n, count: 0 };
          counter.set(bucket, { amountMinor: c.amountMinor + BigInt(a.approved_minor), count: c.count + 1 });
        }
      } else if (rule.declines!(facts)) {
        reason = rule.declineReason ?? 'SPEND_CONTROL_DECLINED';
      }
      if (!inRange) continue;
      evaluated++;
      if (!reason) continue;
      declined.count++;
      declined.minor += amountMinor;
      if (a.status === 'APPROVED') {
        changed.count++;
        changed.minor += amountMinor;
      }
      const tally = byReason.get(reason) ?? { count: 0, minor: 0n };
      byReason.set(reason, { count: tally.count + 1, minor: tally.minor + amountMinor });
      if (samples.length < SAMPLES) samples.push(a.id);
    }
    if (r.rows.length < PAGE) break;
    const last = r.rows[r.rows.length - 1]!;
    after = { at: new Date(last.created_at).toISOString(), id: last.id };
  }
  return {
    ruleId: t.ruleId,
    version: t.version,
    from: from.toISOString(),
    to: to.toISOString(),
    evaluated,
    declined: { count: declined.count, amount: fromMinor(declined.minor) },
    approvedThenDeclined: { count: changed.count, amount: fromMinor(changed.minor) },
    byReason: [...byReason].map(([declineReason, x]) => ({ declineReason, count: x.count, amount: fromMinor(x.minor) })),
    sampleAuthorizationIds: samples,
  };
}
