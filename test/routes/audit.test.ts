// GET /v1/audit: what a record holds for logins and writes, filters, cursor pages without duplicates or
// gaps, who may read it, tenant isolation, strict query validation, and no secret in any record.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../../schemas/common.js';
import { LIMIT_URL, PASSWORD, PROBLEM_BASE, UPGRADE_URL, USERS, createTestApp, type TestApp } from '../helpers/app.js';
import { findPans } from '../helpers/log-scan.js';

interface AuditRecord {
  seq: number;
  id: string;
  at: string;
  actor: string | null;
  role: string | null;
  action: string;
  method: string;
  route: string;
  target: Record<string, string>;
  outcome: string;
  status: number;
  requestId: string;
  origin: string | null;
  hash: string;
  prevHash: string;
}
interface AuditPage {
  result: AuditRecord[];
  pagination: { nextCursor: string | null; next: string | null; limit: number };
}

const PAN = '4111111111111111';
const HEX64 = /^[0-9a-f]{64}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let t: TestApp;
let seq = 0;
/** A request id of the test's own, to find the request's record. */
const rid = (name: string) => `audit-test-${name}-${++seq}`;

const bearer = async (role: Role = 'Admin', tenant = 'demo') => ({ authorization: `Bearer ${await t.token(role, tenant)}` });

