// The named scenarios every connector must pass, written against the demo fixtures (see types.ts).
import { randomUUID } from 'node:crypto';
import {
  isConnectorTimeoutError,
  type OperationResult,
  type PhysicalUpgradeInput,
  type PhysicalUpgradeResult,
  type UpgradeLimitInput,
} from '../contract.js';
import { check, describeResult, expectAmount, expectEqual, expectRejected, expectSucceeded, fail } from './expect.js';
import { customerScenarios } from './customers.js';
import { holdScenarios } from './holds.js';
import { lifecycleScenarios } from './lifecycle.js';
import type { Scenario, ScenarioContext } from './types.js';

/** The demo fixtures' starting credit limit of every entity. */
export const FIXTURE_LIMIT = '50000.00';

const limit = (entityId: string, amount: string, allowDecrease = false): UpgradeLimitInput => ({ entityId, amount, allowDecrease });

const physical = (kitNo: string, entityId?: string, extra: Partial<PhysicalUpgradeInput> = {}): PhysicalUpgradeInput => ({
  kitNo,
  entityId,
  communicationAddress: { usePrimaryAddress: true },
  lockOnUpgrade: false,
  ...extra,
});

function expectUpgraded(result: OperationResult<PhysicalUpgradeResult>, what: string, entityId: string, kitNo: string, state = 'ACTIVE') {
  const v = expectSucceeded(result, what);
  expectEqual(v.entityId, entityId, `${what}: entityId`);
  expectEqual(v.kitNo, kitNo, `${what}: kitNo`);
  expectEqual(v.state, state, `${what}: state`);
  check(typeof v.cardId === 'string' && v.cardId.length > 0, `${what}: cardId must name the upgraded card, got ${JSON.stringify(v.cardId)}`);
  return v;
}

/** The limit an entity has now, read by raising it to `probe` and looking at `previousLimit`. */
async function currentLimit(s: ScenarioContext, entityId: string, probe = '90000.00'): Promise<string> {
  const v = expectSucceeded(await s.connector.upgradeLimit(limit(entityId, probe), s.ctx()), `raising ${entityId} to ${probe} to read its limit`);
  return v.previousLimit;
}

const scenario = (name: string, run: Scenario['run']): Scenario => ({ name, run });

