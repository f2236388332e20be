// Notification channels, webhooks: a tenant's Admin manages them; events of record are delivered from the
// outbox, signed per Standard Webhooks and verified here with the `standardwebhooks` library; retries follow
// the (scaled-down) Svix schedule; a 410 disables the channel; deliveries are listed with their attempts,
// retried and replayed with the same webhook-id; a production tenant cannot target private addresses.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LIMIT_URL, PROBLEM_BASE, createTestApp, type TestApp } from '../helpers/app.js';
import { businessProblem, validationProblem } from '../helpers/problems.js';
import { startReceiver, verifyWebhook, type Receiver } from '../helpers/receiver.js';
import { sleep } from '../helpers/process.js';

let t: TestApp;
let rx: Receiver;
let amount = 60_000;

const PROD = 'bank-prod';

beforeAll(async () => {
  [t, rx] = await Promise.all([
    createTestApp({
      env: {
        CARDLINE_DELIVERY_WORKER: '1',
        CARDLINE_DELIVERY_POLL_MS: '20',
        // The whole schedule (27 h 35 min) in about 2 s.
        CARDLINE_DELIVERY_SCHEDULE_SCALE: '0.00002',
        CARDLINE_WEBHOOK_TIMEOUT_MS: '2000',
      },
      tenants: [{ id: PROD, config: { connector: { id: 'mock', options: { fixtures: 'demo' } } } }],
    }),
    startReceiver(),
  ]);
  await t.app.cardline.users.add(PROD, 'admin', 'Admin', 'correct-horse-battery');
});
afterAll(async () => {
  await t?.close();
  await rx?.close();
});

const created: string[] = [];
afterEach(async () => {
  // Each test's channels go, so that the next test's events reach only its own.
  for (const id of created.splice(0)) await t.app.cardline.channels.remove('demo', id).catch(() => undefined);
});

const admin = async (tenant = 'demo') => ({ 'X-TENANT-ID': tenant, authorization: `Bearer ${await t.token('Admin', tenant)}` });

const call = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, tenant = 'demo') =>
  t.inject({ method, url, headers: await admin(tenant), ...(payload === undefined ? {} : { payload: payload as object }) });

interface Created {
  channelId: string;
  secret: string;
  path: string;
}

let paths = 0;
const webhook = async (eventTypes: string[] = ['*'], extra: Record<string, unknown> = {}): Promise<Created> => {
  const path = `/hook-${++paths}`;
  const res = await call('POST', '/v1/admin/channels', { type: 'webhook', url: `${rx.base}${path}`, eventTypes, ...extra });
  expect(res.statusCode, res.body).toBe(201);
  const { channelId, secret } = res.json().result;
  created.push(channelId);
  return { channelId, secret, path };
};

const upgradeLimit = async (entityId = 'ENT-1001') => {
  amount += 10;
  const res = await t.inject({
    method: 'POST',
    url: LIMIT_URL,
    headers: { TENANT: 'demo', authorization: `Bearer ${await t.token('API Integration')}` },
    payload: { entityId, amount: `${amount}.00` },
  });
  expect(res.statusCode, res.body).toBe(200);
  return amount;
};

const deliveries = async (channelId: string, query = '') => (await call('GET', `/v1/admin/channels/${channelId}/deliveries${query}`)).json();

