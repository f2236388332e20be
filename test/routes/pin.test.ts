// PUT /v1/cards/{cardId}/pin end to end on the mock core: the block is translated in the tenant's HSM to the
// core's key, the core records that a PIN was set, and neither block reaches a response, a log or the audit.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SetPinInput } from '../../connectors/contract.js';
import type { MockCore } from '../../connectors/mock/index.js';
import { DEMO_PIN_KEYS } from '../../src/crypto/hsm/demo.js';
import { encryptPinBlock, softwareCipher, decryptPinBlock, toHex, type PinBlockFormat } from '../../src/crypto/pin-block.js';
import { loggerOptions } from '../../src/logging.js';
import { PASSWORD, PROBLEM_BASE, createTestApp, type TestApp } from '../helpers/app.js';
import { scanForSecrets } from '../helpers/log-scan.js';

const keyHex = (id: string) => DEMO_PIN_KEYS.find((k) => k.keyId === id)!.hex!;
const AES = softwareCipher('aes128', Buffer.from(keyHex('demo-zpk-aes'), 'hex'));
const TDES = softwareCipher('tdes2', Buffer.from(keyHex('demo-zpk-tdes'), 'hex'));
const url = (cardId: string) => `/v1/cards/${cardId}/pin`;

const INVALID_BLOCK = {
  type: `${PROBLEM_BASE}/problem-with-message`,
  title: 'Bad Request',
  status: 400,
  message: 'error.http.400',
  detail: "The PIN block is not valid for this card under the tenant's PIN key and the given format.",
};

let t: TestApp;
const lines: string[] = [];
/** Every block this file sends or sees: none may appear in a log line. */
const blocks: string[] = [];
const setPinCalls: SetPinInput[] = [];
let mock: MockCore;

const card = (cardId: string) => mock.state.cards.get(cardId)!;
const block = (pin: string, cardId: string, format: PinBlockFormat, cipher = format === 4 ? AES : TDES) => {
  const hex = toHex(encryptPinBlock(pin, card(cardId).pan, format, cipher));
  blocks.push(hex, hex.toLowerCase());
  return hex;
};

beforeAll(async () => {
  const stream = { write: (chunk: string) => void lines.push(chunk) };
  t = await createTestApp({
    env: { LOG_LEVEL: 'trace' },
    logger: pino(loggerOptions('trace'), stream),
    tenants: [{ id: 'nopin', config: { connector: { id: 'mock', options: { fixtures: 'demo' } } } }],
  });
  await t.app.cardline.users.add('nopin', 'admin', 'Admin', PASSWORD);
  // A PIN is set on physical cards only: CARD-3001 and CARD-3002 are upgraded, CARD-3003 stays virtual.
  for (const [entityId, kitNo] of [['ENT-1001', 'KIT-2001'], ['ENT-1002', 'KIT-2002']]) {
    const res = await t.inject({
      method: 'PUT',
      url: '/v1/cards/upgrade/physical',
      headers: { 'X-TENANT-ID': 'demo', authorization: `Bearer ${await t.token('Admin')}` },
      payload: { kitNo, entityId, communicationAddress: { usePrimaryAddress: true } },
    });
    if (res.statusCode !== 200) throw new Error(`upgrade failed: ${res.body}`);
  }
  mock = (await t.app.cardline.connectors.forTenant((await t.app.cardline.tenants.get('demo'))!)) as MockCore;
  // Sees what the core is handed, as a core would.
  const setPin = mock.setPin.bind(mock);
  mock.setPin = (input, ctx) => {
    setPinCalls.push(structuredClone(input));
    blocks.push(input.pinBlock);
    return setPin(input, ctx);
  };
});
afterAll(() => t?.close());

const put = async (cardId: string, payload: unknown, role: Parameters<TestApp['token']>[0] = 'API Integration', tenant = 'demo') =>
  t.inject({ method: 'PUT', url: url(cardId), headers: { 'X-TENANT-ID': tenant, authorization: `Bearer ${await t.token(role, tenant)}` }, payload: payload as object });

