// Card lifecycle scenarios: every status × action against the transition table of
// schemas/card-lifecycle.ts, plus the lifecycle reads, references, idempotency and secrecy rules.
import { randomUUID } from 'node:crypto';
import type { CardSummary, OperationResult } from '../contract.js';
import type { Preferences } from '../../schemas/cards.js';
import { CARD_ACTIONS, allStatuses, transition, type CardAction, type CardStatus } from '../../schemas/card-lifecycle.js';
import { check, expectAmount, expectEqual, expectRejected, expectSame, expectSucceeded, fail, luhnValid } from './expect.js';
import type { Scenario, ScenarioContext } from './types.js';

/** `PHYSICAL/ACTIVE/DISPATCHED`, `VIRTUAL/LOCKED`. */
export const statusLabel = (s: CardStatus): string => [s.form, s.state, s.fulfilment].filter(Boolean).join('/');

/** One operation as the table sees it; only an upgrade has an option. */
interface Step {
  action: CardAction;
  lockOnUpgrade?: boolean;
}

const stepLabel = (s: Step) => (s.action === 'upgradeToPhysical' ? `upgradeToPhysical (lockOnUpgrade ${Boolean(s.lockOnUpgrade)})` : s.action);

/** What every demo fixture card starts as. */
const FIXTURE_STATUS: CardStatus = { form: 'VIRTUAL', state: 'ACTIVE' };

/** The operations that move a card between statuses (updatePreferences and setPin never do). */
const DRIVING_STEPS: Step[] = [
  { action: 'upgradeToPhysical', lockOnUpgrade: false },
  { action: 'upgradeToPhysical', lockOnUpgrade: true },
  { action: 'activate' },
  { action: 'lock' },
  { action: 'unlock' },
  { action: 'advanceFulfilment' },
  { action: 'block' },
];

/** Shortest operations to each status, by breadth-first search over the transition table. */
export function routesToStatuses(): Map<string, Step[]> {
  const routes = new Map<string, Step[]>([[statusLabel(FIXTURE_STATUS), []]]);
  const queue: CardStatus[] = [FIXTURE_STATUS];
  while (queue.length > 0) {
    const from = queue.shift()!;
    for (const step of DRIVING_STEPS) {
      const t = transition(from, step.action, { lockOnUpgrade: step.lockOnUpgrade });
      if (!t.allowed || routes.has(statusLabel(t.next))) continue;
      routes.set(statusLabel(t.next), [...routes.get(statusLabel(from))!, step]);
      queue.push(t.next);
    }
  }
  return routes;
}

// ── Inputs the scenarios send ───────────────────────────────────────────────────────────────────────

const ENTITY = 'ENT-1001';
/** The kit a card is driven to PHYSICAL with; the action under test upgrades with another. */
const DRIVE_KIT = 'KIT-2001';
const TEST_KIT = 'KIT-2002';
const PREFERENCES: Preferences = {
  domestic: { enabled: true, atm: { enabled: true, dailyLimit: '500.00', dailyCount: 5 }, pos: { enabled: true } },
  international: { enabled: false },
};
/** A well-formed ISO 9564-1 format 0 block (hex); the suite checks that no answer carries it. */
const PIN = { pinBlock: '0412AC89ABCDEF67', format: 0 as const, keyId: 'conformance-zpk' };

/** The one card of a fixture entity, found by listing its cards (ids differ between cores). */
async function fixtureCard(s: ScenarioContext, entityId: string): Promise<CardSummary> {
  const cards = expectSucceeded(await s.connector.listCards({ entityId }, s.ctx()), `listing the cards of ${entityId}`);
  check(Array.isArray(cards) && cards.length === 1, `${entityId} must start with exactly one card (demo fixtures), got ${JSON.stringify(cards)}`);
  const card = cards[0]!;
  expectEqual(statusLabel(card), statusLabel(FIXTURE_STATUS), `the fixture card of ${entityId}`);
  return card;
}

/** The card's status as the core reports it now. */
async function statusOf(s: ScenarioContext, cardId: string): Promise<string> {
  return statusLabel(expectSucceeded(await s.connector.getCard({ cardId }, s.ctx()), `reading card ${cardId}`));
}