export const scenarios: Scenario[] = [
  scenario('raises a credit limit', async (s) => {
    const v = expectSucceeded(await s.connector.upgradeLimit(limit('ENT-1001', '75000.00'), s.ctx()), 'raising ENT-1001 to 75000.00');
    expectEqual(v.entityId, 'ENT-1001', 'entityId');
    expectAmount(v.previousLimit, FIXTURE_LIMIT, 'previousLimit');
    expectAmount(v.newLimit, '75000.00', 'newLimit');
    expectAmount(await currentLimit(s, 'ENT-1001'), '75000.00', 'the limit after the raise');
  }),

  scenario('lowers a credit limit when the product allows it', async (s) => {
    const v = expectSucceeded(await s.connector.upgradeLimit(limit('ENT-1002', '100.00', true), s.ctx()), 'lowering ENT-1002 to 100.00 with allowDecrease');
    expectAmount(v.previousLimit, FIXTURE_LIMIT, 'previousLimit');
    expectAmount(v.newLimit, '100.00', 'newLimit');
  }),

  scenario('refuses an unknown entity', async (s) => {
    expectRejected(await s.connector.upgradeLimit(limit('ENT-0000', '1000.00'), s.ctx()), 'raising the limit of ENT-0000', 'ENTITY_NOT_FOUND');
  }),

  scenario('refuses a decrease when the product forbids it', async (s) => {
    expectRejected(
      await s.connector.upgradeLimit(limit('ENT-1001', '100.00', false), s.ctx()),
      'lowering ENT-1001 to 100.00 without allowDecrease',
      'LIMIT_DECREASE_NOT_ALLOWED',
    );
    expectAmount(await currentLimit(s, 'ENT-1001'), FIXTURE_LIMIT, 'the limit after the refused decrease');
  }),

  scenario('refuses an illegal amount', async (s) => {
    expectRejected(await s.connector.upgradeLimit(limit('ENT-1001', '0.00', true), s.ctx()), "setting ENT-1001's limit to 0.00");
    expectAmount(await currentLimit(s, 'ENT-1001'), FIXTURE_LIMIT, 'the limit after the refused amount');
  }),

  scenario('upgrades a virtual card to a free kit', async (s) => {
    expectUpgraded(await s.connector.upgradeToPhysical(physical('KIT-2001', 'ENT-1001'), s.ctx()), 'KIT-2001 for ENT-1001', 'ENT-1001', 'KIT-2001');
    // The entity's only virtual card is now physical, so there is nothing left to upgrade.
    expectRejected(await s.connector.upgradeToPhysical(physical('KIT-2002', 'ENT-1001'), s.ctx()), 'a second upgrade of ENT-1001');
  }),

  scenario('issues the card locked when asked', async (s) => {
    expectUpgraded(
      await s.connector.upgradeToPhysical(physical('KIT-2002', 'ENT-1002', { lockOnUpgrade: true }), s.ctx()),
      'KIT-2002 for ENT-1002 with lockOnUpgrade',
      'ENT-1002',
      'KIT-2002',
      'PENDING_ACTIVATION',
    );
  }),

  scenario('upgrades with a pre-allocated kit', async (s) => {
    expectUpgraded(await s.connector.upgradeToPhysical(physical('KIT-2101'), s.ctx()), 'KIT-2101 without entityId', 'ENT-1003', 'KIT-2101');
  }),

  scenario('refuses an invalid kit', async (s) => {
    expectRejected(await s.connector.upgradeToPhysical(physical('KIT-9999', 'ENT-1001'), s.ctx()), 'unknown KIT-9999', 'PPCUST_018');
  }),

  scenario('refuses a kit already mapped', async (s) => {
    expectUpgraded(await s.connector.upgradeToPhysical(physical('KIT-2001', 'ENT-1001'), s.ctx()), 'KIT-2001 for ENT-1001', 'ENT-1001', 'KIT-2001');
    expectRejected(await s.connector.upgradeToPhysical(physical('KIT-2001', 'ENT-1002'), s.ctx()), 'KIT-2001 again, for ENT-1002', 'PPCUST_018');
  }),

  scenario('refuses a kit allocated to another entity', async (s) => {
    expectRejected(await s.connector.upgradeToPhysical(physical('KIT-2101', 'ENT-1001'), s.ctx()), 'KIT-2101 (allocated to ENT-1003) for ENT-1001', 'PPCUST_018');
    // Nothing was applied: ENT-1001 still has its virtual card.
    expectUpgraded(await s.connector.upgradeToPhysical(physical('KIT-2001', 'ENT-1001'), s.ctx()), 'KIT-2001 for ENT-1001 afterwards', 'ENT-1001', 'KIT-2001');
  }),

  scenario('a retry with the same idempotency key changes state once', async (s) => {
    const key = `conformance-${randomUUID()}`;
    const first = expectSucceeded(await s.connector.upgradeLimit(limit('ENT-1001', '60000.00'), s.ctx({ idempotencyKey: key })), 'the first call');
    const retry = expectSucceeded(await s.connector.upgradeLimit(limit('ENT-1001', '60000.00'), s.ctx({ idempotencyKey: key })), 'the retry');
    expectAmount(first.previousLimit, FIXTURE_LIMIT, 'previousLimit of the first call');
    // Applied twice, the retry would report 60000.00 as the previous limit.
    expectAmount(retry.previousLimit, first.previousLimit, 'previousLimit of the retry (it must answer the first outcome)');
    expectAmount(retry.newLimit, first.newLimit, 'newLimit of the retry');
    expectAmount(await currentLimit(s, 'ENT-1001'), '60000.00', 'the limit after the retry');
  }),

  scenario('a retried card upgrade with the same idempotency key answers the first outcome', async (s) => {
    const key = `conformance-${randomUUID()}`;
    const first = expectUpgraded(await s.connector.upgradeToPhysical(physical('KIT-2003', 'ENT-1001'), s.ctx({ idempotencyKey: key })), 'the first call', 'ENT-1001', 'KIT-2003');
    // Applied twice, the retry would be refused: the kit is mapped and the card is no longer virtual.
    const retry = expectUpgraded(await s.connector.upgradeToPhysical(physical('KIT-2003', 'ENT-1001'), s.ctx({ idempotencyKey: key })), 'the retry', 'ENT-1001', 'KIT-2003');
    expectEqual(retry.cardId, first.cardId, 'cardId of the retry');
  }),

  scenario('a deadline that expires yields pending or a timeout error, never success', async (s) => {
    const expired = () => s.ctx({ signal: AbortSignal.abort(new DOMException('The deadline passed', 'TimeoutError')) });
    const calls: [string, () => Promise<OperationResult<unknown>>][] = [
      ['upgradeLimit', () => s.connector.upgradeLimit(limit('ENT-1002', '65000.00'), expired())],
      ['upgradeToPhysical', () => s.connector.upgradeToPhysical(physical('KIT-2004', 'ENT-1002'), expired())],
      ['lockCard', () => s.connector.lockCard({ entityId: 'ENT-1002' }, expired())],
    ];
    for (const [operation, call] of calls) {
      let result: OperationResult<unknown>;
      try {
        result = await call();
      } catch (err) {
        if (isConnectorTimeoutError(err)) continue;
        const e = err as Error;
        fail(`${operation} with an expired deadline threw ${e?.name}: ${e?.message}; throw ConnectorTimeoutError (or answer pending) instead`);
      }
      if (result?.status !== 'pending') fail(`${operation} with an expired deadline answered ${describeResult(result)}; expected pending or a ConnectorTimeoutError`);
    }
  }),

  scenario('two concurrent upgrades of one card: exactly one wins', async (s) => {
    const kits = ['KIT-2002', 'KIT-2003'];
    const outcomes = await Promise.allSettled(kits.map((kit) => s.connector.upgradeToPhysical(physical(kit, 'ENT-1002'), s.ctx())));
    const seen = outcomes.map((o, i) =>
      o.status === 'fulfilled' ? `${kits[i]}: ${describeResult(o.value)}` : `${kits[i]}: threw ${(o.reason as Error)?.name}: ${(o.reason as Error)?.message}`,
    );
    const won = outcomes.flatMap((o, i) => (o.status === 'fulfilled' && o.value.status === 'succeeded' ? [i] : []));
    const lost = outcomes.flatMap((o, i) => (o.status === 'fulfilled' && o.value.status === 'rejected' ? [i] : []));
    if (won.length !== 1 || lost.length !== 1) fail(`expected one success and one rejection, got ${seen.join('; ')}`);
    // The loser's kit was not consumed: another entity can still take it.
    const loserKit = kits[lost[0]!]!;
    expectUpgraded(await s.connector.upgradeToPhysical(physical(loserKit, 'ENT-1003'), s.ctx()), `${loserKit} for ENT-1003 afterwards`, 'ENT-1003', loserKit);
  }),

  scenario('answers its readiness probe when it has one', async (s) => {
    if (!s.connector.health) return;
    await s.connector.health();
  }),

  ...lifecycleScenarios,
  ...customerScenarios,
  ...holdScenarios,
];
