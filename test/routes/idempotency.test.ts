// Idempotency-Key on the mutating routes: first use applies, a completed duplicate replays byte for byte
// without reaching the core, a changed body is 422, a duplicate in flight is 409, keys expire after the
// retention, keys are scoped to tenant, caller and route, and 5xx/pending outcomes are not kept.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import {
  ConnectorTimeoutError,
  ConnectorUnavailableError,
  pending,
  type ConnectorContext,
  type OperationResult,
} from '../../connectors/contract.js';
import type { MockCore } from '../../connectors/mock/index.js';
import { fromMinor } from '../../connectors/shared/money.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { scopeHash } from '../../src/services/infrastructure/idempotency.js';
import { LIMIT_URL, PROBLEM_BASE, UPGRADE_URL, createTestApp, supportDetail, type TestApp } from '../helpers/app.js';
import type { Role } from '../../schemas/common.js';
import { problem } from '../helpers/problems.js';

type Op = 'upgradeLimit' | 'upgradeToPhysical';
interface Call {
  input: unknown;
  key: string | undefined;
}
type Method = (input: unknown, ctx: ConnectorContext) => Promise<OperationResult<unknown>>;
/** Replaces the call to the real method: `run()` carries it out. */
type Around = (run: () => Promise<OperationResult<unknown>>, n: number) => Promise<OperationResult<unknown>>;

const REUSED_DETAIL =
  'This Idempotency-Key was already used for a different request to this operation; send the original request unchanged to get its response, or use a new key for a new request.';
const IN_FLIGHT_DETAIL = 'A request with this Idempotency-Key is still being processed; retry shortly to receive its response.';
const INVALID_DETAIL = 'The Idempotency-Key header must be 1 to 255 printable ASCII characters; send one key per request, e.g. a UUID.';

const envelopeError = (status: number, shortMessage: string, detailMessage: string) => ({
  result: null,
  exception: { errorCode: `ERR_${status}`, shortMessage, detailMessage },
  pagination: null,
});
const LIMIT_OK = { result: true, exception: null, pagination: null };