/** The PIN inside a block the core received, read back through the HSM (the core's key never leaves it). */
async function pinTheCoreGot(call: SetPinInput, cardId: string): Promise<string> {
  const back = await t.app.cardline.hsm!.forTenant('demo').translatePinBlock({
    pinBlock: call.pinBlock,
    format: call.format,
    pan: card(cardId).pan,
    fromKeyId: call.keyId,
    toKeyId: 'demo-zpk-aes',
    toFormat: 4,
  });
  return decryptPinBlock(Buffer.from(back.pinBlock, 'hex'), card(cardId).pan, 4, AES);
}

describe('PUT /v1/cards/{cardId}/pin: success', () => {
  it('translates a format-4 block to the core key and format, and the core records that a PIN was set', async () => {
    expect(card('CARD-3001').pinSet).toBe(false);
    const sent = block('4821', 'CARD-3001', 4);
    const res = await put('CARD-3001', { pinBlock: sent, format: 4 });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ result: { message: 'PIN set' }, pagination: null });
    expect(card('CARD-3001').pinSet).toBe(true);
    expect(setPinCalls).toEqual([{ cardId: 'CARD-3001', pinBlock: expect.stringMatching(/^[0-9A-F]{32}$/), format: 4, keyId: 'demo-core-pek' }]);
    expect(setPinCalls[0]!.pinBlock).not.toBe(sent);
    expect(await pinTheCoreGot(setPinCalls[0]!, 'CARD-3001')).toBe('4821');
    // The core keeps that a PIN was set, never a block.
    const kept = JSON.stringify([...mock.state.cards.values(), ...mock.state.idempotency.values()], (_k, v) => (typeof v === 'bigint' ? String(v) : v));
    for (const b of [sent, setPinCalls[0]!.pinBlock]) expect(kept).not.toContain(b);
  });

  it.each([
    [0, 'demo-zpk-tdes', '123456789012'],
    [3, 'demo-zpk-tdes', '0000'],
    [4, 'demo-zpk-aes', '98765'],
  ] as const)('accepts format %i under %s (PIN of %s digits) and sends format 4 to the core', async (format, keyId, pin) => {
    setPinCalls.length = 0;
    const res = await put('CARD-3002', { pinBlock: block(pin, 'CARD-3002', format).toLowerCase(), format, keyId }, 'Operations');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ result: { message: 'PIN set' }, pagination: null });
    expect(setPinCalls).toHaveLength(1);
    expect(setPinCalls[0]!.format).toBe(4);
    expect(await pinTheCoreGot(setPinCalls[0]!, 'CARD-3002')).toBe(pin);
  });

  it('accepts the block wrapped in a JWE to the tenant key', async () => {
    setPinCalls.length = 0;
    const res = await put('CARD-3001', { pinBlock: await t.encrypt(block('2468', 'CARD-3001', 4)), format: 4 }, 'Admin');
    expect(res.statusCode).toBe(200);
    expect(await pinTheCoreGot(setPinCalls[0]!, 'CARD-3001')).toBe('2468');
  });
});

