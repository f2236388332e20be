// A purchase from authorization to dispute through the SDK, against a gateway listening on loopback whose demo
// tenant is served by the REST core (the mock core server over HTTP) or the file core: every change reaches the
// core's capability, and a clearing and a reversal sent together over HTTP never both pass (PGlite, or
// PostgreSQL with DATABASE_URL).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cardline, CardlineProblemError } from '../../sdk/src/index.js';
import { PASSWORD, createTestApp, type TestApp, type TestConnector } from '../helpers/app.js';

const CAFE = { name: 'Cafe Central', mcc: '5814', country: 'PT' };

describe.each<TestConnector>(['rest', 'file'])('after the authorization, on the %s core, through the SDK', (connector) => {
  let t: TestApp;
  let processor: Cardline;
  let ops: Cardline;
  beforeAll(async () => {
    t = await createTestApp({ connector });
    const baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
    processor = new Cardline({ baseUrl, tenant: 'demo', sleep: async () => undefined });
    ops = new Cardline({ baseUrl, tenant: 'demo', sleep: async () => undefined });
    await processor.login('integration', PASSWORD);
    await ops.login('ops', PASSWORD);
  });
  afterAll(() => t.close());

  const outstanding = async () => ((await ops.entity.read('ENT-1002')) as { result: { outstanding: string } }).result.outstanding;
  const authorize = async (amount: string) => {
    const res = await processor.authorization.create({ cardId: 'CARD-3002', amount, currency: 'EUR', merchant: CAFE, channel: 'POS' });
    if (!('result' in res)) throw new Error('pending');
    expect(res.result.status).toBe('APPROVED');
    return res.result.authorizationId;
  };
  const refusal = async (call: Promise<unknown>) => {
    const err = await call.then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(CardlineProblemError);
    return err as CardlineProblemError;
  };

  it('clears, refunds, disputes and credits back through the core; the credit line ends where it began', async () => {
    const id = await authorize('80.00');
    expect(await outstanding()).toBe('80.00');
    const cleared = await processor.authorization.clear(id, { amount: '60.00', currency: 'EUR', final: true });
    expect('result' in cleared && cleared.result).toMatchObject({ held: '0.00', cleared: '60.00', reversed: '20.00' });
    expect(await outstanding()).toBe('60.00');
    const twice = await refusal(processor.authorization.reverse(id, {}));
    expect([twice.status, twice.businessCode, twice.detail]).toEqual([409, 'REVERSAL_EXCEEDS_HELD', `Authorization ${id} holds nothing; there is nothing to reverse.`]);
    await processor.transaction.refund(id, { amount: '20.00', currency: 'EUR' });
    const opened = await ops.dispute.open(id, { reason: 'DUPLICATE', amount: '40.00', currency: 'EUR' });
    if (!('result' in opened)) throw new Error('pending');
    const won = await ops.dispute.resolve(opened.result.disputeId, { outcome: 'WON' });
    expect('result' in won && won.result).toMatchObject({ status: 'WON', credited: '40.00', resolvedBy: 'ops' });
    expect(await outstanding()).toBe('0.00');
    expect((await processor.transaction.read(id)).result).toMatchObject({ cleared: '60.00', refunded: '20.00', credited: '40.00', disputed: '0.00' });
    // The core lists the hold and everything after it.
    const entries = await ops.transaction.list('ENT-1002', { cardId: 'CARD-3002' }).toArray();
    expect(entries.filter((e) => e.authorizationId === id).map((e) => `${e.type} ${e.amount}`)).toEqual([
      'DISPUTE_CREDIT 40.00',
      'REFUND 20.00',
      'REVERSAL 20.00',
      'CLEARING 60.00',
      'HOLD 80.00',
    ]);
  });

  it('a clearing and a reversal of one hold sent together over HTTP: one passes, the other is refused', async () => {
    for (let round = 0; round < 3; round++) {
      const id = await authorize('50.00');
      const outcomes = await Promise.allSettled([
        processor.authorization.clear(id, { amount: '50.00', currency: 'EUR', final: true }),
        processor.authorization.reverse(id, { amount: '50.00' }),
      ]);
      expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
      const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
      expect(refused.reason).toBeInstanceOf(CardlineProblemError);
      expect(['CLEAR_EXCEEDS_HELD', 'REVERSAL_EXCEEDS_HELD']).toContain((refused.reason as CardlineProblemError).businessCode);
      const now = (await processor.transaction.read(id)).result;
      expect(now.held).toBe('0.00');
      expect(Number(now.cleared) + Number(now.reversed)).toBe(50);
    }
  });
});