async function list(query = '', role: Role = 'Admin', tenant = 'demo'): Promise<AuditPage> {
  const res = await t.inject({ method: 'GET', url: `/v1/audit${query}`, headers: { TENANT: tenant, ...(await bearer(role, tenant)) } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<AuditPage>();
}

/** Every record of the tenant, newest first, following the cursor. */
async function all(filter = '', tenant = 'demo'): Promise<AuditRecord[]> {
  const out: AuditRecord[] = [];
  let cursor: string | null = null;
  do {
    const q = new URLSearchParams(filter.replace(/^\?/, ''));
    if (cursor) q.set('cursor', cursor);
    const page: AuditPage = await list(q.size ? `?${q}` : '', 'Admin', tenant);
    out.push(...page.result);
    cursor = page.pagination.nextCursor;
  } while (cursor);
  return out;
}

const byRequest = async (requestId: string) => (await list(`?requestId=${requestId}`)).result;

async function login(username: string, password: string, requestId: string) {
  return t.inject({
    method: 'POST',
    url: '/api/authenticate',
    headers: { TENANT: 'demo', 'x-request-id': requestId },
    payload: { username, password: await t.encrypt(password) },
  });
}

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('what a record holds', () => {
  it('records a successful and a failed authentication attempt, naming the username, never the password', async () => {
    const ok = rid('login-ok');
    const bad = rid('login-bad');
    expect((await login('viewer', PASSWORD, ok)).statusCode).toBe(200);
    expect((await login('viewer', 'not-the-password', bad)).statusCode).toBe(401);

    const common = { action: 'authenticate', method: 'POST', route: '/api/authenticate', target: {}, actor: 'viewer', role: null, origin: '127.0.0.1' };
    expect(await byRequest(ok)).toEqual([
      { ...common, role: 'Read-Only', seq: expect.any(Number), id: expect.stringMatching(UUID), at: expect.any(String), outcome: 'succeeded', status: 200, requestId: ok, hash: expect.stringMatching(HEX64), prevHash: expect.stringMatching(HEX64), chain: expect.any(String), position: expect.any(Number) },
    ]);
    expect(await byRequest(bad)).toEqual([
      { ...common, seq: expect.any(Number), id: expect.stringMatching(UUID), at: expect.any(String), outcome: 'unauthenticated', status: 401, requestId: bad, hash: expect.stringMatching(HEX64), prevHash: expect.stringMatching(HEX64), chain: expect.any(String), position: expect.any(Number) },
    ]);
  });

  it('records each write with who, what, on which ids, and how it ended', async () => {
    const cases: { name: string; role: Role; method: 'POST' | 'PUT'; url: string; payload: object; status: number; outcome: string; target: object }[] = [
      { name: 'limit-ok', role: 'API Integration', method: 'POST', url: LIMIT_URL, payload: { entityId: 'ENT-1002', amount: '60000.00' }, status: 200, outcome: 'succeeded', target: { entityId: 'ENT-1002' } },
      { name: 'limit-invalid', role: 'Admin', method: 'POST', url: LIMIT_URL, payload: { entityId: 'ENT-1002', amount: 60000 }, status: 400, outcome: 'invalid', target: { entityId: 'ENT-1002' } },
      // A business refusal is 'refused' whatever status its dialect gives it (400 / 404 envelope here).
      { name: 'limit-decrease', role: 'Admin', method: 'POST', url: LIMIT_URL, payload: { entityId: 'ENT-1002', amount: '10.00' }, status: 400, outcome: 'refused', target: { entityId: 'ENT-1002' } },
      { name: 'limit-unknown-entity', role: 'Admin', method: 'POST', url: LIMIT_URL, payload: { entityId: 'ENT-4040', amount: '10.00' }, status: 404, outcome: 'refused', target: { entityId: 'ENT-4040' } },
      // Refused before the body is read: no ids.
      { name: 'limit-forbidden', role: 'Read-Only', method: 'POST', url: LIMIT_URL, payload: { entityId: 'ENT-1002', amount: '70000.00' }, status: 403, outcome: 'forbidden', target: {} },
      { name: 'kit-refused', role: 'Operations', method: 'PUT', url: UPGRADE_URL, payload: { kitNo: 'KIT-9999', entityId: 'ENT-1002' }, status: 409, outcome: 'refused', target: { kitNo: 'KIT-9999', entityId: 'ENT-1002' } },
    ];
    for (const c of cases) {
      const requestId = rid(c.name);
      const res = await t.inject({ method: c.method, url: c.url, headers: { TENANT: 'demo', 'x-request-id': requestId, ...(await bearer(c.role)) }, payload: c.payload });
      expect(res.statusCode, c.name).toBe(c.status);
      const records = await byRequest(requestId);
      expect(records, c.name).toEqual([
        {
          seq: expect.any(Number), id: expect.stringMatching(UUID), at: expect.any(String), hash: expect.stringMatching(HEX64), prevHash: expect.stringMatching(HEX64), chain: expect.any(String), position: expect.any(Number),
          actor: USERS[c.role], role: c.role, action: c.url === LIMIT_URL ? 'credit-limit.upgrade' : 'card.upgrade-physical',
          method: c.method, route: c.url, target: c.target, outcome: c.outcome, status: c.status, requestId, origin: '127.0.0.1',
        },
      ]);
    }
  });

  it('records a call without a token as unauthenticated, with no actor and no ids (the body is not read)', async () => {
    const requestId = rid('no-token');
    const res = await t.inject({ method: 'POST', url: LIMIT_URL, headers: { TENANT: 'demo', 'x-request-id': requestId }, payload: { entityId: 'ENT-1003', amount: '1.00' } });
    expect(res.statusCode).toBe(401);
    expect(await byRequest(requestId)).toMatchObject([{ actor: null, role: null, outcome: 'unauthenticated', status: 401, target: {} }]);
  });

  it('masks a card number and drops a token sent in an id field or as the request id', async () => {
    const panInBody = rid('pan');
    await t.inject({ method: 'POST', url: LIMIT_URL, headers: { TENANT: 'demo', 'x-request-id': panInBody, ...(await bearer()) }, payload: { entityId: PAN, amount: 'x' } });
    expect((await byRequest(panInBody))[0]!.target).toEqual({ entityId: '411111******1111' });

    const jwe = await t.encrypt(PASSWORD);
    const res = await t.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: 'demo', 'x-request-id': `${PAN}-${rid('jwe')}` }, payload: { username: jwe, password: jwe } });
    expect(res.statusCode).toBe(400);
    const [record] = (await list('?action=authenticate&limit=1')).result;
    // A request id carrying a card number is not kept at all: the gateway gives the request a UUID of its own.
    expect(record).toMatchObject({ actor: '[redacted]', status: 400, outcome: 'invalid', requestId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
  });
});

describe('filters', () => {
  let limitId: string;
  let upgradeId: string;
  beforeAll(async () => {
    limitId = rid('filter-limit');
    upgradeId = rid('filter-upgrade');
    const a = await t.inject({ method: 'POST', url: LIMIT_URL, headers: { TENANT: 'demo', 'x-request-id': limitId, ...(await bearer()) }, payload: { entityId: 'ENT-1001', amount: '80000.00' } });
    expect(a.statusCode).toBe(200);
    const b = await t.inject({
      method: 'PUT',
      url: UPGRADE_URL,
      headers: { 'X-TENANT-ID': 'demo', 'x-request-id': upgradeId, ...(await bearer('Operations')) },
      payload: { kitNo: 'KIT-2002', entityId: 'ENT-1001', communicationAddress: { usePrimaryAddress: true } },
    });
    expect(b.statusCode).toBe(200);
  });

  it('targetId matches any target value: a kit, or an entity across routes', async () => {
    expect((await all('?targetId=KIT-2002')).map((r) => r.requestId)).toEqual([upgradeId]);
    const entity = await all('?targetId=ENT-1001');
    expect(entity.map((r) => r.requestId).slice(0, 2)).toEqual([upgradeId, limitId]);
    expect(entity.every((r) => Object.values(r.target).includes('ENT-1001'))).toBe(true);
  });

  it('actor, action, outcome and route select exactly the matching records', async () => {
    const refused = await all('?outcome=refused');
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((r) => r.outcome === 'refused' && [400, 404, 409].includes(r.status))).toBe(true);

    const logins = await all('?action=authenticate&actor=viewer');
    expect(logins.length).toBeGreaterThan(0);
    expect(logins.every((r) => r.action === 'authenticate' && r.actor === 'viewer')).toBe(true);

    const upgrades = await all(`?route=${encodeURIComponent(UPGRADE_URL)}&outcome=succeeded`);
    expect(upgrades.map((r) => r.requestId)).toEqual([upgradeId]);

    const everything = await all();
    const [limitRecord] = await byRequest(limitId);
    expect((await all(`?actor=${limitRecord!.actor}`)).map((r) => r.seq)).toEqual(
      everything.filter((r) => r.actor === limitRecord!.actor).map((r) => r.seq),
    );
  });

  it('from is inclusive and to exclusive', async () => {
    const [record] = await byRequest(upgradeId);
    const at = record!.at;
    const after = new Date(Date.parse(at) + 1).toISOString();
    expect((await all(`?requestId=${upgradeId}&from=${at}&to=${after}`)).map((r) => r.seq)).toEqual([record!.seq]);
    expect(await all(`?requestId=${upgradeId}&to=${at}`)).toEqual([]);
    expect(await all(`?requestId=${upgradeId}&from=${after}`)).toEqual([]);
    // An offset other than Z is the same instant.
    const plusTwo = new Date(Date.parse(at) + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    expect((await all(`?requestId=${upgradeId}&from=${encodeURIComponent(plusTwo)}`)).map((r) => r.seq)).toEqual([record!.seq]);
  });

  it('filters combine with AND', async () => {
    expect(await all(`?requestId=${upgradeId}&action=credit-limit.upgrade`)).toEqual([]);
  });
});

describe('pagination', () => {
  it('walks every record newest first, without duplicates or gaps, while new records arrive', async () => {
    // Cheap audited calls (validation failures) to make several pages.
    for (let i = 0; i < 60; i++) {
      await t.inject({ method: 'POST', url: LIMIT_URL, headers: { TENANT: 'demo', ...(await bearer()) }, payload: { entityId: `ENT-P${i}` } });
    }
    const first = await list('?limit=7');
    expect(first.pagination.limit).toBe(7);
    expect(first.result).toHaveLength(7);
    const top = first.result[0]!.seq;
    const seen = first.result.map((r) => r.seq);
    let cursor = first.pagination.nextCursor;
    let pages = 1;
    while (cursor) {
      // A write between pages lands above the walk and does not shift it.
      await t.inject({ method: 'POST', url: LIMIT_URL, headers: { TENANT: 'demo', ...(await bearer()) }, payload: {} });
      const page = await list(`?limit=7&cursor=${cursor}`);
      expect(page.result.length).toBeLessThanOrEqual(7);
      seen.push(...page.result.map((r) => r.seq));
      // `next`, the name before `nextCursor`, carries the same cursor for the clients written against it.
      expect(page.pagination.next).toBe(page.pagination.nextCursor);
      cursor = page.pagination.nextCursor;
      pages += 1;
    }
    expect(seen).toEqual(Array.from({ length: top }, (_, i) => top - i));
    expect(pages).toBe(Math.ceil(top / 7));
    // The cursor is base64url of the last seq shown.
    expect(first.pagination.nextCursor).toBe(Buffer.from(String(first.result[6]!.seq)).toString('base64url'));
    expect(first.pagination.next).toBe(first.pagination.nextCursor);
  });

  it('defaults to 50, allows 500, and the last page says nextCursor: null, as every other list does', async () => {
    const page = await list();
    expect(page.pagination.limit).toBe(50);
    expect(page.result).toHaveLength(50);
    const everything = await list('?limit=500');
    expect(everything.pagination).toEqual({ nextCursor: null, next: null, limit: 500 });
    expect(everything.result.map((r) => r.seq)).toEqual(Array.from({ length: everything.result.length }, (_, i) => everything.result[0]!.seq - i));
  });

  it('the records link: each prevHash is the hash of the record before it', async () => {
    const everything = (await list('?limit=500')).result;
    for (let i = 0; i < everything.length - 1; i++) expect(everything[i]!.prevHash).toBe(everything[i + 1]!.hash);
    expect(everything.at(-1)).toMatchObject({ seq: 1, prevHash: '0'.repeat(64) });
  });
});

describe('who may read it', () => {
  it.each(['Admin', 'Operations', 'Read-Only'] as Role[])('%s reads the trail', async (role) => {
    const page = await list('?limit=1', role);
    expect(page.result).toHaveLength(1);
  });

  it('API Integration is refused with 403', async () => {
    const res = await t.inject({ method: 'GET', url: '/v1/audit', headers: { TENANT: 'demo', ...(await bearer('API Integration')) } });
    expect(res.statusCode).toBe(403);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toEqual({
      type: `${PROBLEM_BASE}/problem-with-message`,
      title: 'Forbidden',
      status: 403,
      message: 'error.http.403',
      detail: "The role 'API Integration' may not call this operation.",
    });
  });

  it('without a token: 401; without a tenant: 400 tenant.header.missing', async () => {
    const noToken = await t.inject({ method: 'GET', url: '/v1/audit', headers: { TENANT: 'demo' } });
    expect(noToken.statusCode).toBe(401);
    expect(noToken.json()).toMatchObject({ status: 401, message: 'error.http.401' });
    const noTenant = await t.inject({ method: 'GET', url: '/v1/audit', headers: await bearer() });
    expect(noTenant.statusCode).toBe(400);
    expect(noTenant.json()).toMatchObject({ status: 400, message: 'tenant.header.missing' });
  });

  it("a token of one tenant does not read another tenant's trail", async () => {
    const res = await t.inject({ method: 'GET', url: '/v1/audit', headers: { TENANT: 'demo-b', ...(await bearer('Admin', 'demo')) } });
    expect(res.statusCode).toBe(401);
  });
});

describe('tenant isolation', () => {
  it("each tenant sees its own chain only, even with the other's cursor", async () => {
    const requestId = rid('tenant-b');
    const b = await t.inject({ method: 'POST', url: LIMIT_URL, headers: { TENANT: 'demo-b', 'x-request-id': requestId, ...(await bearer('Admin', 'demo-b')) }, payload: { entityId: 'ENT-1001', amount: '90000.00' } });
    expect(b.statusCode).toBe(200);

    const demo = await all();
    const demoB = await all('', 'demo-b');
    expect(demo.some((r) => r.requestId === requestId)).toBe(false);
    expect(demoB.some((r) => r.requestId === requestId)).toBe(true);
    expect(demoB.map((r) => r.seq)).toEqual(Array.from({ length: demoB.length }, (_, i) => demoB.length - i));
    expect(demoB.length).toBeLessThan(demo.length);
    const demoIds = new Set(demo.map((r) => r.id));
    expect(demoB.some((r) => demoIds.has(r.id))).toBe(false);

    // demo's cursor on demo-b pages demo-b's records below that seq, nothing of demo's.
    const cursor = Buffer.from(String(demo[0]!.seq + 1)).toString('base64url');
    const page = await list(`?cursor=${cursor}&limit=500`, 'Admin', 'demo-b');
    expect(page.result.map((r) => r.id)).toEqual(demoB.map((r) => r.id));
  });
});

describe('query validation', () => {
  const problem = (fieldErrors: { field: string; message: string }[]) => ({
    type: `${PROBLEM_BASE}/constraint-violation`,
    title: 'Method argument not valid',
    status: 400,
    message: 'error.validation',
    fieldErrors: fieldErrors.map((e) => ({ ...e, objectName: 'auditQuery' })),
  });

  it.each([
    ['an unknown parameter', '?entityId=ENT-1001', [{ field: 'entityId', message: 'UnknownProperty' }]],
    ['limit 0', '?limit=0', [{ field: 'limit', message: 'Min' }]],
    ['limit 501', '?limit=501', [{ field: 'limit', message: 'Max' }]],
    ['a limit that is not a number', '?limit=ten', [{ field: 'limit', message: 'Pattern' }]],
    ['a date without time', '?from=2026-01-01', [{ field: 'from', message: 'Invalid' }]],
    ['a time without offset', '?to=2026-01-01T00:00:00', [{ field: 'to', message: 'Invalid' }]],
    ['an empty window', '?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', [{ field: 'to', message: 'Invalid' }]],
    ['year 0000, which the store cannot hold', '?from=0000-01-01T00:00:00Z', [{ field: 'from', message: 'Invalid' }]],
    ['an offset beyond ±15:59', '?to=2026-01-01T00:00:00%2B20:00', [{ field: 'to', message: 'Invalid' }]],
    ['an unknown outcome', '?outcome=won', [{ field: 'outcome', message: 'Invalid' }]],
    ['a repeated parameter', '?actor=a&actor=b', [{ field: 'actor', message: 'TypeMismatch' }]],
    ['an empty filter', '?actor=', [{ field: 'actor', message: 'NotBlank' }]],
    ['a cursor that is not base64url', '?cursor=a%2Bb', [{ field: 'cursor', message: 'Pattern' }]],
    ['a cursor that is not a seq', `?cursor=${Buffer.from('abc').toString('base64url')}`, [{ field: 'cursor', message: 'Invalid' }]],
    ['a cursor of seq 0', `?cursor=${Buffer.from('0').toString('base64url')}`, [{ field: 'cursor', message: 'Invalid' }]],
  ])('%s → 400 with fieldErrors', async (_name, query, fieldErrors) => {
    const res = await t.inject({ method: 'GET', url: `/v1/audit${query}`, headers: { TENANT: 'demo', ...(await bearer()) } });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toEqual(problem(fieldErrors));
  });
});

describe('no secret in any record', () => {
  it('holds no password, no JOSE string and no card number, whatever was sent', async () => {
    // Address lines, an encrypted address line, a PAN where an id belongs: none may reach a record.
    await t.inject({
      method: 'PUT',
      url: UPGRADE_URL,
      headers: { 'X-TENANT-ID': 'demo', ...(await bearer()) },
      payload: {
        kitNo: 'KIT-2003',
        entityId: 'ENT-1003',
        communicationAddress: { address1: await t.encrypt('1 Secret Street'), city: 'Town', state: 'ST', country: 'IN', pin: '560001' },
      },
    });
    await t.inject({ method: 'PUT', url: UPGRADE_URL, headers: { 'X-TENANT-ID': 'demo', ...(await bearer()) }, payload: { kitNo: `${PAN.slice(0, 4)} ${PAN.slice(4, 8)} ${PAN.slice(8, 12)} ${PAN.slice(12)}` } });
    await t.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: 'demo' }, payload: { username: 'admin', password: PASSWORD } });

    const records = [...(await all()), ...(await all('', 'demo-b'))];
    expect(records.length).toBeGreaterThan(60);
    for (const r of records) {
      expect(r.hash).toMatch(HEX64);
      expect(r.prevHash).toMatch(HEX64);
    }
    // Hex digests may hold digit runs by chance; everything else is scanned.
    const text = JSON.stringify(records.map(({ hash: _h, prevHash: _p, ...rest }) => rest));
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain('eyJ');
    expect(text).not.toContain('Secret Street');
    expect(findPans(text)).toEqual([]);
  });
});

