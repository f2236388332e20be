// The file connector: operations, refusals, idempotency, durability across re-open, torn journals, the lock, fixtures.
import { spawnSync } from 'node:child_process';
import { appendFile, copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectorTimeoutError, type ConnectorContext, ConnectorUnavailableError } from '../../connectors/contract.js';
import { builtInConnectors } from '../../connectors/index.js';
import { FileCore, exportFixtures, importFixtures } from '../../connectors/file/index.js';
import { JOURNAL_FILE, SNAPSHOT_FILE, decodeLine } from '../../connectors/file/store.js';
import { LOCK_FILE, OWNER_FILE } from '../../connectors/file/lock.js';
import { isAtomicTemp } from '../../connectors/shared/durable-write.js';
import { demoFixtures, toSnapshot } from '../../connectors/mock/fixtures.js';
import { ephemeralSecrets } from '../../connectors/shared/ephemeral-secrets.js';
import { FILE_TEST_SECRETS } from './fixtures/file-secrets.js';

const dirs: string[] = [];
const open: FileCore[] = [];

async function tmp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'cardline-file-'));
  dirs.push(d);
  return d;
}

async function core(dir: string, opts: { lockTimeoutMs?: number; fixtures?: 'demo' | 'empty' } = {}): Promise<FileCore> {
  const c = await FileCore.open({ dir, lockTimeoutMs: 0, ...opts }, { secrets: FILE_TEST_SECRETS });
  open.push(c);
  return c;
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

// The cores read only the deadline and the key.
const ctx = (idempotencyKey?: string) => ({ signal: new AbortController().signal, idempotencyKey }) as ConnectorContext;
const limit = (amount: string, entityId = 'ENT-1001') => ({ entityId, amount, allowDecrease: false });
const physical = (kitNo: string, entityId?: string) => ({ kitNo, entityId, lockOnUpgrade: false });

/** A copy of a store's files as a crash would leave them: no close, no compaction (the lock is left out). */
async function crashCopy(from: string): Promise<string> {
  const to = await tmp();
  for (const name of await readdir(from)) if (name !== LOCK_FILE && name !== OWNER_FILE) await copyFile(join(from, name), join(to, name));
  return to;
}

const limitOf = (c: FileCore, entityId = 'ENT-1001') => c.store.bank.state.entities.get(entityId)!.creditLimitMinor;

describe('file connector', () => {
  it('is registered with its options schema', () => {
    const def = builtInConnectors.find((d) => d.id === 'file');
    expect(def?.version).toBe('1.0.0');
  });

  it('applies both operations and keeps them across close and re-open', async () => {
    const dir = await tmp();
    const c = await core(dir);
    expect(await c.upgradeLimit(limit('75000.00'), ctx())).toEqual({
      status: 'succeeded',
      value: { entityId: 'ENT-1001', previousLimit: '50000.00', newLimit: '75000.00' },
    });
    expect(await c.upgradeToPhysical(physical('KIT-2001', 'ENT-1001'), ctx())).toEqual({
      status: 'succeeded',
      value: { cardId: 'CARD-3001', entityId: 'ENT-1001', kitNo: 'KIT-2001', state: 'ACTIVE' },
    });
    await c.close();

    const again = await core(dir);
    expect(limitOf(again)).toBe(7_500_000n);
    expect(again.store.bank.state.cards.get('CARD-3001')).toMatchObject({ form: 'PHYSICAL', kitNo: 'KIT-2001', fulfilment: 'ORDERED' });
    expect(again.store.bank.state.kits.get('KIT-2001')?.mappedTo).toBe('CARD-3001');
    expect(await again.upgradeToPhysical(physical('KIT-2001', 'ENT-1002'), ctx())).toMatchObject({ status: 'rejected', code: 'PPCUST_018' });
  });

  it('replays the journal of a store that was never closed', async () => {
    const dir = await tmp();
    const c = await core(dir);
    for (const amount of ['51000.00', '52000.00', '53000.00']) await c.upgradeLimit(limit(amount), ctx());
    await c.upgradeToPhysical(physical('KIT-2101'), ctx());
    const lines = (await readFile(join(dir, JOURNAL_FILE), 'utf8')).split('\n').filter(Boolean);
    expect(lines.map((l) => decodeLine(l)?.seq)).toEqual([1, 2, 3, 4]);

    const crashed = await crashCopy(dir);
    const reopened = await core(crashed);
    expect(limitOf(reopened)).toBe(5_300_000n);
    expect(reopened.store.bank.state.cards.get('CARD-3003')).toMatchObject({ form: 'PHYSICAL', kitNo: 'KIT-2101' });
    // Opening compacts: the snapshot now holds everything and the journal is empty.
    expect((await stat(join(crashed, JOURNAL_FILE))).size).toBe(0);
    expect(JSON.parse(await readFile(join(crashed, SNAPSHOT_FILE), 'utf8')).seq).toBe(4);
  });

  it('starts from the empty fixtures when asked', async () => {
    const c = await core(await tmp(), { fixtures: 'empty' });
    expect(await c.upgradeLimit(limit('60000.00'), ctx())).toMatchObject({ status: 'rejected', code: 'ENTITY_NOT_FOUND' });
  });

  it('returns business refusals and writes nothing for them', async () => {
    const dir = await tmp();
    const c = await core(dir);
    expect(await c.upgradeLimit(limit('1.00', 'ENT-9'), ctx())).toMatchObject({ status: 'rejected', code: 'ENTITY_NOT_FOUND' });
    expect(await c.upgradeLimit(limit('40000.00'), ctx())).toMatchObject({ status: 'rejected', code: 'LIMIT_DECREASE_NOT_ALLOWED' });
    expect(await c.upgradeLimit(limit('0.00'), ctx())).toMatchObject({ status: 'rejected', code: 'LIMIT_NOT_POSITIVE' });
    expect(await c.upgradeToPhysical(physical('KIT-9999', 'ENT-1002'), ctx())).toEqual({
      status: 'rejected',
      code: 'PPCUST_018',
      message: 'Kit KIT-9999 is not known to the core.',
    });
    expect(await c.upgradeToPhysical(physical('KIT-2101', 'ENT-1001'), ctx())).toMatchObject({ status: 'rejected', code: 'PPCUST_018' });
    expect((await stat(join(dir, JOURNAL_FILE))).size).toBe(0);
    expect(limitOf(c)).toBe(5_000_000n);
  });

  it('applies nothing when the deadline passed before the call', async () => {
    const c = await core(await tmp());
    const ac = new AbortController();
    ac.abort();
    await expect(c.upgradeLimit(limit('90000.00'), { signal: ac.signal } as ConnectorContext)).rejects.toBeInstanceOf(ConnectorTimeoutError);
    expect(limitOf(c)).toBe(5_000_000n);
  });

  it('applies an idempotent retry once, also after re-open', async () => {
    const dir = await tmp();
    const c = await core(dir);
    const first = await c.upgradeLimit(limit('60000.00'), ctx('k-1'));
    expect(first).toEqual({ status: 'succeeded', value: { entityId: 'ENT-1001', previousLimit: '50000.00', newLimit: '60000.00' } });
    await c.upgradeLimit(limit('70000.00'), ctx('k-2'));
    expect(await c.upgradeLimit(limit('60000.00'), ctx('k-1'))).toEqual(first);
    const kit = await c.upgradeToPhysical(physical('KIT-2002', 'ENT-1002'), ctx('p-1'));
    expect(kit.status).toBe('succeeded');
    expect(await c.upgradeToPhysical(physical('KIT-2002', 'ENT-1002'), ctx('p-1'))).toEqual(kit);
    expect(limitOf(c)).toBe(7_000_000n);

    // Never closed (journal replay), then closed (snapshot): the outcome is remembered both ways.
    const crashed = await core(await crashCopy(dir));
    expect(await crashed.upgradeLimit(limit('60000.00'), ctx('k-1'))).toEqual(first);
    expect(limitOf(crashed)).toBe(7_000_000n);
    await c.close();
    const again = await core(dir);
    expect(await again.upgradeLimit(limit('60000.00'), ctx('k-1'))).toEqual(first);
    expect(await again.upgradeToPhysical(physical('KIT-2002', 'ENT-1002'), ctx('p-1'))).toEqual(kit);
    expect(limitOf(again)).toBe(7_000_000n);
  });

  it('applies concurrent calls atomically, each once', async () => {
    const dir = await tmp();
    const c = await core(dir);
    const amounts = Array.from({ length: 40 }, (_, i) => `${60000 + i}.00`);
    const results = await Promise.all(amounts.map((a) => c.upgradeLimit({ ...limit(a), allowDecrease: true }, ctx(`c-${a}`))));
    expect(results.every((r) => r.status === 'succeeded')).toBe(true);
    // Each call saw the one before it: the previous limits chain without gaps.
    const chain = results.map((r) => (r.status === 'succeeded' ? [r.value.previousLimit, r.value.newLimit] : []));
    for (let i = 1; i < chain.length; i++) expect(chain[i]![0]).toBe(chain[i - 1]![1]);
    await c.close();
    expect(limitOf(await core(dir))).toBe(6_003_900n);
  });

  it('exports and imports fixtures (round trip), also while the directory is open', async () => {
    const a = await tmp();
    const c = await core(a);
    await c.upgradeLimit(limit('80000.00'), ctx('x'));
    await c.upgradeToPhysical(physical('KIT-2003', 'ENT-1003'), ctx());
    const exported = await exportFixtures(a, FILE_TEST_SECRETS);
    expect(exported.entities.find((e) => e.entityId === 'ENT-1001')?.creditLimitMinor).toBe('8000000');
    await expect(importFixtures(a, exported, FILE_TEST_SECRETS)).rejects.toThrow(/locked by pid/);
    await c.close();
    expect(await exportFixtures(a, FILE_TEST_SECRETS)).toEqual(exported);

    const b = await tmp();
    await importFixtures(join(b, 'tenant'), JSON.parse(JSON.stringify(exported)), FILE_TEST_SECRETS);
    expect(await exportFixtures(join(b, 'tenant'), FILE_TEST_SECRETS)).toEqual(exported);
    const imported = await core(join(b, 'tenant'));
    expect(limitOf(imported)).toBe(8_000_000n);
    expect(imported.store.bank.state.cards.get('CARD-3003')?.kitNo).toBe('KIT-2003');
    expect(await imported.upgradeLimit(limit('80000.00'), ctx('x'))).toMatchObject({ value: { previousLimit: '50000.00' } });
    await imported.close();

    // An import replaces a directory's state, journal included.
    const fresh = structuredClone(exported);
    fresh.entities[0]!.creditLimitMinor = '100';
    await importFixtures(a, fresh, FILE_TEST_SECRETS);
    expect(limitOf(await core(a))).toBe(100n);
    await expect(importFixtures(b, { entities: [{ entityId: 'E' }], cards: [], kits: [] }, FILE_TEST_SECRETS)).rejects.toThrow(/Fixtures are invalid: \/entities\/0/);
  });

  it('opens a snapshot written before sealing (version 1, card data in clear) and rewrites it sealed', async () => {
    const dir = await tmp();
    const state = toSnapshot(demoFixtures());
    await writeFile(join(dir, SNAPSHOT_FILE), JSON.stringify({ format: 'cardline-file-core', version: 1, seq: 0, writtenAt: new Date().toISOString(), state }));
    const c = await core(dir);
    const card = await c.getCard({ cardId: 'CARD-3001' }, ctx());
    expect(card).toMatchObject({ status: 'succeeded', value: { sensitive: { pan: '4000000000030017', cvv: state.cards[0]!.cvv } } });
    const text = await readFile(join(dir, SNAPSHOT_FILE), 'utf8');
    expect(JSON.parse(text)).toMatchObject({ version: 2 });
    for (const { pan, cvv } of state.cards) {
      expect(text).not.toContain(pan);
      expect(text).not.toContain(`"cvv":"${cvv}"`);
    }
  });

  it('refuses to open a directory sealed with other secrets, naming the master key', async () => {
    const dir = await tmp();
    await (await core(dir)).close();
    const err = await FileCore.open({ dir, lockTimeoutMs: 0 }, { secrets: ephemeralSecrets() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectorUnavailableError);
    expect((err as Error).message).toMatch(/was sealed under another key\. The gateway's master key \(CARDLINE_MASTER_KEY\) or the tenant id/);
  });

  it('refuses a second instance while the first holds the directory, and lets it in after close', async () => {
    const dir = await tmp();
    const first = await core(dir);
    const err = await FileCore.open({ dir, lockTimeoutMs: 0 }, { secrets: FILE_TEST_SECRETS }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectorUnavailableError);
    expect((err as Error).message).toContain(dir);
    expect((err as Error).message).toContain(`pid ${process.pid}`);
    await first.upgradeLimit(limit('55000.00'), ctx());
    await first.close();
    const second = await core(dir);
    expect(limitOf(second)).toBe(5_500_000n);

    // With lockTimeoutMs it waits for the holder to let go.
    const waiting = FileCore.open({ dir, lockTimeoutMs: 5_000 }, { secrets: FILE_TEST_SECRETS });
    setTimeout(() => void second.close(), 100);
    const third = await waiting;
    open.push(third);
    expect(limitOf(third)).toBe(5_500_000n);
  });

  it('takes over the lock of a dead process but not one held on another host', async () => {
    const dir = await tmp();
    await (await core(dir)).close();
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    // What a SIGKILLed holder leaves: proper-lockfile's directory, freshly touched, and the owner file naming it.
    const leave = async (host: string) => {
      await mkdir(join(dir, LOCK_FILE));
      const { ino } = await stat(join(dir, LOCK_FILE));
      await writeFile(join(dir, OWNER_FILE), JSON.stringify({ pid: dead, host, since: '', ino }));
    };
    await leave(hostname());
    await (await core(dir)).close();
    expect(await readdir(dir)).not.toContain(LOCK_FILE);

    await leave('elsewhere');
    await expect(FileCore.open({ dir, lockTimeoutMs: 0 }, { secrets: FILE_TEST_SECRETS })).rejects.toThrow(/locked by pid \d+ on elsewhere/);
    // An owner file left by an older lock does not speak for the one there now.
    await rm(join(dir, LOCK_FILE), { recursive: true });
    await mkdir(join(dir, LOCK_FILE));
    await writeFile(join(dir, OWNER_FILE), JSON.stringify({ pid: dead, host: hostname(), since: '', ino: 1 }));
    await expect(FileCore.open({ dir, lockTimeoutMs: 0 }, { secrets: FILE_TEST_SECRETS })).rejects.toThrow(/is locked by another process/);
  });

  it('ignores a torn last journal line, keeping every earlier write', async () => {
    const dir = await tmp();
    const c = await core(dir);
    for (const amount of ['51000.00', '52000.00', '53000.00']) await c.upgradeLimit(limit(amount), ctx());
    const lastLine = (await readFile(join(dir, JOURNAL_FILE), 'utf8')).split('\n').at(-2)!;

    for (const garbage of [lastLine.slice(0, 40), 'garbage\n', lastLine.replace('53000.00', '99000.00') + '\n', '\0\0\0\0']) {
      const crashed = await crashCopy(dir);
      await appendFile(join(crashed, JOURNAL_FILE), garbage);
      const reopened = await core(crashed);
      expect(limitOf(reopened)).toBe(5_300_000n);
      // New writes after the torn tail land cleanly and survive another re-open.
      await reopened.upgradeLimit(limit('54000.00'), ctx());
      await reopened.close();
      expect(limitOf(await core(crashed))).toBe(5_400_000n);
    }
  });

  it('refuses a journal damaged before intact lines (acknowledged writes could be lost)', async () => {
    const dir = await tmp();
    const c = await core(dir);
    for (const amount of ['51000.00', '52000.00']) await c.upgradeLimit(limit(amount), ctx());
    const crashed = await crashCopy(dir);
    const text = await readFile(join(crashed, JOURNAL_FILE), 'utf8');
    await writeFile(join(crashed, JOURNAL_FILE), text.replace('51000.00', '51000.01'));
    await expect(FileCore.open({ dir: crashed, lockTimeoutMs: 0 }, { secrets: FILE_TEST_SECRETS })).rejects.toThrow(/line 1 is damaged but later lines are intact/);
    // The failed open released the lock.
    expect(await readdir(crashed)).not.toContain(LOCK_FILE);
  });

  it('ignores (and removes) leftover temp files', async () => {
    const dir = await tmp();
    const c = await core(dir);
    await c.upgradeLimit(limit('61000.00'), ctx());
    await c.close();
    await writeFile(join(dir, `${SNAPSHOT_FILE}.3735928559`), '{"format":"cardline-file-core","seq":99,"sta');
    const again = await core(dir);
    expect(limitOf(again)).toBe(6_100_000n);
    expect((await readdir(dir)).filter((n) => isAtomicTemp(n, SNAPSHOT_FILE))).toEqual([]);

    // A directory with nothing but a temp file (killed during its first snapshot) starts from the fixtures.
    const empty = await tmp();
    await writeFile(join(empty, `${SNAPSHOT_FILE}.1`), '{"torn');
    expect(limitOf(await core(empty))).toBe(5_000_000n);
  });

  it('stops taking calls once closed', async () => {
    const c = await core(await tmp());
    await c.close();
    await expect(c.upgradeLimit(limit('60000.00'), ctx())).rejects.toBeInstanceOf(ConnectorUnavailableError);
    await expect(c.health()).rejects.toThrow(/closed/);
  });
});