describe('PUT /v1/cards/{cardId}/pin: refusals', () => {
  it('answers one generic 400 for every block that fails after decryption, and the core is not called', async () => {
    setPinCalls.length = 0;
    const other = softwareCipher('aes128', Buffer.alloc(16, 7));
    const byHand = (fieldHex: string) => {
      // A format-4 block built by hand around a malformed PIN field, enciphered under the demo key.
      const pan = card('CARD-3001').pan;
      const panField = Buffer.from(`${pan.length - 12}${pan}`.padEnd(32, '0'), 'hex');
      const inner = AES.encrypt(Buffer.from(fieldHex, 'hex'));
      return toHex(AES.encrypt(inner.map((b, i) => b ^ panField[i]!)));
    };
    const malformed = [
      toHex(encryptPinBlock('1234', '4111111111111111', 4, AES)), // a block made for another card number
      toHex(encryptPinBlock('1234', card('CARD-3001').pan, 4, other)), // another key
      byHand('041234AAAAAAAAAA146C6601F4A8035C'), // control nibble 0
      byHand('43123AAAAAAAAAAA146C6601F4A8035C'), // PIN length 3
      byHand('4D1234567890123A146C6601F4A8035C'), // PIN length 13
      byHand('441234AAAAAAAAAF146C6601F4A8035C'), // bad fill
      byHand('44123AAAAAAAAAAA146C6601F4A8035C'), // non-decimal PIN digit
    ];
    blocks.push(...malformed);
    for (const pinBlock of malformed) {
      const res = await put('CARD-3001', { pinBlock, format: 4 });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual(INVALID_BLOCK);
    }
    // A format-0 block with a bad fill, under the TDES key.
    const pan = card('CARD-3001').pan;
    const panField = Buffer.from(`0000${pan.slice(0, -1).slice(-12)}`, 'hex');
    const badFill = toHex(TDES.encrypt(Buffer.from('041234FFFFFFFFFE', 'hex').map((b, i) => b ^ panField[i]!)));
    blocks.push(badFill);
    const res0 = await put('CARD-3001', { pinBlock: badFill, format: 0, keyId: 'demo-zpk-tdes' });
    expect(res0.json()).toEqual(INVALID_BLOCK);
    expect(setPinCalls).toEqual([]);
  });

  it('refuses malformed input with field errors', async () => {
    const valid = block('1234', 'CARD-3001', 4);
    const cases: [unknown, { field: string; message: string }[]][] = [
      [{ pinBlock: `${valid.slice(0, 31)}G`, format: 4 }, [{ field: 'pinBlock', message: 'Pattern' }]],
      [{ pinBlock: valid.slice(0, 30), format: 4 }, [{ field: 'pinBlock', message: 'Pattern' }]],
      [{ pinBlock: valid, format: 0, keyId: 'demo-zpk-tdes' }, [{ field: 'pinBlock', message: 'Size' }]],
      [{ pinBlock: valid.slice(0, 16), format: 4 }, [{ field: 'pinBlock', message: 'Size' }]],
      [{ format: 4 }, [{ field: 'pinBlock', message: 'NotNull' }]],
      [{ pinBlock: valid, format: 4, pin: '1234' }, [{ field: 'pin', message: 'UnknownProperty' }]],
      [{ pinBlock: valid, format: 4, keyId: 'no spaces' }, [{ field: 'keyId', message: 'Pattern' }]],
    ];
    for (const [payload, fieldErrors] of cases) {
      const res = await put('CARD-3001', payload);
      expect({ status: res.statusCode, body: res.json() }).toEqual({
        status: 400,
        body: {
          type: `${PROBLEM_BASE}/constraint-violation`,
          title: 'Method argument not valid',
          status: 400,
          message: 'error.validation',
          fieldErrors: fieldErrors.map((e) => ({ ...e, objectName: 'setPinRequest' })),
        },
      });
    }
    const badFormat = await put('CARD-3001', { pinBlock: valid, format: 1 });
    expect(badFormat.statusCode).toBe(400);
    expect(badFormat.json().fieldErrors.map((e: { field: string }) => e.field)).toContain('format');
  });

  it('names key problems the caller can fix', async () => {
    const b4 = block('1234', 'CARD-3001', 4);
    const problem = (detail: string) => ({ type: `${PROBLEM_BASE}/problem-with-message`, title: 'Bad Request', status: 400, message: 'error.http.400', detail });
    expect((await put('CARD-3001', { pinBlock: b4, format: 4, keyId: 'nope' })).json()).toEqual(problem("The tenant has no PIN key 'nope'."));
    expect((await put('CARD-3001', { pinBlock: b4, format: 4, keyId: 'demo-core-pek' })).json()).toEqual(
      problem("keyId names the core's PIN key; send the block under one of the tenant's PIN keys."),
    );
    expect((await put('CARD-3001', { pinBlock: b4, format: 4, keyId: 'demo-zpk-tdes' })).json()).toEqual(
      problem("Key 'demo-zpk-tdes' is tdes2; format 4 needs an AES key (aes128 or aes256); send a block of a format that key serves, or name another key with keyId."),
    );
    expect((await put('CARD-3001', { pinBlock: block('1234', 'CARD-3001', 0), format: 0 })).json()).toEqual(
      problem("Key 'demo-zpk-aes' is aes128; format 0 needs a 2-key TDES key (tdes2); send a block of a format that key serves, or name another key with keyId."),
    );
  });

  it('answers 409 for an unknown card, a virtual card and a tenant without PIN keys', async () => {
    const res = await put('CARD-9999', { pinBlock: block('1234', 'CARD-3001', 4), format: 4 });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ title: 'Card Not Found', status: 409, message: 'error.business', businessCode: 'CARD_NOT_FOUND' });
    const virtual = await put('CARD-3003', { pinBlock: block('1234', 'CARD-3003', 4), format: 4 });
    expect(virtual.statusCode).toBe(409);
    expect(virtual.json()).toMatchObject({ status: 409, message: 'error.business', businessCode: 'CARD_STATE_INVALID' });
    expect(card('CARD-3003').pinSet).toBe(false);
    const nopin = await put('CARD-3001', { pinBlock: block('1234', 'CARD-3001', 4), format: 4 }, 'Admin', 'nopin');
    expect(nopin.statusCode).toBe(409);
    expect(nopin.json()).toEqual({
      type: `${PROBLEM_BASE}/problem-with-message`,
      title: 'PIN Not Configured',
      status: 409,
      message: 'error.business',
      detail: "Tenant 'nopin' has no PIN keys configured; the gateway operator must set its pin section (tenantKeyId, coreKeyId, coreFormat) before PINs can be set.",
      businessCode: 'PIN_NOT_CONFIGURED',
    });
  });

  it('lets Admin, Operations and API Integration set PINs, not Read-Only, and not without a token', async () => {
    const viewer = await put('CARD-3001', { pinBlock: block('1234', 'CARD-3001', 4), format: 4 }, 'Read-Only');
    expect(viewer.statusCode).toBe(403);
    const anonymous = await t.inject({ method: 'PUT', url: url('CARD-3001'), headers: { 'X-TENANT-ID': 'demo' }, payload: { pinBlock: block('1234', 'CARD-3001', 4), format: 4 } });
    expect(anonymous.statusCode).toBe(401);
  });
});

describe('PUT /v1/cards/{cardId}/pin: nothing kept', () => {
  it('audits the card only', async () => {
    const r = await t.db.query<{ target: unknown; outcome: string; status: number }>(
      "SELECT target, outcome, status FROM audit_log WHERE tenant_id = 'demo' AND action = 'card.set-pin' ORDER BY seq",
    );
    expect(r.rows.length).toBeGreaterThan(10);
    for (const row of r.rows) {
      const target = typeof row.target === 'string' ? JSON.parse(row.target) : row.target;
      expect(Object.keys(target as object)).toEqual(['cardId']);
    }
    expect(r.rows[0]).toMatchObject({ target: { cardId: 'CARD-3001' }, outcome: 'succeeded', status: 200 });
    const everything = JSON.stringify((await t.db.query('SELECT * FROM audit_log')).rows);
    for (const b of blocks) expect(everything).not.toContain(b);
  });

  it('logs no PIN block, card number or JWE at trace level', () => {
    const text = lines.join('');
    expect(text).toContain('PIN block refused');
    expect(scanForSecrets(text, [...blocks, ...[...mock.state.cards.values()].map((c) => c.pan)])).toEqual([]);
  });
});
