// The file connector's card lifecycle and customers: writes journaled and replayed (outcomes checked), reads
// served from memory and never journaled, PIN blocks never written to disk, fixtures with the new fields.
import { copyFile, mkdtemp, readdir, readFile, rm, appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectorTimeoutError, type ConnectorContext } from '../../connectors/contract.js';
import { FileCore, exportFixtures, importFixtures } from '../../connectors/file/index.js';
import { LOCK_FILE, OWNER_FILE } from '../../connectors/file/lock.js';
import { JOURNAL_FILE, decodeLine, encodeEntry } from '../../connectors/file/store.js';
import { FILE_TEST_SECRETS } from './fixtures/file-secrets.js';

const dirs: string[] = [];
const open: FileCore[] = [];

async function tmp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'cardline-file-lc-'));
  dirs.push(d);
  return d;
}

async function core(dir: string): Promise<FileCore> {
  const c = await FileCore.open({ dir, lockTimeoutMs: 0 }, { secrets: FILE_TEST_SECRETS });
  open.push(c);
  return c;
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** A copy of a store's files as a crash would leave them: no close, no compaction. */
async function crashCopy(from: string): Promise<string> {
  const to = await tmp();
  for (const name of await readdir(from)) if (name !== LOCK_FILE && name !== OWNER_FILE) await copyFile(join(from, name), join(to, name));
  return to;
}

// The cores read only the deadline and the key.
const ctx = (idempotencyKey?: string) => ({ signal: new AbortController().signal, idempotencyKey }) as ConnectorContext;
const journal = async (dir: string) => (await readFile(join(dir, JOURNAL_FILE), 'utf8')).split('\n').filter(Boolean).map((l) => decodeLine(l)!);
const PIN_BLOCK = '0412AC89ABCDEF67';

describe('file connector: card lifecycle', () => {
  it('journals every lifecycle write and replays it after a crash', async () => {
    const dir = await tmp();
    const c = await core(dir);
    await c.upgradeToPhysical({ kitNo: 'KIT-2001', entityId: 'ENT-1001', lockOnUpgrade: true }, ctx());
    expect(await c.activateCard({ kitNo: 'KIT-2001' }, ctx())).toMatchObject({ status: 'succeeded', value: { cardId: 'CARD-3001', state: 'ACTIVE' } });
    await c.advanceFulfilment({ cardId: 'CARD-3001' }, ctx());
    await c.updatePreferences({ cardId: 'CARD-3001', preferences: { domestic: { enabled: false } } }, ctx());
    await c.setPin({ cardId: 'CARD-3001', pinBlock: PIN_BLOCK, format: 0, keyId: 'zpk-1' }, ctx());
    await c.lockCard({ entityId: 'ENT-1002' }, ctx());
    await c.unlockCard({ cardId: 'CARD-3002' }, ctx());
    await c.blockCard({ cardId: 'CARD-3003', reasonCode: 'DAMAGED' }, ctx());
    expect((await journal(dir)).map((e) => e.op)).toEqual([
      'upgradeToPhysical',
      'activateCard',
      'advanceFulfilment',
      'updatePreferences',
      'setPin',
      'lockCard',
      'unlockCard',
      'blockCard',
    ]);

    const reopened = await core(await crashCopy(dir));
    const cards = reopened.store.bank.state.cards;
    expect(cards.get('CARD-3001')).toMatchObject({
      form: 'PHYSICAL',
      state: 'ACTIVE',
      fulfilment: 'EMBOSSED',
      preferences: { domestic: { enabled: false } },
      pinSet: true,
    });
    expect(cards.get('CARD-3002')?.state).toBe('ACTIVE');
    expect(cards.get('CARD-3003')).toMatchObject({ state: 'BLOCKED', blockReason: 'DAMAGED' });
  });

  it('never writes the PIN block: the journal records card, format and key id only', async () => {
    const dir = await tmp();
    const c = await core(dir);
    await c.upgradeToPhysical({ kitNo: 'KIT-2001', entityId: 'ENT-1001', lockOnUpgrade: false }, ctx());
    await c.setPin({ cardId: 'CARD-3001', pinBlock: PIN_BLOCK, format: 0, keyId: 'zpk-1' }, ctx('pin-1'));
    const entry = (await journal(dir)).at(-1)!;
    expect(entry).toEqual({
      seq: 2,
      op: 'setPin',
      key: 'pin-1',
      input: { cardId: 'CARD-3001', format: 0, keyId: 'zpk-1' },
      result: { status: 'succeeded', value: { cardId: 'CARD-3001' } },
    });
    await c.close();
    for (const name of await readdir(dir)) expect(await readFile(join(dir, name), 'utf8')).not.toContain(PIN_BLOCK);
  });

  it('serves reads from memory without journaling them', async () => {
    const dir = await tmp();
    const c = await core(dir);
    await c.lockCard({ cardId: 'CARD-3001' }, ctx());
    expect(await c.listCards({ entityId: 'ENT-1001' }, ctx())).toMatchObject({ status: 'succeeded', value: [{ cardId: 'CARD-3001', state: 'LOCKED' }] });
    expect(await c.getCard({ cardId: 'CARD-3001' }, ctx())).toMatchObject({ status: 'succeeded', value: { sensitive: { pan: '4000000000030017' } } });
    expect(await c.getPreferences({ cardId: 'CARD-3001' }, ctx())).toEqual({ status: 'succeeded', value: {} });
    expect(await c.getCreditLimit({ entityId: 'ENT-1001' }, ctx())).toEqual({ status: 'succeeded', value: { entityId: 'ENT-1001', creditLimit: '50000.00', outstanding: '0.00', availableCredit: '50000.00' } });
    expect(await c.getCard({ cardId: 'CARD-0' }, ctx())).toMatchObject({ status: 'rejected', code: 'CARD_NOT_FOUND' });
    expect((await journal(dir)).map((e) => e.op)).toEqual(['lockCard']);
    await expect(c.getCard({ cardId: 'CARD-3001' }, { signal: AbortSignal.abort() } as ConnectorContext)).rejects.toBeInstanceOf(ConnectorTimeoutError);
  });

  it('journals a keyed refusal (its outcome is kept) but not an unkeyed one', async () => {
    const dir = await tmp();
    const c = await core(dir);
    expect(await c.unlockCard({ cardId: 'CARD-3001' }, ctx())).toMatchObject({ status: 'rejected', code: 'CARD_STATE_INVALID' });
    expect(await journal(dir)).toEqual([]);
    const refused = await c.unlockCard({ cardId: 'CARD-3001' }, ctx('u-1'));
    expect((await journal(dir)).map((e) => [e.op, e.key])).toEqual([['unlockCard', 'u-1']]);
    await c.lockCard({ cardId: 'CARD-3001' }, ctx());
    // The retry answers the first outcome, also after a crash, although the card is LOCKED now.
    expect(await c.unlockCard({ cardId: 'CARD-3001' }, ctx('u-1'))).toEqual(refused);
    const reopened = await core(await crashCopy(dir));
    expect(await reopened.unlockCard({ cardId: 'CARD-3001' }, ctx('u-1'))).toEqual(refused);
    expect(reopened.store.bank.state.cards.get('CARD-3001')?.state).toBe('LOCKED');
  });

  it('refuses to open when replaying a lifecycle entry gives another outcome than the one acknowledged', async () => {
    const dir = await tmp();
    const c = await core(dir);
    await c.lockCard({ cardId: 'CARD-3001' }, ctx());
    const crashed = await crashCopy(dir);
    // A well-formed entry claiming that locking the already LOCKED card succeeded: the rules say otherwise.
    await appendFile(
      join(crashed, JOURNAL_FILE),
      encodeEntry({ seq: 2, op: 'lockCard', input: { cardId: 'CARD-3001' }, result: { status: 'succeeded', value: { cardId: 'CARD-3001' } } }),
    );
    await expect(FileCore.open({ dir: crashed, lockTimeoutMs: 0 }, { secrets: FILE_TEST_SECRETS })).rejects.toThrow(/replaying journal entry 2 \(lockCard\) gives a different outcome/);
  });

  it('reads only known operations from the journal', () => {
    const line = (op: string) => encodeEntry({ seq: 1, op: op as 'lockCard', input: {}, result: {} }).trimEnd();
    expect(decodeLine(line('advanceFulfilment'))?.op).toBe('advanceFulfilment');
    expect(decodeLine(line('deleteEverything'))).toBeNull();
  });

  it('exports and imports fixtures with the new card fields; older fixtures without them still import', async () => {
    const a = await tmp();
    const c = await core(a);
    await c.blockCard({ cardId: 'CARD-3002', reasonCode: 'LOST' }, ctx());
    await c.close();
    const exported = await exportFixtures(a, FILE_TEST_SECRETS);
    expect(exported.cards.find((x) => x.cardId === 'CARD-3002')).toMatchObject({ expiry: '12/29', cvv: '301', pinSet: false, blockReason: 'LOST' });

    const older = structuredClone(exported);
    for (const card of older.cards) {
      delete card.expiry;
      delete card.cvv;
      delete card.pinSet;
    }
    const b = join(await tmp(), 'tenant');
    await importFixtures(b, older, FILE_TEST_SECRETS);
    expect(await exportFixtures(b, FILE_TEST_SECRETS)).toEqual(exported);

    const bad = structuredClone(exported);
    bad.cards[0]!.expiry = '13/29';
    await expect(importFixtures(join(await tmp(), 'x'), bad, FILE_TEST_SECRETS)).rejects.toThrow(/Fixtures are invalid: \/cards\/0\/expiry/);
  });
});

// ── Customers: journaled, replayed after a crash, exported and imported with the transactions ──────────────

const CONTACT = { email: 'a@b.example', mobile: '+351910000001' };
const ADDRESS = { address1: '1 Road', city: 'Lisbon', state: 'Lisboa', country: 'PT', pin: '1000-001' };
const at = '2026-11-23T10:00:00.000Z';
const merchant = { name: 'Shop', mcc: '5411', country: 'PT' };

/** A day of customer writes on a file core; answers the transaction list and the entity read after it. */
async function aDay(c: FileCore) {
  await c.registerEntity({ name: 'Acme', type: 'BUSINESS', contact: CONTACT, primaryAddress: ADDRESS, creditLimit: '1000.00', issueVirtualCard: true }, ctx());
  await c.updateEntity({ entityId: 'ENT-1004', contact: { ...CONTACT, email: 'c@d.example' } }, ctx());
  await c.issueCard({ entityId: 'ENT-1004' }, ctx());
  await c.authorize({ cardId: 'CARD-3004', amount: '300.00', merchant, channel: 'POS', at, homeCountry: 'PT', timeZone: 'Europe/Lisbon' }, ctx());
  await c.authorize({ cardId: 'CARD-3004', amount: '900.00', merchant, channel: 'POS', at, homeCountry: 'PT', timeZone: 'Europe/Lisbon' }, ctx());
  await c.repay({ entityId: 'ENT-1004', amount: '100.00', at }, ctx());
  await c.blockCard({ cardId: 'CARD-3004', reasonCode: 'STOLEN' }, ctx());
  await c.replaceCard({ cardId: 'CARD-3004', reason: 'STOLEN', kitNo: 'KIT-2005' }, ctx());
}

const snapshotOf = async (c: FileCore) => ({
  entity: await c.getEntity({ entityId: 'ENT-1004' }, ctx()),
  transactions: await c.listTransactions({ entityId: 'ENT-1004', limit: 10 }, ctx()),
  cards: await c.listCards({ entityId: 'ENT-1004' }, ctx()),
});

describe('file connector: customers', () => {
  it('journals each customer write and replays it, after a crash, to the same state', async () => {
    const dir = await tmp();
    const c = await core(dir);
    await aDay(c);
    expect((await journal(dir)).map((e) => e.op)).toEqual(['registerEntity', 'updateEntity', 'issueCard', 'authorize', 'authorize', 'repay', 'blockCard', 'replaceCard']);
    const before = await snapshotOf(c);
    expect(before.entity).toMatchObject({ status: 'succeeded', value: { outstanding: '200.00', availableCredit: '800.00', cardCount: 3, contact: { email: 'c@d.example' } } });
    // A crash: the files as they are, without the close's compaction.
    expect(await snapshotOf(await core(await crashCopy(dir)))).toEqual(before);
  });

  it('exports and imports the entities, transactions and repayments', async () => {
    const dir = await tmp();
    const c = await core(dir);
    await aDay(c);
    const before = await snapshotOf(c);
    await c.close();
    const fixtures = await exportFixtures(dir, FILE_TEST_SECRETS);
    expect(fixtures.transactions).toHaveLength(2);
    expect(fixtures.repayments).toHaveLength(1);
    const other = await tmp();
    await importFixtures(other, JSON.parse(JSON.stringify(fixtures)), FILE_TEST_SECRETS);
    expect(await snapshotOf(await core(other))).toEqual(before);
  });
});
