// The tenant's product rules for credit lines (DESIGN §3), interpreted in this one place: what the gateway
// can decide alone (the maximum) it refuses here; what needs the current limit (a decrease) it hands to the
// core as the input of the change, which the core checks atomically against the limit it holds.
import type { UpgradeLimitInput } from '../../connectors/contract.js';
import { toMinor } from '../../connectors/shared/money.js';
import { Errors } from '../errors.js';
import type { TenantConfig } from '../../schemas/tenant.js';

/** The part of a tenant these rules read: its configuration. */
type Tenant = { config: Pick<TenantConfig, 'creditLimit'> };

/** Refuses a limit above the product maximum (LIMIT_ABOVE_MAXIMUM). */
export function checkCreditLimit(tenant: Tenant, amount: string): void {
  const { maximum } = tenant.config.creditLimit;
  if (toMinor(amount) > toMinor(maximum)) {
    throw Errors.business('LIMIT_ABOVE_MAXIMUM', `The amount ${amount} exceeds the product maximum of ${maximum}.`);
  }
}

/** The core's input for setting an entity's limit to `amount` under the tenant's rules. */
export function creditLimitChange(tenant: Tenant, entityId: string, amount: string): UpgradeLimitInput {
  checkCreditLimit(tenant, amount);
  return { entityId, amount, allowDecrease: tenant.config.creditLimit.allowDecrease };
}
