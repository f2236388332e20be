// Fifty requests at once on one entity, one card, one idempotency key: no lost or doubled update, and
// every answer tells the truth about the core. Runs on PGlite, and on PostgreSQL when DATABASE_URL is set.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import type { OperationResult, PhysicalUpgradeInput, UpgradeLimitInput } from '../../connectors/contract.js';
import type { MockCore } from '../../connectors/mock/index.js';
import { fromMinor, toMinor } from '../../connectors/shared/money.js';
import { LIMIT_URL, PROBLEM_BASE, UPGRADE_URL, createTestApp, type TestApp } from '../helpers/app.js';

const N = 50;
const LIMIT_OK = { result: true, exception: null, pagination: null };
const IN_FLIGHT_DETAIL = 'A request with this Idempotency-Key is still being processed; retry shortly to receive its response.';

function shuffle<T>(items: T[]): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

const jitter = () => new Promise<void>((resolve) => setTimeout(resolve, Math.floor(Math.random() * 4)));

/** What the core applied, in the order it applied it (the core's methods run synchronously). */
interface Applied<I> {
  input: I;
  key: string | undefined;
  result: OperationResult<unknown>;
}

describe('concurrency', () => {
  let t: TestApp;
  let core: MockCore;
  const restores: (() => void)[] = [];

  beforeAll(async () => {
    t = await createTestApp();
    const tenant = (await t.app.cardline.tenants.get('demo'))!;
    core = (await t.app.cardline.connectors.forTenant(tenant)) as unknown as MockCore;
  });
  afterAll(() => t.close());
  afterEach(() => {
    while (restores.length) restores.pop()!();
  });

  /** Logs each application in the core, and delays each connector call by a few random milliseconds. */
  function observe<I>(op: 'upgradeLimit' | 'upgradeToPhysical', delay: () => Promise<void> = jitter): Applied<I>[] {
    const log: Applied<I>[] = [];
    const bank = core.bank as unknown as Record<string, (input: I, key?: string) => OperationResult<unknown>>;
    const connector = core as unknown as Record<string, (input: I, ctx: unknown) => Promise<unknown>>;
    const apply = bank[op]!;
    const call = connector[op]!;
    bank[op] = (input, key) => {
      const result = apply.call(core.bank, input, key);
      log.push({ input, key, result });
      return result;
    };
    connector[op] = async (input, ctx) => {
      await delay();
      return call.call(core, input, ctx);
    };
    restores.push(() => {
      bank[op] = apply;
      connector[op] = call;
    });
    return log;
  }

  const bearer = async () => `Bearer ${await t.token('Admin')}`;
  const limit = async (entityId: string, amount: string, key?: string) =>
    t.inject({
      method: 'POST',
      url: LIMIT_URL,
      headers: { TENANT: 'demo', authorization: await bearer(), ...(key ? { 'idempotency-key': key } : {}) },
      payload: { entityId, amount },
    });
  const upgrade = async (kitNo: string, entityId: string, key?: string) =>
    t.inject({
      method: 'PUT',
      url: UPGRADE_URL,
      headers: { 'X-TENANT-ID': 'demo', authorization: await bearer(), ...(key ? { 'idempotency-key': key } : {}) },
      payload: { kitNo, entityId, communicationAddress: { usePrimaryAddress: true } },
    });

  const auditStatuses = async (action: string, since: number): Promise<number[]> => {
    const r = await t.db.query<{ status: number }>(
      'SELECT status FROM audit_log WHERE tenant_id = $1 AND action = $2 AND seq > $3 ORDER BY status',
      ['demo', action, since],
    );
    return r.rows.map((row) => Number(row.status));
  };
  const auditHead = async (): Promise<number> => {
    const r = await t.db.query<{ seq: number | null }>('SELECT max(seq) AS seq FROM audit_log WHERE tenant_id = $1', ['demo']);
    return Number(r.rows[0]?.seq ?? 0);
  };

  it('fifty limit upgrades of one entity: each success is a state the entity passed through, none lost or doubled', async () => {
    const amounts = Array.from({ length: N }, (_, i) => `${50001 + i}.00`);
    const log = observe<UpgradeLimitInput>('upgradeLimit');
    const head = await auditHead();
    const order = shuffle(amounts);
    const responses = await Promise.all(order.map((amount) => limit('ENT-1001', amount)));
    const answered = new Map(order.map((amount, i) => [amount, responses[i]!]));

    // One application attempt per request, none repeated.
    expect(log.map((e) => e.input.amount).sort()).toEqual([...amounts].sort());

    // Replay the core's order: an increase (or equal) is applied, a decrease is refused with the limit it
    // had at that moment, and each request's answer says exactly that.
    let current = toMinor('50000.00');
    const succeeded: string[] = [];
    for (const { input, result } of log) {
      const res = answered.get(input.amount)!;
      if (toMinor(input.amount) >= current) {
        expect(result.status).toBe('succeeded');
        expect({ amount: input.amount, status: res.statusCode, body: res.json() }).toEqual({ amount: input.amount, status: 200, body: LIMIT_OK });
        current = toMinor(input.amount);
        succeeded.push(input.amount);
      } else {
        expect(result.status).toBe('rejected');
        expect({ amount: input.amount, status: res.statusCode, body: res.json() }).toEqual({
          amount: input.amount,
          status: 400,
          body: {
            result: null,
            exception: {
              errorCode: 'ERR_400',
              shortMessage: 'Bad Request',
              detailMessage: `The product does not allow lowering the limit of ENT-1001 from ${fromMinor(current)} to ${input.amount}.`,
            },
            pagination: null,
          },
        });
      }
    }
    // Successes only ever go up, the largest amount always wins, and it is where the entity ends.
    expect(succeeded).toEqual([...succeeded].sort((a, b) => Number(toMinor(a) - toMinor(b))));
    expect(succeeded.at(-1)).toBe('50050.00');
    expect(answered.get('50050.00')!.statusCode).toBe(200);
    expect(fromMinor(core.state.entities.get('ENT-1001')!.creditLimitMinor)).toBe('50050.00');
    // Every request is in the audit trail with the status it was answered.
    expect(await auditStatuses('credit-limit.upgrade', head)).toEqual(responses.map((r) => r.statusCode).sort((a, b) => a - b));
  });

  it('fifty physical upgrades of one card with different kits: one wins, 49 are refused, the other kits stay free', async () => {
    const kits = Array.from({ length: N }, (_, i) => `KIT-${5001 + i}`);
    for (const kitNo of kits) core.state.kits.set(kitNo, { kitNo });
    const log = observe<PhysicalUpgradeInput>('upgradeToPhysical');
    const head = await auditHead();
    const order = shuffle(kits);
    const responses = await Promise.all(order.map((kitNo) => upgrade(kitNo, 'ENT-1002')));

    const winners = responses.flatMap((res, i) => (res.statusCode === 200 ? [order[i]!] : []));
    expect(winners).toHaveLength(1);
    const winner = winners[0]!;
    expect(log.filter((e) => e.result.status === 'succeeded').map((e) => e.input.kitNo)).toEqual([winner]);
    expect(log).toHaveLength(N);
    responses.forEach((res, i) => {
      if (order[i] === winner) {
        expect(res.json()).toEqual({ result: { message: `Card CARD-3002 upgraded to physical with kit ${winner}` }, pagination: null });
      } else {
        expect({ kit: order[i], status: res.statusCode, body: res.json() }).toEqual({
          kit: order[i],
          status: 409,
          body: {
            type: `${PROBLEM_BASE}/problem-with-message`,
            title: 'No Virtual Card',
            status: 409,
            message: 'error.business',
            detail: 'Entity ENT-1002 has no virtual card to upgrade.',
            businessCode: 'CARD_NOT_VIRTUAL',
          },
        });
      }
    });
    const card = core.state.cards.get('CARD-3002')!;
    expect({ form: card.form, kitNo: card.kitNo }).toEqual({ form: 'PHYSICAL', kitNo: winner });
    for (const kitNo of kits) {
      expect(core.state.kits.get(kitNo)).toEqual(kitNo === winner ? { kitNo, allocatedTo: 'ENT-1002', mappedTo: 'CARD-3002' } : { kitNo });
    }
    expect(await auditStatuses('card.upgrade-physical', head)).toEqual([...Array<number>(N - 1).fill(409), 200].sort((a, b) => a - b));
  });

  /** Every answer to fifty identical requests with one key: the one that applied, 409 in flight, or its replay. */
  function expectOneApplication(responses: LightMyRequestResponse[], inFlight: unknown) {
    const firsts = responses.filter((r) => r.statusCode !== 409 && r.headers['idempotent-replayed'] === undefined);
    expect(firsts).toHaveLength(1);
    const first = firsts[0]!;
    expect(first.statusCode).toBe(200);
    for (const res of responses) {
      if (res === first) continue;
      if (res.statusCode === 409) {
        expect(res.json()).toEqual(inFlight);
      } else {
        expect({ status: res.statusCode, replayed: res.headers['idempotent-replayed'], body: res.body }).toEqual({
          status: 200,
          replayed: 'true',
          body: first.body,
        });
      }
    }
  }

  it('fifty identical limit upgrades sharing one key: applied once; the rest are 409 in flight or replays', async () => {
    const log = observe<UpgradeLimitInput>('upgradeLimit', () => new Promise((r) => setTimeout(r, 5 + Math.random() * 20)));
    const send = (n: number) => Promise.all(Array.from({ length: n }, () => limit('ENT-1003', '65000.00', 'one-key-for-fifty')));
    const wave = await send(N - 5);
    // Five more arrive once the first has completed: they must get its replay.
    const late = await send(5);
    const responses = [...wave, ...late];
    expect(log).toHaveLength(1);
    expect(log[0]!.result.status).toBe('succeeded');
    expectOneApplication(responses, {
      result: null,
      exception: { errorCode: 'ERR_409', shortMessage: 'Conflict', detailMessage: IN_FLIGHT_DETAIL },
      pagination: null,
    });
    expect(late.map((r) => r.headers['idempotent-replayed'])).toEqual(Array<string>(5).fill('true'));
    expect(fromMinor(core.state.entities.get('ENT-1003')!.creditLimitMinor)).toBe('65000.00');
  });

  it('fifty identical card upgrades sharing one key: one kit mapped once; the rest are 409 in flight or replays', async () => {
    core.state.kits.set('KIT-6001', { kitNo: 'KIT-6001' });
    const log = observe<PhysicalUpgradeInput>('upgradeToPhysical', () => new Promise((r) => setTimeout(r, 5 + Math.random() * 20)));
    const responses = await Promise.all(Array.from({ length: N }, () => upgrade('KIT-6001', 'ENT-1003', 'one-card-key')));
    expect(log).toHaveLength(1);
    expectOneApplication(responses, {
      type: `${PROBLEM_BASE}/problem-with-message`,
      title: 'Conflict',
      status: 409,
      message: 'error.http.409',
      detail: IN_FLIGHT_DETAIL,
    });
    expect(core.state.kits.get('KIT-6001')).toEqual({ kitNo: 'KIT-6001', allocatedTo: 'ENT-1003', mappedTo: 'CARD-3003' });
  });
});
