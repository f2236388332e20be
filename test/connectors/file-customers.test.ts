// The file connector's customer writes: journaled, replayed after a crash to the outcomes acknowledged, and
// exported and imported with the entities' new fields and the transactions.
import { copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileCore, exportFixtures, importFixtures } from '../../connectors/file/index.js';
import { LOCK_FILE } from '../../connectors/file/lock.js';
import { JOURNAL_FILE, decodeLine } from '../../connectors/file/store.js';

const dirs: string[] = [];
const open: FileCore[] = [];

async function tmp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'cardline-file-cust-'));
  dirs.push(d);
  return d;
}

async function core(dir: string): Promise<FileCore> {
  const c = await FileCore.open({ dir, lockTimeoutMs: 0 });
  open.push(c);
  return c;
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const ctx = () => ({ signal: new AbortController().signal });
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
    const ops = (await readFile(join(dir, JOURNAL_FILE), 'utf8')).split('\n').filter(Boolean).map((l) => decodeLine(l)!.op);
    expect(ops).toEqual(['registerEntity', 'updateEntity', 'issueCard', 'authorize', 'authorize', 'repay', 'blockCard', 'replaceCard']);
    const before = await snapshotOf(c);
    expect(before.entity).toMatchObject({ status: 'succeeded', value: { outstanding: '200.00', availableCredit: '800.00', cardCount: 3, contact: { email: 'c@d.example' } } });
    // A crash: the files as they are, without the close's compaction.
    const copy = await tmp();
    for (const name of await readdir(dir)) if (name !== LOCK_FILE) await copyFile(join(dir, name), join(copy, name));
    expect(await snapshotOf(await core(copy))).toEqual(before);
  });

  it('exports and imports the entities, transactions and repayments', async () => {
    const dir = await tmp();
    const c = await core(dir);
    await aDay(c);
    const before = await snapshotOf(c);
    await c.close();
    const fixtures = await exportFixtures(dir);
    expect(fixtures.transactions).toHaveLength(2);
    expect(fixtures.repayments).toHaveLength(1);
    const other = await tmp();
    await importFixtures(other, JSON.parse(JSON.stringify(fixtures)));
    expect(await snapshotOf(await core(other))).toEqual(before);
  });
});
