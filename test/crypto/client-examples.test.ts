// The client examples of docs/api.md run as an integrator runs them (npx tsx examples/client/…) against a
// gateway listening on 127.0.0.1: encrypted body and fields go in, encrypted card fields come out.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoFixtures } from '../../connectors/mock/fixtures.js';
import type { MockCore } from '../../connectors/mock/index.js';
import { PASSWORD, createTestApp, type TestApp } from '../helpers/app.js';
import { runProcess, type Run } from '../helpers/spawn.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSX = join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const LIMIT_PATH = '/credit-line-management/business-entity-manager/upgradeLimit';

let t: TestApp;
let gateway: string;
let dir: string;

beforeAll(async () => {
  t = await createTestApp();
  gateway = await t.app.listen({ host: '127.0.0.1', port: 0 });
  dir = await mkdtemp(join(tmpdir(), 'cardline-client-'));
});
afterAll(async () => {
  await t.close();
  await rm(dir, { recursive: true, force: true });
});

function runExample(script: string, args: string[]): Promise<Run> {
  return runProcess(process.execPath, [TSX, join(ROOT, 'examples', 'client', script), '--gateway', gateway, ...args], {
    cwd: ROOT,
    env: { ...process.env, CARDLINE_PASSWORD: PASSWORD },
  });
}

const mockCore = async () => (await t.app.cardline.connectors.forTenant((await t.app.cardline.tenants.get('demo'))!)) as unknown as MockCore;

describe('client examples', () => {
  it('encrypt-request.ts: an encrypted body raises the limit, encrypted address lines reach the core', { timeout: 60_000 }, async () => {
    const run = await runExample('encrypt-request.ts', ['--tenant', 'demo', '--username', 'integration', '--entity', 'ENT-1002', '--amount', '82000.00', '--kit', 'KIT-2003']);
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(run.stdout).toContain('POST /api/authenticate → 200 (token received)');
    expect(run.stdout).not.toContain('eyJ');
    expect(run.stdout).toContain(`POST ${LIMIT_PATH} → 200 {"result":true,"exception":null,"pagination":null}`);
    expect(run.stdout).toContain('PUT /v1/cards/upgrade/physical → 200 {"result":{"message":"Card CARD-3002 upgraded to physical with kit KIT-2003"},"pagination":null}');
    const core = await mockCore();
    expect(core.state.entities.get('ENT-1002')!.creditLimitMinor).toBe(8_200_000n);
    expect(core.state.cards.get('CARD-3002')!.deliveryAddress).toEqual({
      address1: '1 Rua Augusta',
      address2: '3rd floor',
      city: 'Lisbon',
      state: 'Lisboa',
      country: 'PT',
      pin: '1100-053',
    });
  });

  it('decrypt-response.ts: registers the client key, then decrypts the card PAN, CVV and expiry', { timeout: 60_000 }, async () => {
    const keyFile = join(dir, 'client-key.json');
    const run = await runExample('decrypt-response.ts', ['--tenant', 'demo', '--username', 'admin', '--card', 'CARD-3003', '--client-key', keyFile, '--register']);
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^registered client key client-[0-9a-f-]{36}$/);
    const fixture = demoFixtures().cards.get('CARD-3003')!;
    expect(JSON.parse(lines[1]!)).toEqual({
      cardId: 'CARD-3003',
      panMasked: `${fixture.pan.slice(0, 6)}******${fixture.pan.slice(-4)}`,
      pan: fixture.pan,
      cvv: fixture.cvv,
      expiry: fixture.expiry,
    });
  });
});
