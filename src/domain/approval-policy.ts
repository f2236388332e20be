// Four eyes: whether a tenant's approval policy holds a write, from the facts its operation states about itself
// (the limit a request sets and the current one; the role a user change gives). Decimal amounts are compared
// in minor units, never as floats.
import { toMinor } from '../../connectors/shared/money.js';
import type { ApprovalCondition, ApprovalPolicy } from '../../schemas/approvals.js';
import type { TenantConfig } from '../../schemas/tenant.js';

/** What an operation tells its policy about one request. */
export interface ApprovalFacts {
  /** credit-limit.upgrade: the limit the request sets. */
  newLimit?: string;
  /** credit-limit.upgrade: the entity's limit now (read from the core only when a condition needs it). */
  currentLimit?: string;
  /** user.create, user.update: the role the request gives (none: the update leaves the role alone). */
  role?: string;
}

/** The tenant's policy for an operation, if it has one. */
export const policyFor = (config: Pick<TenantConfig, 'approvals'>, operation: string): ApprovalPolicy | undefined =>
  config.approvals?.find((p) => p.operation === operation);

/** Whether a condition needs the current limit (a read of the core before deciding). */
export const needsCurrentLimit = (when: ApprovalCondition | undefined): boolean => when?.increaseAbove !== undefined || when?.increasePercentAbove !== undefined;

/** Whether the policy holds a request with these facts: no condition holds every call; otherwise any condition that holds does. */
export function policyHolds(when: ApprovalCondition | undefined, facts: ApprovalFacts): boolean {
  if (!when) return true;
  const next = facts.newLimit !== undefined ? toMinor(facts.newLimit) : undefined;
  const current = facts.currentLimit !== undefined ? toMinor(facts.currentLimit) : undefined;
  if (when.newLimitAbove !== undefined && next !== undefined && next > toMinor(when.newLimitAbove)) return true;
  if (next !== undefined && current !== undefined) {
    const increase = next - current;
    if (when.increaseAbove !== undefined && increase > toMinor(when.increaseAbove)) return true;
    // increase / current > pct / 100, without division: a limit raised from zero is an infinite increase.
    if (when.increasePercentAbove !== undefined && increase > 0n && increase * 100n > BigInt(when.increasePercentAbove) * current) return true;
  }
  if (when.roles !== undefined && facts.role !== undefined && (when.roles as readonly string[]).includes(facts.role)) return true;
  return false;
}
