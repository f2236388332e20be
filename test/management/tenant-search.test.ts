// GET /v1/tenants?q=: the tenants whose id or name holds a text, in any case, searched by the store (not one
// page of the list filtered), and paged like the whole list; a bad `q` is refused with the route's 400.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { validationProblem } from '../helpers/problems.js';

let t: TestApp;
let m: FastifyInstance;
let key: string;
beforeAll(async () => {
  t = await createTestApp();
  m = await t.management();
  key = await t.operatorKey('ops-search');
  const mock = { connector: { id: 'mock', options: { fixtures: 'demo' } } };
  for (const [id, name] of [
    ['bank-north', 'Northern Savings'],
    ['bank-south', 'Southern Credit'],
    ['harbour', 'North Harbour Bank'],
    ['zeta-north', 'Zeta'],
    ['quarry', 'Quarry Mutual'],
  ]) {
    const res = await m.inject({ method: 'POST', url: '/v1/tenants', headers: { authorization: `Bearer ${key}` }, payload: { id, name, config: mock } });
    expect(res.statusCode).toBe(201);
  }
});
afterAll(() => t?.close());

const list = async (query: string) => m.inject({ method: 'GET', url: `/v1/tenants?${query}`, headers: { authorization: `Bearer ${key}` } });
const ids = (body: { result: { id: string }[] }) => body.result.map((x) => x.id);

describe('GET /v1/tenants?q=', () => {
  it('finds the tenants whose id or name holds the text, in any case, over two pages of the search', async () => {
    const first = await list('q=NORTH&limit=2');
    expect(first.statusCode).toBe(200);
    const one = first.json();
    // bank-north (id and name), harbour (name "North Harbour Bank"), zeta-north (id): by id.
    expect(ids(one)).toEqual(['bank-north', 'harbour']);
    expect(one.pagination.nextCursor).toEqual(expect.any(String));
    const second = (await list(`q=NORTH&limit=2&cursor=${one.pagination.nextCursor}`)).json();
    expect(second).toEqual({ result: [expect.objectContaining({ id: 'zeta-north', name: 'Zeta', status: 'active' })], pagination: { nextCursor: null } });
  });

  it('finds a tenant past the first page of the whole list', async () => {
    const page = (await list('limit=1')).json();
    expect(ids(page)).not.toContain('quarry');
    expect(ids((await list('q=mutual&limit=1')).json())).toEqual(['quarry']);
  });

  it('takes the text as it is: no pattern characters (% and _ match only themselves)', async () => {
    expect((await list('q=%25')).json()).toEqual({ result: [], pagination: { nextCursor: null } });
    expect((await list('q=_')).json()).toEqual({ result: [], pagination: { nextCursor: null } });
    expect(ids((await list('q=-')).json())).toEqual(['bank-north', 'bank-south', 'demo-b', 'zeta-north']);
  });

  it('answers an empty list with a null cursor when nothing matches', async () => {
    const res = await list('q=nobody-has-this');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ result: [], pagination: { nextCursor: null } });
  });

  it('refuses an empty text, a control character and a text over 128 characters (exact 400)', async () => {
    for (const q of ['', '%0A', 'x'.repeat(129)]) {
      const res = await list(`q=${q}`);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual(validationProblem('tenantListRequest', ['q', q === '' ? 'NotBlank' : q === '%0A' ? 'Pattern' : 'Size']));
    }
  });
});
