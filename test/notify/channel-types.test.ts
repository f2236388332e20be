// Channel types as declarations, without a broker: what a type declares holds at the API (each type's create body
// checked with exact problems, a broker URL's credentials never in a view, an answer or an attempt), the store
// accepts exactly the listed types, and a store written before channel types were data migrates forward.
import { Type, type TSchema } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/migrate.js';
import { migrations } from '../../src/store/migrations/index.js';
import { CHANNEL_TYPES } from '../../src/notify/channel-types/index.js';
import { ChannelView, fieldsOf, merged } from '../../src/notify/channel-types/schemas.js';
import type { ChannelTypeDeclaration } from '../../src/notify/channel-types/type.js';
import { createTestApp, createTestDb, type TestApp } from '../helpers/app.js';
import { businessProblem, validationProblem } from '../helpers/problems.js';

const PROD = 'bank-prod';
const PASSWORD = 'S3cret-broker-pa55';

let t: TestApp;
beforeAll(async () => {
  // An address nothing listens on: attempts fail at once, without a broker.
  t = await createTestApp({
    env: { CARDLINE_DELIVERY_WORKER: '0', CARDLINE_WEBHOOK_TIMEOUT_MS: '2000' },
    tenants: [{ id: PROD, config: { connector: { id: 'mock', options: { fixtures: 'demo' } } } }],
  });
  await t.app.cardline.users.add(PROD, 'admin', 'Admin', 'correct-horse-battery');
});
afterAll(async () => {
  await t?.close();
});