describe('Idempotency-Key', () => {
  let t: TestApp;
  const restores: (() => void)[] = [];

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());
  afterEach(() => {
    while (restores.length) restores.pop()!();
  });

  const core = async (tenantId = 'demo'): Promise<MockCore> => {
    const tenant = (await t.app.cardline.tenants.get(tenantId))!;
    return (await t.app.cardline.connectors.forTenant(tenant)) as unknown as MockCore;
  };
  const limitOf = async (entityId: string, tenantId = 'demo') => fromMinor((await core(tenantId)).state.entities.get(entityId)!.creditLimitMinor);

  /** Records every call of a connector method (and lets a test wrap it); undone after each test. */
  const watch = async (op: Op, around?: Around, tenantId = 'demo'): Promise<Call[]> => {
    const c = await core(tenantId);
    const target = c as unknown as Record<Op, Method>;
    const original = target[op];
    const calls: Call[] = [];
    target[op] = async (input, ctx) => {
      calls.push({ input, key: ctx.idempotencyKey });
      const run = () => original.call(c, input, ctx);
      return around ? around(run, calls.length) : run();
    };
    restores.push(() => {
      target[op] = original;
    });
    return calls;
  };

  const limit = async (amount: string, key?: string, opts: { entityId?: string; role?: Role; tenant?: string } = {}) =>
    t.inject({
      method: 'POST',
      url: LIMIT_URL,
      headers: {
        TENANT: opts.tenant ?? 'demo',
        authorization: `Bearer ${await t.token(opts.role ?? 'Admin', opts.tenant ?? 'demo')}`,
        ...(key === undefined ? {} : { 'idempotency-key': key }),
      },
      payload: { entityId: opts.entityId ?? 'ENT-1001', amount },
    });

  const upgrade = async (body: Record<string, unknown>, key?: string) =>
    t.inject({
      method: 'PUT',
      url: UPGRADE_URL,
      headers: {
        'X-TENANT-ID': 'demo',
        authorization: `Bearer ${await t.token('Operations')}`,
        ...(key === undefined ? {} : { 'idempotency-key': key }),
      },
      payload: { communicationAddress: { usePrimaryAddress: true }, ...body },
    });

  const expectReplayOf = (replay: LightMyRequestResponse, first: LightMyRequestResponse) => {
    expect(replay.statusCode).toBe(first.statusCode);
    expect(replay.body).toBe(first.body);
    expect(replay.headers['content-type']).toBe(first.headers['content-type']);
    expect(replay.headers['idempotent-replayed']).toBe('true');
  };

  /** Ages a key as if its first use was `seconds` ago. */
  const age = async (key: string, seconds: number, scope: { caller?: string; method?: string; route?: string } = {}) => {
    const hash = scopeHash({
      tenantId: 'demo',
      caller: scope.caller ?? 'admin',
      method: scope.method ?? 'POST',
      route: scope.route ?? LIMIT_URL,
      params: {},
      key,
    });
    const r = await t.db.query(
      `UPDATE idempotency_keys SET created_at = now() - $3::integer * interval '1 second' WHERE tenant_id = $1 AND scope_hash = $2`,
      ['demo', hash, seconds],
    );
    expect(r.rowCount).toBe(1);
    return hash;
  };

  describe('(a) first use', () => {
    it('applies the request and answers it; the connector gets a key of the gateway, not the client', async () => {
      const calls = await watch('upgradeLimit');
      const res = await limit('60000.00', 'a-first');
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual(LIMIT_OK);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
      expect(await limitOf('ENT-1001')).toBe('60000.00');
      expect(calls).toHaveLength(1);
      expect(calls[0]!.key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    });

    it('without a key nothing is stored and a repeat applies again', async () => {
      const calls = await watch('upgradeLimit');
      const before = await t.db.query('SELECT count(*)::int AS n FROM idempotency_keys');
      expect((await limit('60500.00', undefined, { entityId: 'ENT-1002' })).statusCode).toBe(200);
      expect((await limit('60500.00', undefined, { entityId: 'ENT-1002' })).statusCode).toBe(200);
      expect(calls.map((c) => c.key)).toEqual([undefined, undefined]);
      expect(await t.db.query('SELECT count(*)::int AS n FROM idempotency_keys')).toEqual(before);
    });
  });

  describe('(b) completed duplicate', () => {
    it('replays the stored status and body byte for byte and does not call the connector again (envelope)', async () => {
      const calls = await watch('upgradeLimit');
      const first = await limit('70000.00', 'b-limit');
      expect(first.json()).toEqual(LIMIT_OK);
      // Another key moves the limit on; replaying the first key must not move it back.
      expect((await limit('71000.00', 'b-limit-2')).statusCode).toBe(200);
      const replay = await limit('70000.00', 'b-limit');
      expectReplayOf(replay, first);
      expect(replay.json()).toEqual(LIMIT_OK);
      expect(calls.map((c) => (c.input as { amount: string }).amount)).toEqual(['70000.00', '71000.00']);
      expect(await limitOf('ENT-1001')).toBe('71000.00');
    });

    it('replays a card upgrade (problem routes) without mapping a second kit', async () => {
      const calls = await watch('upgradeToPhysical');
      const first = await upgrade({ kitNo: 'KIT-2002', entityId: 'ENT-1002' }, 'b-card');
      expect(first.statusCode).toBe(200);
      expect(first.json()).toEqual({ result: { message: 'Card CARD-3002 upgraded to physical with kit KIT-2002' }, pagination: null });
      const replay = await upgrade({ kitNo: 'KIT-2002', entityId: 'ENT-1002' }, 'b-card');
      expectReplayOf(replay, first);
      expect(calls).toHaveLength(1);
      const state = (await core()).state;
      expect(state.kits.get('KIT-2002')).toEqual({ kitNo: 'KIT-2002', allocatedTo: 'ENT-1002', mappedTo: 'CARD-3002' });
    });

    it('keeps a business refusal too: the duplicate gets the same 409 even after the cause went away', async () => {
      const calls = await watch('upgradeToPhysical');
      const first = await upgrade({ kitNo: 'KIT-7001', entityId: 'ENT-1003' }, 'b-refused');
      expect(first.statusCode).toBe(409);
      expect(first.json()).toEqual({
        type: `${PROBLEM_BASE}/problem-with-message`,
        title: 'Invalid Kit',
        status: 409,
        message: 'error.business',
        detail: 'Kit KIT-7001 is not known to the core.',
        businessCode: 'PPCUST_018',
      });
      (await core()).state.kits.set('KIT-7001', { kitNo: 'KIT-7001' });
      const replay = await upgrade({ kitNo: 'KIT-7001', entityId: 'ENT-1003' }, 'b-refused');
      expectReplayOf(replay, first);
      expect(calls).toHaveLength(1);
      expect((await core()).state.kits.get('KIT-7001')).toEqual({ kitNo: 'KIT-7001' });
    });
  });

  describe('(c) same key, different request', () => {
    it('answers 422 in the envelope and changes nothing', async () => {
      expect((await limit('72000.00', 'c-limit')).statusCode).toBe(200);
      const calls = await watch('upgradeLimit');
      const res = await limit('72500.00', 'c-limit');
      expect(res.statusCode).toBe(422);
      expect(res.json()).toEqual(envelopeError(422, 'Unprocessable Entity', REUSED_DETAIL));
      expect(calls).toHaveLength(0);
      expect(await limitOf('ENT-1001')).toBe('72000.00');
    });

    it('answers 422 as a problem on the card route', async () => {
      expect((await upgrade({ kitNo: 'KIT-2003', entityId: 'ENT-1003' }, 'c-card')).statusCode).toBe(200);
      const res = await upgrade({ kitNo: 'KIT-2004', entityId: 'ENT-1003' }, 'c-card');
      expect(res.statusCode).toBe(422);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toEqual(problem(422, 'Unprocessable Entity', REUSED_DETAIL));
      expect((await core()).state.kits.get('KIT-2004')).toEqual({ kitNo: 'KIT-2004' });
    });

    it('compares the validated body, not its bytes: reordered properties are the same request', async () => {
      const first = await limit('72600.00', 'c-order', { entityId: 'ENT-1003' });
      const replay = await t.inject({
        method: 'POST',
        url: LIMIT_URL,
        headers: { TENANT: 'demo', authorization: `Bearer ${await t.token('Admin')}`, 'idempotency-key': 'c-order', 'content-type': 'application/json' },
        payload: '{ "amount": "72600.00",\n  "entityId": "ENT-1003" }',
      });
      expectReplayOf(replay, first);
    });
  });

  describe('(d) duplicate while the first is in flight', () => {
    /** Holds the connector call until released; resolves `entered` once the first call is inside. */
    const hold = async (op: Op) => {
      let release!: () => void;
      let entered!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const inside = new Promise<void>((r) => (entered = r));
      const calls = await watch(op, async (run, n) => {
        if (n === 1) {
          entered();
          await gate;
        }
        return run();
      });
      return { calls, inside, release };
    };

    it('answers 409 in the envelope, then the first completes and later duplicates replay it', async () => {
      const { calls, inside, release } = await hold('upgradeLimit');
      const firstPromise = limit('73000.00', 'd-limit');
      await inside;
      const dup = await limit('73000.00', 'd-limit');
      expect(dup.statusCode).toBe(409);
      expect(dup.headers['retry-after']).toBe('1');
      expect(dup.json()).toEqual(envelopeError(409, 'Conflict', IN_FLIGHT_DETAIL));
      release();
      const first = await firstPromise;
      expect(first.json()).toEqual(LIMIT_OK);
      expectReplayOf(await limit('73000.00', 'd-limit'), first);
      expect(calls).toHaveLength(1);
    });

    it('answers 409 as a problem on the card route', async () => {
      const { calls, inside, release } = await hold('upgradeToPhysical');
      const firstPromise = upgrade({ kitNo: 'KIT-2005', entityId: 'ENT-1001' }, 'd-card');
      await inside;
      const dup = await upgrade({ kitNo: 'KIT-2005', entityId: 'ENT-1001' }, 'd-card');
      expect(dup.statusCode).toBe(409);
      expect(dup.json()).toEqual(problem(409, 'Conflict', IN_FLIGHT_DETAIL));
      release();
      expect((await firstPromise).statusCode).toBe(200);
      expect(calls).toHaveLength(1);
    });

    it('takes over a key left in flight past its lease (a crashed gateway), with the same connector key', async () => {
      const { calls, inside, release } = await hold('upgradeLimit');
      const firstPromise = limit('73500.00', 'd-stale', { entityId: 'ENT-1002' });
      await inside;
      const hash = scopeHash({ tenantId: 'demo', caller: 'admin', method: 'POST', route: LIMIT_URL, params: {}, key: 'd-stale' });
      await t.db.query(`UPDATE idempotency_keys SET locked_at = now() - $3::integer * interval '1 second' WHERE tenant_id = $1 AND scope_hash = $2`, [
        'demo',
        hash,
        t.app.cardline.idempotency.leaseSeconds + 1,
      ]);
      const takeover = await limit('73500.00', 'd-stale', { entityId: 'ENT-1002' });
      expect(takeover.json()).toEqual(LIMIT_OK);
      expect(calls).toHaveLength(2);
      expect(calls[1]!.key).toBe(calls[0]!.key);
      release();
      expect((await firstPromise).statusCode).toBe(200);
      expectReplayOf(await limit('73500.00', 'd-stale', { entityId: 'ENT-1002' }), takeover);
    });
  });

  describe('(e) retention', () => {
    it('defaults to 24 hours, configurable, and refuses nonsense', () => {
      expect(loadConfig({}).idempotencyTtlHours).toBe(24);
      expect(loadConfig({ CARDLINE_IDEMPOTENCY_TTL_HOURS: '48' }).idempotencyTtlHours).toBe(48);
      expect(() => loadConfig({ CARDLINE_IDEMPOTENCY_TTL_HOURS: '0' })).toThrow(ConfigError);
      expect(() => loadConfig({ CARDLINE_IDEMPOTENCY_TTL_HOURS: '1.5' })).toThrow(/CARDLINE_IDEMPOTENCY_TTL_HOURS must be a whole number/);
      expect(t.app.cardline.idempotency.ttlSeconds).toBe(24 * 3600);
    });

    it('a key still replays just inside the retention and is free again after it', async () => {
      const calls = await watch('upgradeLimit');
      const first = await limit('74000.00', 'e-expiry', { entityId: 'ENT-1003' });
      expect(first.statusCode).toBe(200);
      await age('e-expiry', 24 * 3600 - 60);
      expectReplayOf(await limit('74000.00', 'e-expiry', { entityId: 'ENT-1003' }), first);
      await age('e-expiry', 24 * 3600 + 1);
      // A different body: after the retention it is a new request, not a 422.
      const again = await limit('74100.00', 'e-expiry', { entityId: 'ENT-1003' });
      expect(again.statusCode).toBe(200);
      expect(again.headers['idempotent-replayed']).toBeUndefined();
      expect(await limitOf('ENT-1003')).toBe('74100.00');
      expect(calls).toHaveLength(2);
      // A new generation of the key: the core must not answer the old outcome.
      expect(calls[1]!.key).not.toBe(calls[0]!.key);
    });

    it('the sweep deletes expired keys and only those', async () => {
      expect((await limit('74200.00', 'e-sweep-old', { entityId: 'ENT-1003' })).statusCode).toBe(200);
      expect((await limit('74300.00', 'e-sweep-new', { entityId: 'ENT-1003' })).statusCode).toBe(200);
      const old = await age('e-sweep-old', 24 * 3600 + 1);
      const fresh = scopeHash({ tenantId: 'demo', caller: 'admin', method: 'POST', route: LIMIT_URL, params: {}, key: 'e-sweep-new' });
      const deleted = await t.app.cardline.idempotency.sweep();
      expect(deleted).toBeGreaterThanOrEqual(1);
      const left = await t.db.query<{ scope_hash: string }>('SELECT scope_hash FROM idempotency_keys WHERE scope_hash = ANY($1::text[])', [[old, fresh]]);
      expect(left.rows.map((r) => r.scope_hash)).toEqual([fresh]);
      expect(await t.app.cardline.idempotency.sweep()).toBe(0);
    });
  });

  describe('scope', () => {
    it('the same key from another user is another key', async () => {
      const calls = await watch('upgradeLimit');
      expect((await limit('75000.00', 'shared-key', { entityId: 'ENT-1002' })).json()).toEqual(LIMIT_OK);
      const other = await limit('76000.00', 'shared-key', { entityId: 'ENT-1002', role: 'API Integration' });
      expect(other.statusCode).toBe(200);
      expect(other.headers['idempotent-replayed']).toBeUndefined();
      expect(await limitOf('ENT-1002')).toBe('76000.00');
      expect(calls).toHaveLength(2);
      expect(calls[1]!.key).not.toBe(calls[0]!.key);
    });

    it('the same key on another tenant is another key', async () => {
      const callsB = await watch('upgradeLimit', undefined, 'demo-b');
      expect((await limit('77000.00', 'shared-key', { entityId: 'ENT-1002' })).statusCode).toBe(422);
      const res = await limit('77000.00', 'shared-key', { entityId: 'ENT-1002', tenant: 'demo-b' });
      expect(res.json()).toEqual(LIMIT_OK);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
      expect(callsB).toHaveLength(1);
      expect(await limitOf('ENT-1002', 'demo-b')).toBe('77000.00');
    });

    it('the same key on another route is another key', async () => {
      const calls = await watch('upgradeToPhysical');
      const res = await upgrade({ kitNo: 'KIT-2001' }, 'shared-key');
      // The core's own answer (KIT-2001 is not allocated to an entity), not a 422 for the limit request.
      expect(res.statusCode).toBe(409);
      expect(res.json().businessCode).toBe('PPCUST_018');
      expect(res.headers['idempotent-replayed']).toBeUndefined();
      expect(calls).toHaveLength(1);
    });
  });

  describe('outcomes that are not kept', () => {
    it.each([
      ['502 core unavailable', 502, 'Bad Gateway', 'The core-banking system is unavailable; retry later.', () => new ConnectorUnavailableError('down')],
      [
        '504 core timeout',
        504,
        'Gateway Timeout',
        'The core-banking system did not answer in time; the outcome is unknown, check before retrying.',
        () => new ConnectorTimeoutError('slow'),
      ],
    ])('%s: the retry with the same key goes through, with the same connector key', async (_name, status, short, detail, error) => {
      const key = `fail-${status}`;
      const calls = await watch('upgradeLimit', async (run, n) => {
        if (n === 1) throw error();
        return run();
      });
      const failed = await limit(`78${status}.00`, key, { entityId: 'ENT-1003' });
      expect(failed.statusCode).toBe(status);
      expect(failed.json()).toEqual(envelopeError(status, short, supportDetail(detail, failed)));
      const retry = await limit(`78${status}.00`, key, { entityId: 'ENT-1003' });
      expect(retry.json()).toEqual(LIMIT_OK);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(await limitOf('ENT-1003')).toBe(`78${status}.00`);
      expect(calls).toHaveLength(2);
      expect(calls[1]!.key).toBe(calls[0]!.key);
      // The key stays bound to its request: another body after the failure is still a 422.
      expect((await limit('79000.00', key, { entityId: 'ENT-1003' })).statusCode).toBe(422);
    });

    it('202 pending: the retry asks the core again instead of replaying "pending"', async () => {
      const calls = await watch('upgradeLimit', async (run, n) => (n === 1 ? pending('REF-1') : run()));
      const first = await limit('79500.00', 'pending-key', { entityId: 'ENT-1003' });
      expect(first.statusCode).toBe(202);
      const retry = await limit('79500.00', 'pending-key', { entityId: 'ENT-1003' });
      expect(retry.json()).toEqual(LIMIT_OK);
      expect(calls).toHaveLength(2);
      expect(calls[1]!.key).toBe(calls[0]!.key);
    });
  });

  describe('the header itself', () => {
    it.each([
      ['empty', ''],
      ['longer than 255 characters', 'k'.repeat(256)],
      ['a control character', 'tab\there'],
      ['non-ASCII', 'clé'],
    ])('%s → 400 in the envelope, nothing applied', async (_name, key) => {
      const calls = await watch('upgradeLimit');
      const res = await limit('80000.00', key);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual(envelopeError(400, 'Bad Request', INVALID_DETAIL));
      expect(calls).toHaveLength(0);
    });

    it('invalid → 400 problem on the card route; 255 characters are accepted', async () => {
      const res = await upgrade({ kitNo: 'KIT-2001', entityId: 'ENT-1001' }, 'x'.repeat(256));
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual(problem(400, 'Bad Request', INVALID_DETAIL));
      expect((await limit('80000.00', 'x'.repeat(255), { entityId: 'ENT-1003' })).json()).toEqual(LIMIT_OK);
    });

    it('a body that fails validation is refused before the key is taken', async () => {
      const res = await t.inject({
        method: 'POST',
        url: LIMIT_URL,
        headers: { TENANT: 'demo', authorization: `Bearer ${await t.token('Admin')}`, 'idempotency-key': 'invalid-body' },
        payload: { entityId: 'ENT-1001', amount: '-1' },
      });
      expect(res.statusCode).toBe(400);
      expect((await limit('80100.00', 'invalid-body', { entityId: 'ENT-1003' })).json()).toEqual(LIMIT_OK);
    });

    it('POST /api/authenticate ignores it: each login issues a fresh token', async () => {
      const login = async () =>
        t.inject({
          method: 'POST',
          url: '/api/authenticate',
          headers: { TENANT: 'demo', 'idempotency-key': 'login-key' },
          payload: { username: 'viewer', password: await t.encrypt('correct-horse-battery') },
        });
      const a = await login();
      const b = await login();
      expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
      expect(b.headers['idempotent-replayed']).toBeUndefined();
      expect(b.json().id_token).not.toBe(a.json().id_token);
    });
  });
});