describe('GET /v1/audit/checkpoints/latest', () => {
  interface Checkpoint {
    tenantId: string;
    at: string;
    size: number;
    root: string;
    chains: { chain: string; size: number; head: string }[];
    kid: string;
    jws: string;
  }
  const latest = async (role: Role = 'Admin') =>
    t.inject({ method: 'GET', url: '/v1/audit/checkpoints/latest', headers: { TENANT: 'demo', ...(await bearer(role)) } });

  it("an Admin gets the trail's chains, size and root, signed with the tenant's key from the key set", async () => {
    const res = await latest();
    expect(res.statusCode, res.body).toBe(200);
    const { result, pagination } = res.json<{ result: Checkpoint; pagination: null }>();
    expect(pagination).toBeNull();
    const { compactVerify, createLocalJWKSet } = await import('jose');
    const jwks = (await t.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json<{ keys: { kid: string }[] }>();
    const verified = await compactVerify(result.jws, createLocalJWKSet(jwks as Parameters<typeof createLocalJWKSet>[0]));
    expect(verified.protectedHeader).toEqual({ alg: 'ES256', kid: result.kid, typ: 'cardline-audit-checkpoint+jws' });
    const { jws: _jws, kid: _kid, ...fields } = result;
    expect(JSON.parse(new TextDecoder().decode(verified.payload))).toEqual(fields);
    expect(result.tenantId).toBe('demo');
    expect(result.size).toBe(result.chains.reduce((n, c) => n + c.size, 0));
    expect(result.size).toBeGreaterThan(0);
    // The chain heads are the trail's: the newest record of the (one) chain is its head.
    const newest = (await list('?limit=1')).result[0]!;
    const chain = result.chains.find((c) => c.chain === (newest as AuditRecord & { chain: string }).chain)!;
    expect(chain.size).toBeLessThanOrEqual((newest as AuditRecord & { position: number }).position);
  });

  it('Operations is refused with 403 in the problem dialect', async () => {
    const res = await latest('Operations');
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({
      type: `${PROBLEM_BASE}/problem-with-message`,
      title: 'Forbidden',
      status: 403,
      message: 'error.http.403',
      detail: "The role 'Operations' may not call this operation.",
    });
  });
});