function perform(s: ScenarioContext, cardId: string, step: Step, kitNo: string): Promise<OperationResult<unknown>> {
  const c = s.connector;
  switch (step.action) {
    case 'upgradeToPhysical':
      return c.upgradeToPhysical(
        { kitNo, entityId: ENTITY, cardId, communicationAddress: { usePrimaryAddress: true }, lockOnUpgrade: Boolean(step.lockOnUpgrade) },
        s.ctx(),
      );
    case 'activate':
      return c.activateCard({ cardId }, s.ctx());
    case 'lock':
      return c.lockCard({ cardId }, s.ctx());
    case 'unlock':
      return c.unlockCard({ cardId }, s.ctx());
    case 'block':
      return c.blockCard({ cardId, reasonCode: 'LOST' }, s.ctx());
    case 'advanceFulfilment':
      return c.advanceFulfilment({ cardId }, s.ctx());
    case 'updatePreferences':
      return c.updatePreferences({ cardId, preferences: PREFERENCES }, s.ctx());
    case 'setPin':
      return c.setPin({ cardId, ...PIN }, s.ctx());
  }
}

/** Drives ENT-1001's card to `target`, checking each step and the status reached. */
async function driveTo(s: ScenarioContext, target: CardStatus, route: Step[]): Promise<string> {
  const { cardId } = await fixtureCard(s, ENTITY);
  for (const step of route) {
    expectSucceeded(await perform(s, cardId, step, DRIVE_KIT), `driving the card to ${statusLabel(target)}: ${stepLabel(step)}`);
  }
  expectEqual(await statusOf(s, cardId), statusLabel(target), `the card after ${route.map(stepLabel).join(', ') || 'no step'}`);
  return cardId;
}

/** The table's verdict on one status × action, checked on a card driven to that status. */
function tableScenario(status: CardStatus, action: CardAction, route: Step[]): Scenario {
  const verdict = transition(status, action, { lockOnUpgrade: false });
  const at = statusLabel(status);
  return {
    name: `${action} on ${at} is ${verdict.allowed ? 'allowed' : 'refused'}`,
    async run(s) {
      const cardId = await driveTo(s, status, route);
      const result = await perform(s, cardId, { action, lockOnUpgrade: false }, TEST_KIT);
      const what = `${action} on a card that is ${at}`;
      if (!verdict.allowed) {
        expectRejected(result, `${what} (the table refuses it: ${verdict.reason})`, 'CARD_STATE_INVALID');
        expectEqual(await statusOf(s, cardId), at, `the card after the refused ${action}`);
        return;
      }
      const value = expectSucceeded(result, what);
      const next = statusLabel(verdict.next);
      if (action === 'upgradeToPhysical') {
        expectEqual((value as { state?: unknown }).state, verdict.next.state, `${what}: state of the upgrade result`);
      } else if (action === 'updatePreferences') {
        expectSame(value, PREFERENCES, `${what}: the preferences answered`);
      } else if (action === 'setPin') {
        expectSame(value, { cardId }, `${what}: the answer`);
      } else {
        const summary = value as CardSummary;
        expectEqual(summary.cardId, cardId, `${what}: cardId`);
        expectEqual(statusLabel(summary), next, `${what}: the card answered`);
      }
      expectEqual(await statusOf(s, cardId), next, `the card after ${action}`);
    },
  };
}

/** Every reachable status × every action of the table, named like `lock on PHYSICAL/ACTIVE/DISPATCHED is allowed`. */
function transitionTableScenarios(): Scenario[] {
  const routes = routesToStatuses();
  const out: Scenario[] = [];
  for (const status of allStatuses()) {
    const route = routes.get(statusLabel(status));
    if (!route) continue;
    for (const action of CARD_ACTIONS) out.push(tableScenario(status, action, route));
  }
  return out;
}

// ── Reads, references, idempotency, secrecy ─────────────────────────────────────────────────────────

const MASKED = /^\d{6}\*+\d{4}$/;
const EXPIRY = /^(0[1-9]|1[0-2])\/\d{2}$/;
const scenario = (name: string, run: Scenario['run']): Scenario => ({ name, run });

