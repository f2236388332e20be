// JWE fields: the address lines of a physical upgrade (spec 5.3 rule 2), marked sensitive in the schema,
// may each arrive as a compact JWE; they are decrypted before validation, reach the core as plaintext,
// and neither the plaintext nor the JWE reaches a log line or an audit record.
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ConnectorContext, PhysicalUpgradeInput } from '../../connectors/contract.js';
import { demoFixtures } from '../../connectors/mock/fixtures.js';
import type { MockCore } from '../../connectors/mock/index.js';
import { PhysicalUpgradeBody } from '../../schemas/cards.js';
import { loggerOptions } from '../../src/logging.js';
import { sensitivePaths } from '../../src/plugins/register.js';
import { PASSWORD, PROBLEM_BASE, UPGRADE_URL, createTestApp, type TestApp } from '../helpers/app.js';
import { scanForSecrets } from '../helpers/log-scan.js';

const ADDRESS1 = 'Flat 4B, 221 Baker Street';
const ADDRESS2 = 'Marylebone, door code 7731';

let t: TestApp;
const lines: string[] = [];
let core: MockCore;

beforeAll(async () => {
  const stream = { write: (chunk: string) => void lines.push(chunk) };
  t = await createTestApp({ env: { LOG_LEVEL: 'trace' }, logger: pino(loggerOptions('trace'), stream) });
  core = (await t.app.cardline.connectors.forTenant((await t.app.cardline.tenants.get('demo'))!)) as unknown as MockCore;
});
afterAll(() => t.close());
beforeEach(() => {
  Object.assign(core.state, demoFixtures());
});

async function upgrade(communicationAddress: Record<string, unknown>, kitNo = 'KIT-2001', entityId = 'ENT-1001') {
  return t.inject({
    method: 'PUT',
    url: UPGRADE_URL,
    headers: { 'X-TENANT-ID': 'demo', authorization: `Bearer ${await t.token('Operations')}` },
    payload: { kitNo, entityId, communicationAddress },
  });
}

const place = { city: 'London', state: 'Greater London', country: 'GB', pin: 'NW1 6XE' };

describe('sensitive fields of the schema', () => {
  it('the physical upgrade body marks exactly the two address lines', () => {
    expect(sensitivePaths(PhysicalUpgradeBody)).toEqual(['communicationAddress.address1', 'communicationAddress.address2']);
  });
});

describe('address lines as JWEs', () => {
  it('decrypts both lines before validation and hands the core the plaintext', async () => {
    const res = await upgrade({ address1: await t.encrypt(ADDRESS1), address2: await t.encrypt(ADDRESS2), ...place });
    expect([res.statusCode, res.json()]).toEqual([200, { result: { message: 'Card CARD-3001 upgraded to physical with kit KIT-2001' }, pagination: null }]);
    expect(core.state.cards.get('CARD-3001')!.deliveryAddress).toEqual({ address1: ADDRESS1, address2: ADDRESS2, ...place });
  });

  it('accepts one line encrypted and the other in plain text', async () => {
    const res = await upgrade({ address1: await t.encrypt(ADDRESS1), address2: 'plain line', ...place });
    expect(res.statusCode).toBe(200);
    expect(core.state.cards.get('CARD-3001')!.deliveryAddress).toMatchObject({ address1: ADDRESS1, address2: 'plain line' });
  });

  it('validates the decrypted value: an empty line is NotBlank, as in plain text', async () => {
    const res = await upgrade({ address1: await t.encrypt(''), ...place });
    expect([res.statusCode, res.json()]).toEqual([
      400,
      {
        type: `${PROBLEM_BASE}/constraint-violation`,
        title: 'Method argument not valid',
        status: 400,
        message: 'error.validation',
        fieldErrors: [{ field: 'communicationAddress.address1', message: 'NotBlank', objectName: 'physicalCardUpgradeRequest' }],
      },
    ]);
  });

  it('refuses a line encrypted to another key with the generic 400, and the card is not upgraded', async () => {
    const before = structuredClone(core.state.cards.get('CARD-3001'));
    const res = await upgrade({ address1: await t.encrypt(ADDRESS1, 'demo-b'), ...place });
    expect([res.statusCode, res.json()]).toEqual([
      400,
      {
        type: `${PROBLEM_BASE}/problem-with-message`,
        title: 'Bad Request',
        status: 400,
        message: 'error.http.400',
        detail: 'The encrypted payload could not be processed.',
      },
    ]);
    expect(core.state.cards.get('CARD-3001')).toEqual(before);
  });

  it('refuses a replayed address JWE', async () => {
    const jwe = await t.encrypt(ADDRESS1);
    expect((await upgrade({ address1: jwe, ...place })).statusCode).toBe(200);
    const again = await upgrade({ address1: jwe, ...place }, 'KIT-2002', 'ENT-1002');
    expect(again.statusCode).toBe(400);
    expect(again.json().detail).toBe('The encrypted payload could not be processed.');
  });

  it('does not decrypt a field the schema does not mark: a JWE city is just a too-long string', async () => {
    const res = await upgrade({ address1: ADDRESS1, ...place, city: await t.encrypt('London') });
    expect(res.statusCode).toBe(400);
    expect(res.json().fieldErrors).toEqual([{ field: 'communicationAddress.city', message: 'Size', objectName: 'physicalCardUpgradeRequest' }]);
  });
});

describe('logs and audit records', () => {
  it('never show the address plaintext or its JWE, even when a connector logs its input', async () => {
    const original = core.upgradeToPhysical.bind(core);
    // A careless connector: logs the whole input it received (with the decrypted address lines).
    core.upgradeToPhysical = (input: PhysicalUpgradeInput, ctx: ConnectorContext) => {
      ctx.logger.info({ input }, 'core call');
      return original(input, ctx);
    };
    const jwes = [await t.encrypt(ADDRESS1), await t.encrypt(ADDRESS2)];
    try {
      const ok = await upgrade({ address1: jwes[0], address2: jwes[1], ...place });
      expect(ok.statusCode).toBe(200);
      const refused = await upgrade({ address1: await t.encrypt(ADDRESS1, 'demo-b'), ...place }, 'KIT-2002', 'ENT-1002');
      expect(refused.statusCode).toBe(400);
    } finally {
      core.upgradeToPhysical = original;
    }
    const text = lines.join('');
    // The scan reads real lines: the connector's line is there, with the lines masked.
    const coreLine = text.split('\n').find((l) => l.includes('"msg":"core call"'));
    expect(coreLine).toBeDefined();
    expect(JSON.parse(coreLine!).input.communicationAddress).toEqual({ address1: '[REDACTED]', address2: '[REDACTED]', ...place });
    expect(text).toContain('"msg":"encrypted value refused"');
    expect(scanForSecrets(text, [PASSWORD, ADDRESS1, ADDRESS2, 'Baker Street', 'door code', ...jwes])).toEqual([]);

    const audit = await t.db.query<{ target: unknown; actor: string }>(
      "SELECT target, actor FROM audit_log WHERE tenant_id = 'demo' AND action = 'card.upgrade-physical'",
    );
    expect(audit.rows.length).toBeGreaterThanOrEqual(2);
    const records = JSON.stringify(audit.rows);
    for (const secret of [ADDRESS1, ADDRESS2, 'Baker Street', 'eyJ', ...jwes]) expect(records).not.toContain(secret);
  });
});
