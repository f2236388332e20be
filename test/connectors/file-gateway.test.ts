// The gateway end to end with a tenant on the file connector: both operations, a refusal, state on disk
// after close, with the card numbers and CVVs sealed under the tenant's connector secrets.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileCore, exportFixtures } from '../../connectors/file/index.js';
import { JOURNAL_FILE, SNAPSHOT_FILE, type SnapshotFile } from '../../connectors/file/store.js';
import { demoFixtures } from '../../connectors/mock/fixtures.js';
import { connectorSecrets } from '../../src/crypto/connector-secrets.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { findPans } from '../helpers/log-scan.js';
import { LIMIT_URL, PASSWORD, PROBLEM_BASE, UPGRADE_URL, createTestApp, type TestApp } from '../helpers/app.js';

const TENANT = 'file-bank';
/** What the gateway gives the tenant's file connector: secrets derived from its master key for this tenant. */
const secrets = () => connectorSecrets(new MasterKey(t.masterKey), TENANT);
let t: TestApp;
let dir: string;
let closed = false;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cardline-file-gw-'));
  t = await createTestApp({ tenants: [{ id: TENANT, config: { connector: { id: 'file', options: { dir: join(dir, TENANT) } } } }] });
  await t.app.cardline.users.add(TENANT, 'admin', 'Admin', PASSWORD);
});
afterAll(async () => {
  if (!closed) await t.close();
  await rm(dir, { recursive: true, force: true });
});

const headers = async () => ({ TENANT, authorization: `Bearer ${await t.token('Admin', TENANT)}` });

describe('a tenant on the file connector', () => {
  it('upgrades a credit limit', async () => {
    const res = await t.inject({ method: 'POST', url: LIMIT_URL, headers: await headers(), payload: { entityId: 'ENT-1001', amount: '75000.00' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ result: true, exception: null, pagination: null });
  });

  it('upgrades a virtual card to physical', async () => {
    const res = await t.inject({
      method: 'PUT',
      url: UPGRADE_URL,
      headers: await headers(),
      payload: { kitNo: 'KIT-2001', entityId: 'ENT-1001', communicationAddress: { usePrimaryAddress: true } },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ result: { message: 'Card CARD-3001 upgraded to physical with kit KIT-2001' }, pagination: null });
  });

  it('refuses an unknown kit with 409 PPCUST_018', async () => {
    const res = await t.inject({ method: 'PUT', url: UPGRADE_URL, headers: await headers(), payload: { kitNo: 'KIT-9999', entityId: 'ENT-1002' } });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({
      type: `${PROBLEM_BASE}/problem-with-message`,
      title: 'Invalid Kit',
      status: 409,
      message: 'error.business',
      detail: 'Kit KIT-9999 is not known to the core.',
      businessCode: 'PPCUST_018',
    });
  });

  it('keeps the state on disk after the gateway closes (and releases the directory)', async () => {
    await t.close();
    closed = true;
    // exportFixtures takes no lock; the open below proves close() released it.
    const state = await exportFixtures(join(dir, TENANT), secrets());
    expect(state.entities.find((e) => e.entityId === 'ENT-1001')?.creditLimitMinor).toBe('7500000');
    expect(state.cards.find((c) => c.cardId === 'CARD-3001')).toMatchObject({ form: 'PHYSICAL', kitNo: 'KIT-2001' });
    expect(state.kits.find((k) => k.kitNo === 'KIT-2001')?.mappedTo).toBe('CARD-3001');
    const core = await FileCore.open({ dir: join(dir, TENANT), lockTimeoutMs: 0 }, { secrets: secrets() });
    await core.close();
  });

  it("holds no card number or CVV in clear in any of its files; the tenant's secrets open them", async () => {
    const cards = demoFixtures().cards;
    const files = await readdir(join(dir, TENANT));
    expect(files).toEqual(expect.arrayContaining([SNAPSHOT_FILE, JOURNAL_FILE]));
    const text = (await Promise.all(files.map((f) => readFile(join(dir, TENANT, f), 'utf8')))).join('\n');
    for (const card of cards.values()) {
      expect(text).not.toContain(card.pan);
      expect(text).not.toContain(`"cvv":"${card.cvv}"`);
    }
    expect(findPans(text)).toEqual([]);
    const snapshot = JSON.parse(await readFile(join(dir, TENANT, SNAPSHOT_FILE), 'utf8')) as SnapshotFile;
    expect(snapshot.version).toBe(2);
    // Opened with the tenant's secrets (the gateway's master key, this tenant), they are the card's own.
    const exported = await exportFixtures(join(dir, TENANT), secrets());
    expect(exported.cards.map((c) => [c.cardId, c.pan, c.cvv])).toEqual([...cards.values()].map((c) => [c.cardId, c.pan, c.cvv]));
    // Another tenant's secrets (or another master key) cannot.
    await expect(exportFixtures(join(dir, TENANT), connectorSecrets(new MasterKey(t.masterKey), 'demo'))).rejects.toThrow(
      /the card data in snapshot\.json was sealed under another key\. The gateway's master key \(CARDLINE_MASTER_KEY\) or the tenant id is not the one that wrote this directory/,
    );
  });
});
