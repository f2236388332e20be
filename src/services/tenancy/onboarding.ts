// Onboarding the demo: its tenants, users and PIN keys (a tenant itself is created by tenant-admin.ts).
import type { Role } from '../../../schemas/common.js';
import { DEMO_PIN_CONFIG, seedDemoPinKeys } from '../../crypto/hsm/demo.js';
import type { HsmProvider } from '../../crypto/hsm/index.js';
import type { OperatorKeys } from '../identity/operator-keys.js';
import { createTenant, type TenantAdminDeps } from './tenant-admin.js';

export interface OnboardingDeps extends TenantAdminDeps {
  /** When given, the demo tenants get PIN keys (src/crypto/hsm/demo.ts) and a pin configuration. */
  hsm?: HsmProvider | null | undefined;
}

export { createTenant };

const DEMO_USERS: { username: string; role: Role }[] = [
  { username: 'admin', role: 'Admin' },
  { username: 'ops', role: 'Operations' },
  { username: 'integration', role: 'API Integration' },
  { username: 'viewer', role: 'Read-Only' },
];

const DEMO_TENANTS = [
  { id: 'demo', name: 'Demo Bank' },
  { id: 'demo-b', name: 'Demo Bank B' },
];

export type ConnectorChoice = (tenantId: string) => { id: string; options?: Record<string, unknown> };

const MOCK_CONNECTOR: ConnectorChoice = () => ({ id: 'mock', options: { fixtures: 'demo' } });

/** Seeds the demo tenants and users into an empty store (false when it did nothing), on the mock core. */
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

/** What the demo did with its operator key at this start (decision 0170). */
export interface DemoOperatorKeySeed {
  /** created (a random key is returned once), kept, revoked (stays so, nothing created) or taken by another key. */
  outcome: 'created' | 'kept' | 'revoked' | 'taken';
  key: string | null;
}

/** The demo's operator key `demo` (decision 0170): the chosen key or a random first one; a revocation survives restarts. */
export async function seedDemoOperatorKey(keys: OperatorKeys, chosen: string | undefined): Promise<DemoOperatorKeySeed> {
  const existing = await keys.get(DEMO_OPERATOR);
  if (chosen !== undefined) {
    const known = await keys.lookup(chosen);
    if (known?.revoked) return { outcome: 'revoked', key: null };
    if (known) return { outcome: known.name === DEMO_OPERATOR ? 'kept' : 'taken', key: null };
    if (existing) await keys.revoke(DEMO_OPERATOR);
    await keys.create(DEMO_OPERATOR, chosen);
    return { outcome: 'created', key: null };
  }
  if (existing) return { outcome: 'kept', key: null };
  if (await keys.wasRevoked(DEMO_OPERATOR)) return { outcome: 'revoked', key: null };
  return { outcome: 'created', key: (await keys.create(DEMO_OPERATOR)).key };
}

export const DEMO_OPERATOR = 'demo';

/** Sets every demo user's password to CARDLINE_DEMO_PASSWORD (role reset, unlocked); returns the demo tenants. */
export async function resetDemoPasswords(deps: Pick<OnboardingDeps, 'tenants' | 'users'>, password: string): Promise<string[]> {
  const reset: string[] = [];
  for (const t of DEMO_TENANTS) {
    if (!(await deps.tenants.get(t.id))) continue;
    for (const u of DEMO_USERS) await deps.users.add(t.id, u.username, u.role, password);
    reset.push(t.id);
  }
  return reset;
}
