// Onboarding: a tenant row with its first encryption and signing key pairs, in one transaction.
import type { Role } from '../../schemas/common.js';
import { DEMO_PIN_CONFIG, seedDemoPinKeys } from '../crypto/hsm/demo.js';
import type { HsmProvider } from '../crypto/hsm/index.js';
import type { KeyRing } from '../crypto/keys.js';
import type { Db } from '../store/db.js';
import type { ConnectorService } from './connectors.js';
import type { Tenant, TenantService } from './tenants.js';
import type { UserService } from './users.js';

export interface OnboardingDeps {
  db: Db;
  tenants: TenantService;
  keys: KeyRing;
  users: UserService;
  connectors?: ConnectorService;
  /** When given, the demo tenants get PIN keys (src/crypto/hsm/demo.ts) and a pin configuration. */
  hsm?: HsmProvider | undefined;
}

export async function createTenant(deps: OnboardingDeps, input: { id: string; name?: string; config?: unknown }): Promise<Tenant> {
  const tenant = await deps.db.transaction(async (tx) => {
    const t = await deps.tenants.create(input, tx);
    // Loads the connector's module when it names one, and checks the options (errors name the field).
    await deps.connectors?.prepare(t.id, t.config.connector);
    await deps.keys.create(t.id, 'enc', tx);
    await deps.keys.create(t.id, 'sig', tx);
    return t;
  });
  deps.keys.invalidate(tenant.id);
  return tenant;
}

export const DEMO_USERS: { username: string; role: Role }[] = [
  { username: 'admin', role: 'Admin' },
  { username: 'ops', role: 'Operations' },
  { username: 'integration', role: 'API Integration' },
  { username: 'viewer', role: 'Read-Only' },
];

export const DEMO_TENANTS = [
  { id: 'demo', name: 'Demo Bank' },
  { id: 'demo-b', name: 'Demo Bank B' },
];

export type ConnectorChoice = (tenantId: string) => { id: string; options?: Record<string, unknown> };

const MOCK_CONNECTOR: ConnectorChoice = () => ({ id: 'mock', options: { fixtures: 'demo' } });

/**
 * Seeds the demo tenants and users when the store has no tenant yet. Returns false when it did nothing.
 * The demo runs on the mock core; tests choose another connector per tenant to run the same contract.
 */
export async function seedDemo(deps: OnboardingDeps, password: string, connector: ConnectorChoice = MOCK_CONNECTOR): Promise<boolean> {
  if ((await deps.tenants.count()) > 0) return false;
  for (const t of DEMO_TENANTS) {
    await createTenant(deps, {
      ...t,
      config: {
        connector: connector(t.id),
        tokenLifetimeSeconds: 3600,
        creditLimit: { maximum: '1000000.00', allowDecrease: false },
        encryption: { allowPlaintextPassword: false },
        // The demo tenants may use the simulation routes (/v1/sandbox/...).
        sandbox: true,
        ...(deps.hsm ? { pin: DEMO_PIN_CONFIG } : {}),
      },
    });
    if (deps.hsm) await seedDemoPinKeys(deps.hsm.forTenant(t.id));
    for (const u of DEMO_USERS) await deps.users.add(t.id, u.username, u.role, password);
  }
  return true;
}

/**
 * Sets every demo user's password (role reset, unlocked) on the demo tenants that exist: the demo's
 * CARDLINE_DEMO_PASSWORD wins over the password the store was first seeded with. Returns those tenants.
 */
export async function resetDemoPasswords(deps: Pick<OnboardingDeps, 'tenants' | 'users'>, password: string): Promise<string[]> {
  const reset: string[] = [];
  for (const t of DEMO_TENANTS) {
    if (!(await deps.tenants.get(t.id))) continue;
    for (const u of DEMO_USERS) await deps.users.add(t.id, u.username, u.role, password);
    reset.push(t.id);
  }
  return reset;
}