export const lifecycleScenarios: Scenario[] = [
  ...transitionTableScenarios(),

  scenario("lists an entity's cards with masked numbers only", async (s) => {
    const cards = expectSucceeded(await s.connector.listCards({ entityId: 'ENT-1002' }, s.ctx()), 'listing the cards of ENT-1002');
    check(cards.length === 1, `ENT-1002 has one card in the demo fixtures, got ${cards.length}`);
    for (const card of cards) {
      expectEqual(card.entityId, 'ENT-1002', 'entityId of a listed card');
      check(MASKED.test(card.panMasked), `panMasked must be the first six and last four digits, got ${JSON.stringify(card.panMasked)}`);
      check(EXPIRY.test(card.expiry), `expiry must be MM/YY, got ${JSON.stringify(card.expiry)}`);
      check(!('sensitive' in card), 'a card summary must not carry the sensitive block');
    }
    check(!/\d{12,}/.test(JSON.stringify(cards)), `a card list must not carry a full card number: ${JSON.stringify(cards)}`);
  }),

  scenario('reads a card in full: a Luhn-valid PAN behind the masked one', async (s) => {
    const { cardId, panMasked } = await fixtureCard(s, 'ENT-1001');
    const card = expectSucceeded(await s.connector.getCard({ cardId }, s.ctx()), `reading card ${cardId}`);
    expectEqual(card.cardId, cardId, 'cardId');
    expectEqual(card.entityId, 'ENT-1001', 'entityId');
    const pan = card.sensitive?.pan;
    check(typeof pan === 'string' && luhnValid(pan), 'sensitive.pan must be a Luhn-valid card number');
    expectEqual(card.panMasked, `${pan.slice(0, 6)}${'*'.repeat(pan.length - 10)}${pan.slice(-4)}`, 'panMasked of the card read');
    expectEqual(panMasked, card.panMasked, 'panMasked in the list and in the read');
    check(EXPIRY.test(card.expiry), `expiry must be MM/YY, got ${JSON.stringify(card.expiry)}`);
    if (card.sensitive.cvv !== undefined) check(/^\d{3,4}$/.test(card.sensitive.cvv), 'sensitive.cvv must be three or four digits');
  }),

  scenario('reads the credit limit, before and after a raise', async (s) => {
    const before = expectSucceeded(await s.connector.getCreditLimit({ entityId: 'ENT-1003' }, s.ctx()), 'reading the limit of ENT-1003');
    expectEqual(before.entityId, 'ENT-1003', 'entityId');
    expectAmount(before.creditLimit, '50000.00', 'the fixture limit');
    expectSucceeded(await s.connector.upgradeLimit({ entityId: 'ENT-1003', amount: '80000.00', allowDecrease: false }, s.ctx()), 'raising it to 80000.00');
    const after = expectSucceeded(await s.connector.getCreditLimit({ entityId: 'ENT-1003' }, s.ctx()), 'reading it again');
    expectAmount(after.creditLimit, '80000.00', 'the limit after the raise');
  }),

  scenario('refuses an unknown entity or card on reads and lifecycle changes', async (s) => {
    expectRejected(await s.connector.listCards({ entityId: 'ENT-0000' }, s.ctx()), 'listing the cards of ENT-0000', 'ENTITY_NOT_FOUND');
    expectRejected(await s.connector.getCreditLimit({ entityId: 'ENT-0000' }, s.ctx()), 'reading the limit of ENT-0000', 'ENTITY_NOT_FOUND');
    expectRejected(await s.connector.getCard({ cardId: 'CARD-0000' }, s.ctx()), 'reading card CARD-0000', 'CARD_NOT_FOUND');
    expectRejected(await s.connector.getPreferences({ cardId: 'CARD-0000' }, s.ctx()), 'reading the preferences of CARD-0000', 'CARD_NOT_FOUND');
    expectRejected(await s.connector.lockCard({ cardId: 'CARD-0000' }, s.ctx()), 'locking CARD-0000', 'CARD_NOT_FOUND');
    expectRejected(await s.connector.lockCard({ entityId: 'ENT-0000' }, s.ctx()), 'locking the card of ENT-0000', 'ENTITY_NOT_FOUND');
    expectRejected(await s.connector.activateCard({ kitNo: 'KIT-9999' }, s.ctx()), 'activating the card on KIT-9999', 'CARD_NOT_FOUND');
    const { cardId } = await fixtureCard(s, 'ENT-1001');
    // Every identifier given must name the same card.
    expectRejected(await s.connector.lockCard({ cardId, entityId: 'ENT-1002' }, s.ctx()), `locking ${cardId} as a card of ENT-1002`, 'CARD_NOT_FOUND');
    expectEqual(await statusOf(s, cardId), statusLabel(FIXTURE_STATUS), 'the card after the refused lock');
  }),

  scenario('a retried lockCard with the same idempotency key applies once', async (s) => {
    const key = `conformance-${randomUUID()}`;
    const first = expectSucceeded(await s.connector.lockCard({ entityId: 'ENT-1002' }, s.ctx({ idempotencyKey: key })), 'locking the card of ENT-1002');
    expectEqual(first.state, 'LOCKED', 'state after the lock');
    const retry = expectSucceeded(await s.connector.lockCard({ entityId: 'ENT-1002' }, s.ctx({ idempotencyKey: key })), 'the retry');
    expectSame(retry, first, 'the retry (it must answer the first outcome)');
    expectSucceeded(await s.connector.unlockCard({ cardId: first.cardId }, s.ctx()), 'unlocking it without a key');
    // Applied again, this retry would lock the card a second time.
    const late = expectSucceeded(await s.connector.lockCard({ entityId: 'ENT-1002' }, s.ctx({ idempotencyKey: key })), 'a late retry');
    expectSame(late, first, 'the late retry (it must answer the first outcome)');
    expectEqual(await statusOf(s, first.cardId), 'VIRTUAL/ACTIVE', 'the card after the late retry');
  }),

  scenario('blockCard records the reason', async (s) => {
    const blocked = expectSucceeded(await s.connector.blockCard({ entityId: 'ENT-1003', reasonCode: 'STOLEN' }, s.ctx()), 'blocking the card of ENT-1003');
    expectEqual(blocked.state, 'BLOCKED', 'state');
    expectEqual(blocked.blockReason, 'STOLEN', 'blockReason of the answer');
    const card = expectSucceeded(await s.connector.getCard({ cardId: blocked.cardId }, s.ctx()), 'reading it');
    expectEqual(card.blockReason, 'STOLEN', 'blockReason of the card read');
    const listed = expectSucceeded(await s.connector.listCards({ entityId: 'ENT-1003' }, s.ctx()), 'listing it');
    expectEqual(listed[0]?.blockReason, 'STOLEN', 'blockReason in the list');
  }),

  scenario('activates a card issued locked, named by its kit', async (s) => {
    const up = expectSucceeded(
      await s.connector.upgradeToPhysical({ kitNo: 'KIT-2003', entityId: 'ENT-1002', communicationAddress: { usePrimaryAddress: true }, lockOnUpgrade: true }, s.ctx()),
      'KIT-2003 for ENT-1002 with lockOnUpgrade',
    );
    const active = expectSucceeded(await s.connector.activateCard({ kitNo: 'KIT-2003' }, s.ctx()), 'activating the card on KIT-2003');
    expectEqual(active.cardId, up.cardId, 'the card activated');
    expectEqual(active.kitNo, 'KIT-2003', 'kitNo');
    expectEqual(statusLabel(active), 'PHYSICAL/ACTIVE/ORDERED', 'the card after activation');
  }),

  scenario('stores preferences whole and reads them back', async (s) => {
    const { cardId } = await fixtureCard(s, 'ENT-1001');
    expectSame(expectSucceeded(await s.connector.updatePreferences({ cardId, preferences: PREFERENCES }, s.ctx()), 'setting preferences'), PREFERENCES, 'the answer');
    expectSame(expectSucceeded(await s.connector.getPreferences({ cardId }, s.ctx()), 'reading them'), PREFERENCES, 'the preferences read');
    // An update replaces the whole document: what it leaves out is gone.
    const only: Preferences = { international: { enabled: true, ecom: { enabled: true, dailyLimit: '250.00' } } };
    expectSucceeded(await s.connector.updatePreferences({ cardId, preferences: only }, s.ctx()), 'replacing them');
    expectSame(expectSucceeded(await s.connector.getPreferences({ cardId }, s.ctx()), 'reading them again'), only, 'the preferences after the replacement');
  }),

  scenario('setPin never echoes the PIN block', async (s) => {
    const up = expectSucceeded(
      await s.connector.upgradeToPhysical({ kitNo: 'KIT-2001', entityId: 'ENT-1001', communicationAddress: { usePrimaryAddress: true }, lockOnUpgrade: false }, s.ctx()),
      'KIT-2001 for ENT-1001',
    );
    const result = await s.connector.setPin({ cardId: up.cardId, ...PIN }, s.ctx());
    expectSame(expectSucceeded(result, 'setting the PIN'), { cardId: up.cardId }, 'the answer');
    const seen = [JSON.stringify(result), JSON.stringify(await s.connector.getCard({ cardId: up.cardId }, s.ctx()))];
    if (seen.some((text) => text.toUpperCase().includes(PIN.pinBlock))) fail('an answer carries the PIN block');
  }),
];
