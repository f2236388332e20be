// Issue 22: every list on both listeners is cursor-paged like the transaction list (`limit` 1..200, default 50,
// `cursor`, `pagination.nextCursor`): the management listener's tenants, a tenant's users and operator keys; the
// public listener's admin users and channels. Keyset pages in key order, two pages then a null cursor; the
// limit's bounds and a cursor the service did not issue refused with the exact bodies; the CLI follows the
// cursor to list everything.
import type { FastifyInstance } from 'fastify';
import type { LightMyRequestResponse } from 'fastify';
import { uuidv7 } from 'uuidv7';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeKeyCursor } from '../../src/paging/key-cursor.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliInProcess } from '../helpers/cli.js';
import { validationProblem } from '../helpers/problems.js';

let t: TestApp;
let m: FastifyInstance;
let key: string;

beforeAll(async () => {
  t = await createTestApp({ tenants: [{ id: 'paging-a' }, { id: 'paging-b' }] });
  m = await t.management();
  key = await t.operatorKey('pager');
  for (const name of ['pager-b', 'pager-c', 'pager-d']) await t.app.cardline.operatorKeys.create(name);
  // Channels of demo: three, created as an Admin would (ids are UUIDv7, so id order is creation order).
  for (const n of [1, 2, 3]) {
    const res = await t.inject({ method: 'POST', url: '/v1/admin/channels', headers: await admin(), payload: { type: 'webhook', url: `http://127.0.0.1:9/hook-${n}`, eventTypes: ['*'] } });
    expect(res.statusCode, res.body).toBe(201);
  }
}, 300_000);
afterAll(async () => {
  await t?.close();
});

const admin = async () => ({ 'X-TENANT-ID': 'demo', authorization: `Bearer ${await t.token('Admin')}` });

interface List {
  name: string;
  objectName: string;
  get(query: string): Promise<LightMyRequestResponse>;
  keyOf(item: Record<string, unknown>): string;
}

const management = (url: string, objectName: string, keyOf: List['keyOf']): List => ({
  name: `GET ${url} (management)`,
  objectName,
  get: (query) => m.inject({ method: 'GET', url: `${url}${query}`, headers: { authorization: `Bearer ${key}` } }),
  keyOf,
});
const publicList = (url: string, objectName: string, keyOf: List['keyOf']): List => ({
  name: `GET ${url} (public)`,
  objectName,
  get: async (query) => t.inject({ method: 'GET', url: `${url}${query}`, headers: await admin() }),
  keyOf,
});

const LISTS: List[] = [
  management('/v1/tenants', 'tenantListRequest', (x) => String(x.id)),
  management('/v1/tenants/demo/users', 'userListRequest', (x) => String(x.username)),
  management('/v1/operator-keys', 'operatorKeyListRequest', (x) => String(x.name)),
  publicList('/v1/admin/users', 'userListRequest', (x) => String(x.username)),
  publicList('/v1/admin/channels', 'channelListRequest', (x) => String(x.channelId)),
];

/** Walks a list with pages of `limit`: each full page names the next, the last names none. */
async function walk(list: List, limit: number): Promise<{ keys: string[]; pages: number }> {
  const keys: string[] = [];
  let pages = 0;
  let cursor: string | null = null;
  do {
    const res = await list.get(`?limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { result: Record<string, unknown>[]; pagination: { nextCursor: string | null } };
    expect(Object.keys(body).sort()).toEqual(['pagination', 'result']);
    expect(Object.keys(body.pagination)).toEqual(['nextCursor']);
    pages += 1;
    cursor = body.pagination.nextCursor;
    if (cursor !== null) {
      expect(body.result).toHaveLength(limit);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    } else expect(body.result.length).toBeLessThanOrEqual(limit);
    keys.push(...body.result.map(list.keyOf));
  } while (cursor !== null && pages < 100);
  return { keys, pages };
}

describe('every list pages by cursor', () => {
  it.each(LISTS.map((l) => [l.name, l] as const))('%s: pages of 2 in key order, then a null cursor', async (_name, list) => {
    const whole = await list.get('');
    expect(whole.statusCode, whole.body).toBe(200);
    const all = (whole.json().result as Record<string, unknown>[]).map(list.keyOf);
    expect(whole.json().pagination).toEqual({ nextCursor: null });
    expect(all.length).toBeGreaterThanOrEqual(3);
    expect(all).toEqual([...all].sort());

    const { keys, pages } = await walk(list, 2);
    expect(keys).toEqual(all);
    expect(pages).toBe(Math.ceil(all.length / 2));

    // A page of exactly the rest ends with a null cursor (no empty page after it).
    const first = await list.get(`?limit=${all.length - 1}`);
    const rest = await list.get(`?limit=1&cursor=${first.json().pagination.nextCursor}`);
    expect(rest.json().result.map(list.keyOf)).toEqual([all[all.length - 1]]);
    expect(rest.json().pagination).toEqual({ nextCursor: null });
  });

  it.each(LISTS.map((l) => [l.name, l] as const))('%s: limit 0 and 201, and a cursor it did not issue, are 400 with the field', async (_name, list) => {
    const problem = async (query: string) => {
      const res = await list.get(query);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      return res.json();
    };
    expect(await problem('?limit=0')).toEqual(validationProblem(list.objectName, ['limit', 'Min']));
    expect(await problem('?limit=201')).toEqual(validationProblem(list.objectName, ['limit', 'Max']));
    expect(await problem('?cursor=bm90LWEtY3Vyc29y')).toEqual(validationProblem(list.objectName, ['cursor', 'Invalid']));
    // Well-formed but not the canonical spelling, and a key that cannot be one of this list's.
    expect(await problem(`?cursor=${Buffer.from('{ "after": "demo" }').toString('base64url')}`)).toEqual(validationProblem(list.objectName, ['cursor', 'Invalid']));
    expect(await problem(`?cursor=${encodeKeyCursor('../not a key\u0001')}`)).toEqual(validationProblem(list.objectName, ['cursor', 'Invalid']));
    expect(await problem('?limit=200&cursor=%2B%2B')).toMatchObject({ status: 400, fieldErrors: [{ field: 'cursor', objectName: list.objectName }] });
  });

  it('a channel cursor names a channel id: a tenant id in one is refused, not a 500', async () => {
    const res = await LISTS[4]!.get(`?cursor=${encodeKeyCursor('demo')}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(validationProblem('channelListRequest', ['cursor', 'Invalid']));
  });

  it('a row added while paging lands in its place by key; nothing is shown twice or skipped', async () => {
    const list = LISTS[2]!;
    const first = (await list.get('?limit=2')).json();
    const seen = first.result.map(list.keyOf) as string[];
    // Before the cursor (shown already) and after it (to come).
    await t.app.cardline.operatorKeys.create('aaa-before');
    await t.app.cardline.operatorKeys.create('zzz-after');
    const { keys } = await walkFrom(list, first.pagination.nextCursor);
    expect(keys).toContain('zzz-after');
    expect(keys).not.toContain('aaa-before');
    expect(keys.filter((k) => seen.includes(k))).toEqual([]);
  });
});

