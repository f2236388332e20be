// The rules an authorization meets are read once per tenant and kept until a change to them (decision 0359): with
// the cache on as deployed (no expiry), every change through the admin routes — a rule created, a new version, a
// promotion, a demotion, a removal — is enforced from the very next authorization. PGlite, or PostgreSQL with
// DATABASE_URL (where the change is also a NOTIFY to the other processes).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../../schemas/common.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  // '' is the deployed default: cached until a change is told.
  t = await createTestApp({ env: { CARDLINE_TENANT_CACHE_TTL_MS: '' } });
});
afterAll(() => t.close());

async function call(method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, role: Role = 'Admin') {
  return t.inject({
    method,
    url,
    headers: { 'X-TENANT-ID': 'demo', authorization: `Bearer ${await t.token(role)}` },
    ...(payload === undefined ? {} : { payload: payload as string }),
  });
}

const CAFE = { name: 'Cafe Central', id: 'M-1001', mcc: '5814', country: 'PT' };
async function authorize(cardId = 'CARD-3001'): Promise<{ status: string; spend: Record<string, unknown> }> {
  const res = await call('POST', '/v1/authorizations', { cardId, amount: '1.00', currency: 'EUR', merchant: CAFE, channel: 'POS' }, 'API Integration');
  expect(res.statusCode, res.body).toBe(201);
  const result = res.json().result as { status: string; trail: Record<string, unknown>[] };
  return { status: result.status, spend: result.trail.find((s) => s.step === 'spend-controls')! };
}

const NO_CAFES = { attribute: 'mcc', operation: 'is-one-of', values: ['5814'] };
const NO_BARS = { attribute: 'mcc', operation: 'is-one-of', values: ['5813'] };

describe('the rules an authorization meets, cached per tenant until they change', () => {
  it('each change through the admin routes is enforced from the next authorization', async () => {
    expect(await authorize()).toEqual({ status: 'APPROVED', spend: { step: 'spend-controls', outcome: 'skipped', detail: 'no rules' } });
    expect(await authorize()).toMatchObject({ status: 'APPROVED' });

    const created = await call('POST', '/v1/admin/auth-rules', { name: 'No cafes', mode: 'active', conditions: [NO_CAFES] });
    expect(created.statusCode).toBe(201);
    const id = created.json().result.ruleId as string;
    expect(await authorize()).toMatchObject({ status: 'DECLINED', spend: { outcome: 'declined', ruleId: id } });

    // A new version, enforced at once: cafes pass again.
    expect((await call('PATCH', `/v1/admin/auth-rules/${id}`, { mode: 'active', conditions: [NO_BARS] })).statusCode).toBe(200);
    expect(await authorize()).toEqual({ status: 'APPROVED', spend: { step: 'spend-controls', outcome: 'approved', evaluated: 1 } });

    // A shadow version, then promoted.
    expect((await call('PATCH', `/v1/admin/auth-rules/${id}`, { conditions: [NO_CAFES] })).statusCode).toBe(200);
    expect(await authorize()).toMatchObject({ status: 'APPROVED', spend: { evaluated: 2, rules: [{ version: 3, mode: 'shadow', outcome: 'declined' }] } });
    expect((await call('POST', `/v1/admin/auth-rules/${id}/promote`)).statusCode).toBe(200);
    expect(await authorize()).toMatchObject({ status: 'DECLINED', spend: { ruleId: id, rules: [{ version: 3, mode: 'active', outcome: 'declined' }] } });

    // Demoted to shadow: recorded, not enforced.
    expect((await call('PATCH', `/v1/admin/auth-rules/${id}`, { mode: 'shadow' })).statusCode).toBe(200);
    expect(await authorize()).toMatchObject({ status: 'APPROVED', spend: { rules: [{ version: 3, mode: 'shadow', outcome: 'declined' }] } });

    // A card's own rule applies to that card only; removed, it no longer applies.
    const cardRule = await call('POST', '/v1/admin/auth-rules', { name: 'No cafes on 3002', cardId: 'CARD-3002', mode: 'active', conditions: [NO_CAFES] });
    const cardRuleId = cardRule.json().result.ruleId as string;
    expect(await authorize('CARD-3002')).toMatchObject({ status: 'DECLINED', spend: { ruleId: cardRuleId } });
    expect(await authorize('CARD-3001')).toMatchObject({ status: 'APPROVED' });
    expect((await call('DELETE', `/v1/admin/auth-rules/${cardRuleId}`)).statusCode).toBe(200);
    expect(await authorize('CARD-3002')).toMatchObject({ status: 'APPROVED' });

    expect((await call('DELETE', `/v1/admin/auth-rules/${id}`)).statusCode).toBe(200);
    expect(await authorize()).toEqual({ status: 'APPROVED', spend: { step: 'spend-controls', outcome: 'skipped', detail: 'no rules' } });
  });
});