const call = async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown, tenant = 'demo') =>
  t.inject({
    method,
    url,
    headers: { 'X-TENANT-ID': tenant, authorization: `Bearer ${await t.token('Admin', tenant)}` },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

const refusal = (reason: string) => businessProblem('Channel URL Refused', 'CHANNEL_URL_REFUSED', `The broker URL is refused: ${reason}.`);

describe('a channel type is what it declares', () => {
  it("refuses a body that does not hold its type's fields, with exact problems, creating nothing", async () => {
    const before = (await call('GET', '/v1/admin/channels')).json().result.length;
    const bad = async (body: unknown, tenant = 'demo') => {
      const res = await call('POST', '/v1/admin/channels', body, tenant);
      return { status: res.statusCode, body: res.json() };
    };
    expect(await bad({ type: 'rabbitmq', eventTypes: ['*'] })).toEqual({
      status: 400,
      body: validationProblem('channelRequest', ['url', 'NotNull'], ['exchange', 'NotNull']),
    });
    expect(await bad({ type: 'webhook', url: 'http://127.0.0.1:9/x', eventTypes: ['*'], exchange: 'cards', routingKeyPrefix: 'bank' })).toEqual({
      status: 400,
      body: validationProblem('channelRequest', ['exchange', 'UnknownProperty'], ['routingKeyPrefix', 'UnknownProperty']),
    });
    expect(await bad({ type: 'nats', eventTypes: ['*'], exchange: 'cards' })).toEqual({
      status: 400,
      body: validationProblem('channelRequest', ['exchange', 'UnknownProperty']),
    });
    expect(await bad({ type: 'rabbitmq', url: 'amqp://127.0.0.1:1', exchange: 'cards', exchangeType: 'x-delayed', eventTypes: ['*'] })).toEqual({
      status: 400,
      body: validationProblem('channelRequest', ['exchangeType', 'Invalid']),
    });
    expect(await bad({ type: 'rabbitmq', url: 'amqp://127.0.0.1:1', exchange: 'a b', eventTypes: ['*'] })).toEqual({
      status: 400,
      body: validationProblem('channelRequest', ['exchange', 'Pattern']),
    });

    // The address policy of webhooks, for a broker: amqps and public addresses for a production tenant.
    expect(await bad({ type: 'rabbitmq', url: 'https://mq.bank.example/', exchange: 'cards', eventTypes: ['*'] })).toEqual({
      status: 409,
      body: refusal('url must be an amqps URL'),
    });
    expect(await bad({ type: 'rabbitmq', url: `amqp://cardline:${PASSWORD}@127.0.0.1:5672/`, exchange: 'cards', eventTypes: ['*'] }, PROD)).toEqual({
      status: 409,
      body: refusal('url must be an amqps URL (only a sandbox tenant may target loopback over amqp)'),
    });
    expect(await bad({ type: 'rabbitmq', url: `amqps://cardline:${PASSWORD}@10.1.2.3/cards`, exchange: 'cards', eventTypes: ['*'] }, PROD)).toEqual({
      status: 409,
      body: refusal('10.1.2.3 resolves to 10.1.2.3, a private address; channels may only target public addresses'),
    });
    expect(await bad({ type: 'rabbitmq', url: 'amqp://10.1.2.3/', exchange: 'cards', eventTypes: ['*'] })).toEqual({
      status: 409,
      body: refusal('url must be an amqps URL (a sandbox tenant may use amqp to loopback only)'),
    });
    expect(await bad({ type: 'rabbitmq', url: 'amqp://127.0.0.1/a/b', exchange: 'cards', eventTypes: ['*'] })).toEqual({
      status: 409,
      body: refusal('url must name the virtual host as one path segment (%2F for /)'),
    });
    expect((await call('GET', '/v1/admin/channels')).json().result.length).toBe(before);
  });

  it("keeps a broker URL's credentials sealed: never in a view, an answer, an attempt or the store in clear", async () => {
    const url = `amqp://cardline:${PASSWORD}@127.0.0.1:1/cards`;
    const created = await call('POST', '/v1/admin/channels', { type: 'rabbitmq', url, exchange: 'cardline.events', routingKeyPrefix: 'bank', eventTypes: ['*'] });
    expect(created.statusCode, created.body).toBe(201);
    const channel = created.json().result;
    expect(channel).toEqual({
      channelId: expect.any(String),
      type: 'rabbitmq',
      eventTypes: ['*'],
      enabled: true,
      url: 'amqp://127.0.0.1:1/cards',
      exchange: 'cardline.events',
      routingKey: 'bank.<eventType>',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    // No signing secret: the type has none to show or rotate.
    const rotated = await call('POST', `/v1/admin/channels/${channel.channelId}/rotate-secret`, {});
    expect(rotated.json()).toEqual(businessProblem('Channel Not Webhook', 'CHANNEL_NOT_WEBHOOK', 'Only a webhook channel has a signing secret.'));

    // An attempt fails (nothing listens there) and says why, without the credentials.
    const test = await call('POST', `/v1/admin/channels/${channel.channelId}/test`);
    expect(test.json().result.attempts[0].error).toBe('rabbitmq: connect ECONNREFUSED 127.0.0.1:1');

    // Another exchange, and a new URL: the old credentials go, the new ones are as secret.
    const patched = await call('PATCH', `/v1/admin/channels/${channel.channelId}`, { exchange: 'cardline.v2', url: `amqp://other:${PASSWORD}x@localhost:1/` });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().result).toEqual(expect.objectContaining({ url: 'amqp://localhost:1/', exchange: 'cardline.v2', routingKey: 'bank.<eventType>' }));

    const answers = [created, rotated, test, patched, await call('GET', `/v1/admin/channels/${channel.channelId}`), await call('GET', '/v1/admin/channels')];
    const deliveries = await call('GET', `/v1/admin/channels/${channel.channelId}/deliveries`);
    for (const res of [...answers, deliveries]) expect(res.body).not.toContain(PASSWORD);
    const row = await t.db.query<Record<string, unknown>>('SELECT * FROM channels WHERE id = $1', [channel.channelId]);
    expect(JSON.stringify(row.rows)).not.toContain(PASSWORD);
    const attempts = await t.db.query<Record<string, unknown>>('SELECT * FROM delivery_attempts');
    expect(JSON.stringify(attempts.rows)).not.toContain(PASSWORD);
    // The worker's copy opens to the new URL.
    const forDelivery = await t.app.cardline.channels.forDelivery([{ tenantId: 'demo', channelId: channel.channelId }]);
    expect(forDelivery.get(`demo/${channel.channelId}`)?.secret).toEqual({ url: `amqp://other:${PASSWORD}x@localhost:1/` });
  });

  it("a PATCH changes only what the channel's type has", async () => {
    const hook = (await call('POST', '/v1/admin/channels', { type: 'webhook', url: 'http://127.0.0.1:9/x', eventTypes: ['*'] })).json().result;
    expect((await call('PATCH', `/v1/admin/channels/${hook.channelId}`, { exchange: 'cards' })).json()).toEqual(validationProblem('channelPatch', ['exchange', 'UnknownProperty']));
    // A webhook's URL is a webhook's, whatever another type would take.
    const amqpUrl = await call('PATCH', `/v1/admin/channels/${hook.channelId}`, { url: 'amqp://127.0.0.1:1/' });
    expect(amqpUrl.json()).toEqual(businessProblem('Webhook URL Refused', 'WEBHOOK_URL_REFUSED', 'The webhook URL is refused: url must be an https URL.'));
    const nats = (await call('POST', '/v1/admin/channels', { type: 'nats', eventTypes: ['*'] })).json();
    expect(nats.businessCode).toBe('NATS_NOT_CONFIGURED');
  });

  it('the view and the store know exactly the listed types', async () => {
    expect((ChannelView as unknown as { properties: { type: { anyOf: { const: string }[] } } }).properties.type.anyOf.map((l) => l.const)).toEqual(
      CHANNEL_TYPES.map((d) => d.type),
    );
    const types = await t.db.query<{ type: string }>('SELECT type FROM channel_types ORDER BY type');
    expect(types.rows.map((r) => r.type)).toEqual(CHANNEL_TYPES.map((d) => d.type).sort());
    const id = '0190b3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b';
    await expect(t.db.query(`INSERT INTO channels (tenant_id, id, type, event_types) VALUES ('demo', $1, 'smtp', '["*"]'::jsonb)`, [id])).rejects.toThrow(
      /channels_type_known/,
    );
  });
});

describe('a store from before channel types were data', () => {
  it('migrates forward: its channels stay, the hard-coded check goes, a new type is accepted', async () => {
    const { db, drop } = await createTestDb({ migrated: false });
    try {
      const at = migrations.findIndex((m) => m.name === '0021-channel-types');
      await db.exec('CREATE TABLE cardline_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
      for (const m of migrations.slice(0, at)) await db.exec(`${m.sql}\nINSERT INTO cardline_migrations (name) VALUES ('${m.name}');`);
      await db.query(`INSERT INTO tenants (tenant_id, name, config) VALUES ('old-bank', 'Old bank', '{}'::jsonb)`);
      await db.query(
        `INSERT INTO channels (tenant_id, id, type, event_types, url) VALUES
           ('old-bank', '0190b3c4-5d6e-7f80-9a1b-2c3d4e5f6a01', 'webhook', '["*"]'::jsonb, 'https://hooks.bank.example/a'),
           ('old-bank', '0190b3c4-5d6e-7f80-9a1b-2c3d4e5f6a02', 'nats', '["card.blocked"]'::jsonb, NULL)`,
      );
      await expect(db.query(`INSERT INTO channels (tenant_id, id, type, event_types) VALUES ('old-bank', gen_random_uuid(), 'rabbitmq', '["*"]'::jsonb)`)).rejects.toThrow(
        /channels_type_check/,
      );

      expect(await migrate(db)).toEqual(migrations.slice(at).map((m) => m.name));
      const kept = await db.query<{ type: string; url: string | null; settings: unknown; settings_sealed: string | null }>(
        'SELECT type, url, settings, settings_sealed FROM channels ORDER BY id',
      );
      expect(kept.rows).toEqual([
        { type: 'webhook', url: 'https://hooks.bank.example/a', settings: {}, settings_sealed: null },
        { type: 'nats', url: null, settings: {}, settings_sealed: null },
      ]);
      // The gateway writes its list at start (ChannelService.registerTypes); then a rabbitmq channel is accepted.
      await db.query("INSERT INTO channel_types (type) VALUES ('rabbitmq')");
      await db.query(`INSERT INTO channels (tenant_id, id, type, event_types) VALUES ('old-bank', gen_random_uuid(), 'rabbitmq', '["*"]'::jsonb)`);
    } finally {
      await drop();
    }
  });
});

describe('composing the list', () => {
  const declaring = (type: string, fields: Record<string, TSchema>) => ({ ...CHANNEL_TYPES[0], type, fields }) as ChannelTypeDeclaration;

  it('two types may share a field only if it checks the same; the shared field then says what it is for each', () => {
    const a = declaring('a', { url: Type.String({ maxLength: 10, description: 'an https URL' }) });
    const b = declaring('b', { url: Type.String({ maxLength: 10, description: 'an amqps URL' }) });
    const shared = fieldsOf((d) => d.fields, [a, b]).get('url')!;
    expect(shared.map((f) => f.type)).toEqual(['a', 'b']);
    expect(merged(shared)).toEqual(expect.objectContaining({ maxLength: 10, description: 'a: an https URL; b: an amqps URL' }));
    const c = declaring('c', { url: Type.String({ maxLength: 20 }) });
    expect(() => fieldsOf((d) => d.fields, [a, c])).toThrow("Channel types a and c both declare 'url' but check it differently: rename one");
    expect(() => fieldsOf((d) => d.fields, [declaring('d', { eventTypes: Type.String() })])).toThrow("Channel type d declares 'eventTypes', a field every channel has");
  });
});