async function walkFrom(list: List, start: string): Promise<{ keys: string[] }> {
  const keys: string[] = [];
  let cursor: string | null = start;
  while (cursor !== null) {
    const body = (await list.get(`?limit=2&cursor=${cursor}`)).json() as { result: Record<string, unknown>[]; pagination: { nextCursor: string | null } };
    keys.push(...body.result.map(list.keyOf));
    cursor = body.pagination.nextCursor;
  }
  return { keys };
}

describe('the default page is 50', () => {
  it('GET /v1/admin/users and GET /v1/tenants/{tenantId}/users: 50, then the rest', async () => {
    // 56 users of demo-b besides its four: written to the store (a password hash is not what is listed).
    const names = Array.from({ length: 56 }, (_, i) => `u${String(i).padStart(3, '0')}`);
    for (const name of names) {
      await t.db.query("INSERT INTO users (tenant_id, username, id, role, password_hash) VALUES ('demo-b', $1, $2, 'Read-Only', 'x')", [name, uuidv7()]);
    }
    const expected = (await t.db.query<{ username: string }>("SELECT username FROM users WHERE tenant_id = 'demo-b' ORDER BY username")).rows.map((r) => r.username);
    expect(expected).toHaveLength(60);
    const headers = { 'X-TENANT-ID': 'demo-b', authorization: `Bearer ${await t.token('Admin', 'demo-b')}` };
    for (const get of [
      (q: string) => t.inject({ method: 'GET', url: `/v1/admin/users${q}`, headers }),
      (q: string) => m.inject({ method: 'GET', url: `/v1/tenants/demo-b/users${q}`, headers: { authorization: `Bearer ${key}` } }),
    ]) {
      const one = (await get('')).json();
      expect(one.result.map((u: { username: string }) => u.username)).toEqual(expected.slice(0, 50));
      expect(one.pagination.nextCursor).toEqual(expect.any(String));
      const two = (await get(`?cursor=${one.pagination.nextCursor}`)).json();
      expect(two.result.map((u: { username: string }) => u.username)).toEqual(expected.slice(50));
      expect(two.pagination).toEqual({ nextCursor: null });
    }
  });

  it('GET /v1/tenants/{tenantId}/users of an unknown tenant is still a 404', async () => {
    const res = await m.inject({ method: 'GET', url: '/v1/tenants/nobody-here/users?limit=2', headers: { authorization: `Bearer ${key}` } });
    expect(res.statusCode).toBe(404);
  });
});

describe('the CLI lists everything through the management API', () => {
  it('operator-key list and tenant list follow the cursor past one page of 200', async () => {
    for (let i = 0; i < 200; i++) await t.app.cardline.operatorKeys.create(`bulk-${String(i).padStart(3, '0')}`);
    const expected = (await t.app.cardline.operatorKeys.list()).map((k) => k.name);
    expect(expected.length).toBeGreaterThan(200);
    const url = await m.listen({ host: '127.0.0.1', port: 0 });
    const env: NodeJS.ProcessEnv = { ...process.env, CARDLINE_ADMIN_URL: url, CARDLINE_OPERATOR_KEY: key };
    delete env.DATABASE_URL;
    const keys = await cliInProcess(['operator-key', 'list', '--json'], env);
    expect(keys.code, keys.stderr).toBe(0);
    expect((JSON.parse(keys.stdout) as { name: string }[]).map((k) => k.name)).toEqual(expected);
    const table = await cliInProcess(['operator-key', 'list'], env);
    expect(table.stdout.trim().split('\n')).toHaveLength(expected.length + 1);

    const tenants = await cliInProcess(['tenant', 'list', '--json'], env);
    expect(tenants.code, tenants.stderr).toBe(0);
    expect((JSON.parse(tenants.stdout) as { id: string }[]).map((x) => x.id)).toEqual((await t.app.cardline.tenants.listStored()).map((x) => x.id));
    const users = await cliInProcess(['user', 'list', '--tenant', 'demo-b', '--json'], env);
    expect((JSON.parse(users.stdout) as unknown[]).length).toBe(60);
  }, 300_000);
});