/** Polls the channel's deliveries until `check` holds. */
const eventually = async <T>(what: string, read: () => Promise<T>, check: (v: T) => boolean, ms = 60_000): Promise<T> => {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (check(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms (last: ${JSON.stringify(v)})`);
    await sleep(25);
  }
};

describe('channels: the Admin manages them', () => {
  it('creates a webhook (201, its secret shown once), reads, lists, patches and removes it', async () => {
    const res = await call('POST', '/v1/admin/channels', { type: 'webhook', url: `${rx.base}/crud`, eventTypes: ['card.blocked'], description: 'Risk desk' });
    expect(res.statusCode).toBe(201);
    const channel = res.json().result;
    expect(channel).toEqual({
      channelId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      type: 'webhook',
      eventTypes: ['card.blocked'],
      enabled: true,
      description: 'Risk desk',
      url: `${rx.base}/crud`,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const { secret, ...shown } = channel;
    const read = await call('GET', `/v1/admin/channels/${channel.channelId}`);
    expect(read.json()).toEqual({ result: shown, pagination: null });
    const list = await call('GET', '/v1/admin/channels');
    expect(list.json().result).toContainEqual(shown);
    expect(list.body).not.toContain(secret.slice(6));

    const patched = await call('PATCH', `/v1/admin/channels/${channel.channelId}`, { enabled: false, eventTypes: ['*'], description: null });
    expect(patched.statusCode).toBe(200);
    const { description: _gone, ...rest } = shown;
    expect(patched.json().result).toEqual({ ...rest, enabled: false, eventTypes: ['*'], updatedAt: expect.any(String) });

    const removed = await call('DELETE', `/v1/admin/channels/${channel.channelId}`);
    expect(removed.json()).toEqual({ result: { message: `Channel ${channel.channelId} removed` }, pagination: null });
    const gone = await call('GET', `/v1/admin/channels/${channel.channelId}`);
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toEqual({
      type: `${PROBLEM_BASE}/problem-with-message`,
      title: 'Not Found',
      status: 404,
      message: 'error.http.404',
      detail: `This tenant has no notification channel '${channel.channelId}'.`,
    });
    // Every change is in the audit trail, never the secret.
    const audit = await t.db.query<{ action: string; target: Record<string, string> }>(
      "SELECT action, target FROM audit_log WHERE tenant_id = 'demo' AND action LIKE 'channel.%' ORDER BY seq",
    );
    expect(audit.rows.map((r) => r.action)).toEqual(['channel.create', 'channel.read', 'channel.list', 'channel.update', 'channel.remove', 'channel.read']);
    expect(JSON.stringify(audit.rows)).not.toContain(secret.slice(6));
  });

  it('refuses bad channels with exact problems, creating nothing', async () => {
    const before = (await call('GET', '/v1/admin/channels')).json().result.length;
    const bad = async (body: unknown) => (await call('POST', '/v1/admin/channels', body)).json();
    expect(await bad({ type: 'webhook', eventTypes: ['*'] })).toEqual(validationProblem('channelRequest', ['url', 'NotNull']));
    expect(await bad({ type: 'webhook', url: `${rx.base}/x`, eventTypes: ['*', 'card.locked'] })).toEqual(validationProblem('channelRequest', ['eventTypes', 'Invalid']));
    expect((await call('POST', '/v1/admin/channels', { type: 'webhook', url: `${rx.base}/x`, eventTypes: ['card.exploded'] })).statusCode).toBe(400);
    expect((await call('POST', '/v1/admin/channels', { type: 'smtp', eventTypes: ['*'] })).statusCode).toBe(400);
    expect(await bad({ type: 'nats', eventTypes: ['*'], url: 'https://x.example' })).toEqual(validationProblem('channelRequest', ['url', 'UnknownProperty']));
    // This app has no NATS_URL.
    expect(await bad({ type: 'nats', eventTypes: ['*'] })).toEqual(
      businessProblem('NATS Not Configured', 'NATS_NOT_CONFIGURED', 'This gateway has no NATS server (NATS_URL); ask the operator to configure one.'),
    );
    // Another role may not.
    const ops = await t.inject({ method: 'GET', url: '/v1/admin/channels', headers: { 'X-TENANT-ID': 'demo', authorization: `Bearer ${await t.token('Operations')}` } });
    expect(ops.statusCode).toBe(403);
    expect((await call('GET', '/v1/admin/channels')).json().result.length).toBe(before);
  });

  it('a production tenant may target neither private, loopback, link-local nor metadata addresses, nor plain http', async () => {
    const refused = async (url: string) => (await call('POST', '/v1/admin/channels', { type: 'webhook', url, eventTypes: ['*'] }, PROD)).json();
    const refusal = (reason: string) => businessProblem('Webhook URL Refused', 'WEBHOOK_URL_REFUSED', `The webhook URL is refused: ${reason}.`);
    const https = (host: string, address: string, range: string) => refusal(`${host} resolves to ${address}, a ${range} address; webhooks may only target public addresses`);
    expect(await refused('https://10.1.2.3/hook')).toEqual(https('10.1.2.3', '10.1.2.3', 'private'));
    expect(await refused('https://192.168.0.10/hook')).toEqual(https('192.168.0.10', '192.168.0.10', 'private'));
    expect(await refused('https://172.16.5.4/hook')).toEqual(https('172.16.5.4', '172.16.5.4', 'private'));
    expect(await refused('https://169.254.169.254/latest/meta-data')).toEqual(https('169.254.169.254', '169.254.169.254', 'linkLocal'));
    expect(await refused('https://127.0.0.1/hook')).toEqual(https('127.0.0.1', '127.0.0.1', 'loopback'));
    expect(await refused('https://[::1]/hook')).toEqual(https('::1', '::1', 'loopback'));
    expect(await refused('https://[fd00::1]/hook')).toEqual(https('fd00::1', 'fd00::1', 'uniqueLocal'));
    // IPv6 forms that embed an IPv4 address are judged by it (issue 20: the IPv4-compatible ones counted as public).
    const embeds = (address: string, range: string, v4: string) =>
      refusal(`${address} resolves to ${address}, a ${range} address (it embeds ${v4}); webhooks may only target public addresses`);
    expect(await refused('https://[::ffff:10.0.0.1]/hook')).toEqual(embeds('::ffff:a00:1', 'private', '10.0.0.1'));
    expect(await refused('https://[::a9fe:a9fe]/')).toEqual(embeds('::a9fe:a9fe', 'linkLocal', '169.254.169.254'));
    expect(await refused('https://[::7f00:1]/')).toEqual(embeds('::7f00:1', 'loopback', '127.0.0.1'));
    expect(await refused('https://[::a00:1]/')).toEqual(embeds('::a00:1', 'private', '10.0.0.1'));
    expect(await refused('https://[64:ff9b::169.254.169.254]/')).toEqual(embeds('64:ff9b::a9fe:a9fe', 'linkLocal', '169.254.169.254'));
    expect(await refused('https://100.64.0.1/hook')).toEqual(https('100.64.0.1', '100.64.0.1', 'carrierGradeNat'));
    expect(await refused('https://0.0.0.0/hook')).toEqual(https('0.0.0.0', '0.0.0.0', 'unspecified'));
    expect(await refused('https://localhost/hook')).toEqual(expect.objectContaining({ businessCode: 'WEBHOOK_URL_REFUSED', detail: expect.stringMatching(/^The webhook URL is refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address/) }));
    expect(await refused(`${rx.base}/hook`)).toEqual(refusal('url must be an https URL (only a sandbox tenant may target loopback over http)'));
    expect(await refused('https://user:pw@hooks.example/hook')).toEqual(refusal('url must not hold credentials'));
    expect(await refused('ftp://hooks.example/hook')).toEqual(refusal('url must be an https URL'));
    expect((await call('GET', '/v1/admin/channels', undefined, PROD)).json().result).toEqual([]);
    // A sandbox tenant (demo) may use loopback over http, but not another private address.
    expect((await call('POST', '/v1/admin/channels', { type: 'webhook', url: 'http://10.1.2.3/hook', eventTypes: ['*'] })).json()).toEqual(
      refusal('url must be an https URL (a sandbox tenant may use http to loopback only)'),
    );
    expect((await call('POST', '/v1/admin/channels', { type: 'webhook', url: 'https://10.1.2.3/hook', eventTypes: ['*'] })).json()).toEqual(https('10.1.2.3', '10.1.2.3', 'private'));
    // A PATCH to a refused URL changes nothing.
    const ch = await webhook();
    expect((await call('PATCH', `/v1/admin/channels/${ch.channelId}`, { url: 'https://169.254.169.254/x' })).json()).toEqual(https('169.254.169.254', '169.254.169.254', 'linkLocal'));
    expect((await call('GET', `/v1/admin/channels/${ch.channelId}`)).json().result.url).toBe(`${rx.base}${ch.path}`);
  });
});

describe('webhook delivery', () => {
  // How fast it arrives is a figure of the benchmark, not a bound a loaded machine must meet here.
  it('the first event of a limit upgrade arrives signed, verified by standardwebhooks', async () => {
    const ch = await webhook(['credit-limit.upgraded']);
    const newLimit = await upgradeLimit();
    const [hook] = await rx.waitFor(ch.path, 1, 60_000);
    const body = verifyWebhook(ch.secret, hook!);
    expect(body).toEqual({
      type: 'credit-limit.upgraded',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      data: { entityId: 'ENT-1001', previousLimit: expect.any(String), newLimit: `${newLimit}.00` },
    });
    expect(hook!.headers['webhook-id']).toMatch(/^msg_[0-9a-f-]{36}$/);
    expect(hook!.headers['content-type']).toBe('application/json');
    expect(hook!.body).not.toContain('whsec_');
    const page = await eventually('delivered', () => deliveries(ch.channelId), (p) => p.result[0]?.status === 'delivered');
    expect(page).toEqual({
      result: [
        {
          deliveryId: expect.any(String),
          channelId: ch.channelId,
          eventId: String(hook!.headers['webhook-id']).slice(4),
          eventType: 'credit-limit.upgraded',
          webhookId: hook!.headers['webhook-id'],
          status: 'delivered',
          attemptCount: 1,
          nextAttemptAt: null,
          createdAt: expect.any(String),
          deliveredAt: expect.any(String),
          attempts: [{ n: 1, at: expect.any(String), statusCode: 204, durationMs: expect.any(Number), error: null }],
        },
      ],
      pagination: { nextCursor: null },
    });
  });

  it('only the subscribed event types reach a channel', async () => {
    const blocked = await webhook(['card.blocked']);
    const all = await webhook(['*']);
    await upgradeLimit();
    await rx.waitFor(all.path, 1, 60_000);
    // One statement fanned the event out to every channel subscribing to it: the other has no delivery.
    expect((await deliveries(blocked.channelId)).result).toEqual([]);
    expect(rx.at(blocked.path)).toEqual([]);
  });

  it('a receiver answering 500 twice gets the same webhook-id three times; the delivery is delivered', async () => {
    const ch = await webhook(['credit-limit.upgraded']);
    rx.answer(ch.path, { status: 500 }, { status: 500 }, { status: 200 });
    await upgradeLimit();
    const hooks = await rx.waitFor(ch.path, 3);
    expect(new Set(hooks.map((h) => h.headers['webhook-id'])).size).toBe(1);
    for (const h of hooks) expect(verifyWebhook(ch.secret, h).type).toBe('credit-limit.upgraded');
    const page = await eventually('delivered', () => deliveries(ch.channelId), (p) => p.result[0]?.status === 'delivered');
    expect(page.result[0].attempts.map((a: { statusCode: number; error: string | null }) => [a.statusCode, a.error])).toEqual([
      [500, 'HTTP 500'],
      [500, 'HTTP 500'],
      [200, null],
    ]);
    expect(page.result[0].attemptCount).toBe(3);
  });

  it('Retry-After is honoured', async () => {
    const ch = await webhook(['credit-limit.upgraded']);
    rx.answer(ch.path, { status: 429, headers: { 'retry-after': '1' } }, { status: 200 });
    await upgradeLimit();
    // The receiver's default bound (60 s) only ends a broken run: the delay is asserted from below.
    const [first, second] = await rx.waitFor(ch.path, 2);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(900);
  });

  it("during a rotation's overlap both signatures are sent, and both verify", async () => {
    const ch = await webhook(['credit-limit.upgraded']);
    const rotated = await call('POST', `/v1/admin/channels/${ch.channelId}/rotate-secret`, {});
    expect(rotated.statusCode).toBe(200);
    const { secret: newSecret, previousSecretUntil } = rotated.json().result;
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(ch.secret);
    expect(Date.parse(previousSecretUntil) - Date.now()).toBeGreaterThan(23.9 * 3600_000);
    await upgradeLimit();
    const [hook] = await rx.waitFor(ch.path, 1);
    const signatures = String(hook!.headers['webhook-signature']).split(' ');
    expect(signatures).toHaveLength(2);
    // Each secret's own signature verifies (the library accepts a header when one of its signatures matches).
    expect(verifyWebhook(newSecret, hook!).type).toBe('credit-limit.upgraded');
    expect(verifyWebhook(ch.secret, hook!).type).toBe('credit-limit.upgraded');
    for (const [secret, signature] of [[newSecret, signatures[0]!], [ch.secret, signatures[1]!]] as const) {
      expect(verifyWebhook(secret, { ...hook!, headers: { ...hook!.headers, 'webhook-signature': signature } }).type).toBe('credit-limit.upgraded');
    }
    // Every field is optional, so the body may be left out (issue 20: it answered 400): the default overlap.
    const bare = await t.inject({ method: 'POST', url: `/v1/admin/channels/${ch.channelId}/rotate-secret`, headers: await admin() });
    expect(bare.statusCode, bare.body).toBe(200);
    expect(Date.parse(bare.json().result.previousSecretUntil) - Date.now()).toBeGreaterThan(23.9 * 3600_000);
    // Without an overlap, only the new secret signs.
    const again = await call('POST', `/v1/admin/channels/${ch.channelId}/rotate-secret`, { overlapSeconds: 0 });
    const latest = again.json().result.secret;
    await upgradeLimit();
    const [, next] = await rx.waitFor(ch.path, 2);
    expect(String(next!.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verifyWebhook(latest, next!).type).toBe('credit-limit.upgraded');
    expect(() => verifyWebhook(newSecret, next!)).toThrow();
  });

  it('a receiver down for the whole schedule leaves the delivery failed; retry delivers it with the same webhook-id', async () => {
    const ch = await webhook(['credit-limit.upgraded']);
    rx.answer(ch.path, { status: 503 });
    await upgradeLimit();
    const hooks = await rx.waitFor(ch.path, 8);
    const page = await eventually('failed', () => deliveries(ch.channelId, '?status=failed'), (p) => p.result.length === 1);
    const failed = page.result[0];
    expect(failed.attemptCount).toBe(8);
    expect(failed.attempts).toHaveLength(8);
    expect(failed.nextAttemptAt).toBeNull();
    // Failed is final (only a retry by hand claims it again), and the eighth request arrived before it settled.
    expect(rx.at(ch.path)).toHaveLength(8);
    expect(new Set(hooks.map((h) => h.headers['webhook-id']))).toEqual(new Set([failed.webhookId]));

    rx.answer(ch.path, { status: 200 });
    const retried = await call('POST', `/v1/admin/deliveries/${failed.deliveryId}/retry`);
    expect(retried.statusCode).toBe(200);
    expect(retried.json().result).toEqual(expect.objectContaining({ status: 'delivered', attemptCount: 9, webhookId: failed.webhookId }));
    expect(rx.at(ch.path)).toHaveLength(9);
    expect(rx.at(ch.path)[8]!.headers['webhook-id']).toBe(failed.webhookId);
    expect(verifyWebhook(ch.secret, rx.at(ch.path)[8]!).type).toBe('credit-limit.upgraded');

    const unknown = await call('POST', '/v1/admin/deliveries/0190b3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b/retry');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().detail).toBe("This tenant has no delivery '0190b3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b'.");
  });

  it('a 410 disables the channel; its deliveries wait until it is enabled again', async () => {
    const ch = await webhook(['credit-limit.upgraded']);
    rx.answer(ch.path, { status: 410 });
    await upgradeLimit();
    await rx.waitFor(ch.path, 1);
    const channel = await eventually('disabled', async () => (await call('GET', `/v1/admin/channels/${ch.channelId}`)).json().result, (c) => c.enabled === false);
    expect(channel.disabledReason).toMatch(/^The receiver answered 410 Gone at .*; the gateway disabled the channel\.$/);
    expect((await deliveries(ch.channelId)).result[0]).toEqual(expect.objectContaining({ status: 'failed', attemptCount: 1 }));
    // While disabled nothing is sent; a test and a retry are refused. The event is done (fanned out to no one)
    // once it is committed, since no enabled channel subscribes to it: nothing can reach the receiver later.
    await upgradeLimit();
    const latest = await t.db.query<{ status: string }>("SELECT status FROM outbox WHERE tenant_id = 'demo' AND type = 'credit-limit.upgraded' ORDER BY audit_seq DESC LIMIT 1");
    expect(latest.rows).toEqual([{ status: 'done' }]);
    expect(rx.at(ch.path)).toHaveLength(1);
    const test = await call('POST', `/v1/admin/channels/${ch.channelId}/test`);
    expect(test.json()).toEqual(businessProblem('Channel Disabled', 'CHANNEL_DISABLED', 'The channel is disabled; enable it (PATCH {"enabled": true}) first.'));
    const listed = (await deliveries(ch.channelId)).result;
    // The event committed while disabled was not fanned out to it (a replay reaches it), and the refused test added none.
    expect(listed).toHaveLength(1);
    const retry = await call('POST', `/v1/admin/deliveries/${listed[0].deliveryId}/retry`);
    expect(retry.json()).toEqual(businessProblem('Channel Disabled', 'CHANNEL_DISABLED', 'The channel is disabled; enable it (PATCH {"enabled": true}) first.'));
    // Enabled again: the reason is cleared.
    rx.answer(ch.path, { status: 200 });
    const enabled = await call('PATCH', `/v1/admin/channels/${ch.channelId}`, { enabled: true });
    expect(enabled.json().result.disabledReason).toBeUndefined();
  });

  it('POST /test sends a channel.test event at once and answers its delivery', async () => {
    const ch = await webhook(['card.blocked']);
    const res = await call('POST', `/v1/admin/channels/${ch.channelId}/test`);
    expect(res.statusCode).toBe(200);
    expect(res.json().result).toEqual(expect.objectContaining({ eventType: 'channel.test', status: 'delivered', attemptCount: 1 }));
    const [hook] = rx.at(ch.path);
    expect(verifyWebhook(ch.secret, hook!)).toEqual({
      type: 'channel.test',
      timestamp: expect.any(String),
      data: { channelId: ch.channelId, message: 'A test event from Cardline' },
    });
  });

  it('replay queues a time range again with the same webhook-ids', async () => {
    const ch = await webhook(['credit-limit.upgraded']);
    const from = new Date().toISOString();
    await upgradeLimit();
    await upgradeLimit('ENT-1002');
    const first = await rx.waitFor(ch.path, 2);
    const ids = new Set(first.map((h) => h.headers['webhook-id']));
    await eventually('delivered', () => deliveries(ch.channelId, '?status=delivered'), (p) => p.result.length === 2);
    const res = await call('POST', `/v1/admin/channels/${ch.channelId}/replay`, { from, to: new Date(Date.now() + 1000).toISOString() });
    expect(res.json()).toEqual({ result: { message: '2 event(s) queued again', requeued: 2 }, pagination: null });
    const all = await rx.waitFor(ch.path, 4);
    expect(new Set(all.slice(2).map((h) => h.headers['webhook-id']))).toEqual(ids);
    const bad = await call('POST', `/v1/admin/channels/${ch.channelId}/replay`, { from, to: from });
    expect(bad.json()).toEqual(validationProblem('replayRequest', ['to', 'Invalid']));
    // Too long a range names its maximum (issue 20, point 11).
    const long = await call('POST', `/v1/admin/channels/${ch.channelId}/replay`, { from: '2026-01-01T00:00:00Z', to: '2026-02-01T00:00:01Z' });
    expect(long.json()).toEqual(validationProblem('replayRequest', ['to', 'Size: at most 31 days']));
  });

  it('lists deliveries page by page; refuses a cursor it did not issue', async () => {
    const ch = await webhook(['credit-limit.upgraded']);
    for (let i = 0; i < 3; i++) await upgradeLimit();
    await eventually('3 delivered', () => deliveries(ch.channelId, '?status=delivered'), (p) => p.result.length === 3);
    const one = await deliveries(ch.channelId, '?limit=2');
    expect(one.result).toHaveLength(2);
    const two = await deliveries(ch.channelId, `?limit=2&cursor=${one.pagination.nextCursor}`);
    expect(two.result).toHaveLength(1);
    expect(two.pagination.nextCursor).toBeNull();
    expect(new Set([...one.result, ...two.result].map((d: { deliveryId: string }) => d.deliveryId)).size).toBe(3);
    expect(await deliveries(ch.channelId, '?cursor=bm90LWEtY3Vyc29y')).toEqual(validationProblem('deliveryListRequest', ['cursor', 'Invalid']));
    expect(await deliveries(ch.channelId, '?limit=0')).toEqual(validationProblem('deliveryListRequest', ['limit', 'Min']));
    expect(await deliveries(ch.channelId, '?limit=201')).toEqual(validationProblem('deliveryListRequest', ['limit', 'Max']));
    expect((await call('GET', `/v1/admin/channels/${ch.channelId}/deliveries?status=lost`)).statusCode).toBe(400);
  });

  it('security events reach the channels: user.created, user.disabled, user.locked, keys.rotated, tenant.config-changed', async () => {
    const ch = await webhook(['user.created', 'user.disabled', 'user.locked', 'keys.rotated', 'tenant.config-changed']);
    const password = await t.encrypt('a-long-password-1');
    expect((await call('POST', '/v1/admin/users', { username: 'eve', role: 'Operations', password })).statusCode).toBe(201);
    expect((await call('PATCH', '/v1/admin/users/eve', { disabled: false })).statusCode).toBe(200); // no event: not a disabling
    expect((await call('PATCH', '/v1/admin/users/eve', { disabled: true })).statusCode).toBe(200);
    expect((await call('PATCH', '/v1/admin/users/eve', { disabled: false })).statusCode).toBe(200);
    for (let i = 0; i < 10; i++) {
      const res = await t.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: 'demo' }, payload: { username: 'eve', password: await t.encrypt('wrong-password') } });
      expect(res.statusCode).toBe(401);
    }
    expect((await call('POST', '/v1/admin/keys/rotate', { use: 'enc' })).statusCode).toBe(200);
    expect((await call('PATCH', '/v1/admin/config', { tokenLifetimeSeconds: 1800 })).statusCode).toBe(200);
    const hooks = await rx.waitFor(ch.path, 5);
    const bodies = hooks.map((h) => verifyWebhook(ch.secret, h));
    // Channels do not promise order (up to four deliveries of a channel are in flight at once): compared by type.
    const order = ['user.created', 'user.disabled', 'user.locked', 'keys.rotated', 'tenant.config-changed'];
    const sorted = bodies.map((b) => [b.type, b.data] as const).sort((a, b) => order.indexOf(a[0]) - order.indexOf(b[0]));
    expect(sorted).toEqual([
      ['user.created', { username: 'eve', role: 'Operations' }],
      ['user.disabled', { username: 'eve', by: expect.any(String) }],
      ['user.locked', { username: 'eve', failures: 10, lockedMinutes: 30 }],
      ['keys.rotated', { use: 'enc', kid: expect.any(String), replaced: [expect.any(String)] }],
      ['tenant.config-changed', { tenantId: 'demo', changed: ['tokenLifetimeSeconds'] }],
    ]);
    expect(hooks.map((h) => h.body).join('')).not.toMatch(/password|whsec_|"d":/);
  });

  it('metrics: deliveries by channel type and outcome, delivery lag, outbox depth', async () => {
    const management = await t.management();
    const res = await management.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${await t.operatorKey()}` } });
    expect(res.statusCode).toBe(200);
    expect(res.body).toMatch(/^cardline_deliveries_total\{channel_type="webhook",outcome="delivered"\} [1-9]/m);
    expect(res.body).toMatch(/^cardline_deliveries_total\{channel_type="webhook",outcome="retrying"\} [1-9]/m);
    expect(res.body).toMatch(/^cardline_deliveries_total\{channel_type="webhook",outcome="failed"\} [1-9]/m);
    expect(res.body).toMatch(/^cardline_deliveries_total\{channel_type="webhook",outcome="gone"\} 1/m);
    expect(res.body).toMatch(/^cardline_delivery_lag_seconds_count\{channel_type="webhook"\} [1-9]/m);
    expect(res.body).toMatch(/^cardline_outbox_pending \d+/m);
    expect(res.body).toMatch(/^cardline_deliveries_pending \d+/m);
  });
});
