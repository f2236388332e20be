// The parts of notification delivery that need no store: the SSRF policy (allow-list, DNS answers checked at
// connection time), the retry schedule with its jitter and Retry-After, and signatures a real Standard
// Webhooks client accepts.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { TargetRefused, addressRefusal, checkTarget, checkedLookup, rangeOf } from '../../src/notify/addresses.js';
import { MAX_ATTEMPTS, RETRY_SCHEDULE_MS, nextDelayMs, webhookBody } from '../../src/notify/deliveries.js';
import { WebhookSender, newSecret, retryAfterMs, sign } from '../../src/notify/webhook.js';

const production = { sandbox: false, allowHosts: [] as string[] };

describe('webhook targets', () => {
  it('names the range of an address', () => {
    expect(['8.8.8.8', '2606:4700::1111', '10.0.0.1', '127.0.0.2', '169.254.169.254', '::ffff:192.168.1.1', 'fe80::1', '100.100.0.1'].map(rangeOf)).toEqual([
      'public', 'public', 'private', 'loopback', 'linkLocal', 'private', 'linkLocal', 'carrierGradeNat',
    ]);
  });

  it('a name resolving to any private address is refused; the allow-list admits a named host', async () => {
    const resolve = async (host: string) =>
      host === 'mixed.example' ? [{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.7', family: 4 }] : [{ address: '93.184.216.34', family: 4 }];
    await expect(checkTarget('https://mixed.example/hook', production, resolve)).rejects.toThrow(
      new TargetRefused('mixed.example resolves to 10.0.0.7, a private address; webhooks may only target public addresses'),
    );
    await expect(checkTarget('https://public.example/hook', production, resolve)).resolves.toBeInstanceOf(URL);
    await expect(checkTarget('http://mixed.example/hook', { sandbox: false, allowHosts: ['mixed.example'] }, resolve)).resolves.toBeInstanceOf(URL);
    await expect(checkTarget('https://nowhere.example/hook', production, async () => { throw new Error('ENOTFOUND'); })).rejects.toThrow('nowhere.example does not resolve');
  });

  it('a name re-pointed at a private address after the check is refused at connection time (DNS rebinding)', async () => {
    const server = createServer((_req, res) => res.writeHead(200).end());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    let answer = '93.184.216.34';
    const resolve = async () => [{ address: answer, family: 4 }];
    // Saved while it resolved to a public address...
    await expect(checkTarget(`http://rebind.localhost:${port}/`, { sandbox: true, allowHosts: [] }, resolve)).resolves.toBeInstanceOf(URL);
    // ...then re-pointed at 10.0.0.1: the connection's own lookup refuses it.
    answer = '10.0.0.1';
    const sender = new WebhookSender({ timeoutMs: 2_000, allowHosts: [], resolve });
    try {
      const result = await sender.send({ url: `http://rebind.localhost:${port}/`, msgId: 'msg_1', body: '{}', secrets: [newSecret()] }, true);
      expect(result).toEqual(expect.objectContaining({ ok: false, statusCode: null, error: 'refused: rebind.localhost resolves to 10.0.0.1, a private address; webhooks may only target public addresses' }));
      // Pointed at loopback, a sandbox tenant's connection goes through, to the address that was checked.
      answer = '127.0.0.1';
      expect((await sender.send({ url: `http://rebind.localhost:${port}/`, msgId: 'msg_1', body: '{}', secrets: [newSecret()] }, true)).statusCode).toBe(200);
    } finally {
      await sender.close();
      server.close();
    }
  });

  // Issue 20: IPv4-compatible literals counted as public; a production tenant saved https://[::a9fe:a9fe]/.
  // Every IPv6 form that embeds an IPv4 address is judged by the address it embeds.
  const embedding: [form: string, address: string, range: string, embedded: string][] = [
    ['::/96 (the issue: metadata)', '::a9fe:a9fe', 'linkLocal', '169.254.169.254'],
    ['::/96 (the issue: loopback)', '::7f00:1', 'loopback', '127.0.0.1'],
    ['::/96 (the issue: private)', '::a00:1', 'private', '10.0.0.1'],
    ['::/96, the low addresses', '::2', 'unspecified', '0.0.0.2'],
    ['::ffff:0:0/96 (mapped)', '::ffff:a9fe:a9fe', 'linkLocal', '169.254.169.254'],
    ['::ffff:0:0:0/96 (translated, RFC 6145)', '::ffff:0:a00:1', 'private', '10.0.0.1'],
    ['64:ff9b::/96 (NAT64)', '64:ff9b::a9fe:a9fe', 'linkLocal', '169.254.169.254'],
    ['2002::/16 (6to4)', '2002:c0a8:101::1', 'private', '192.168.1.1'],
    ['2001::/32 (Teredo, the client inverted)', '2001:0:4136:e378:8000:63bf:5601:5601', 'linkLocal', '169.254.169.254'],
    ['2001::/32 (Teredo, the server)', '2001:0:a00:1:8000:63bf:f7f7:f7f7', 'private', '10.0.0.1'],
  ];

  it.each(embedding)('%s: %s is judged by %s it embeds, when saved', async (_form, address, range, embedded) => {
    expect(rangeOf(address)).toBe(range);
    const reason = `${address} resolves to ${address}, a ${range} address (it embeds ${embedded}); webhooks may only target public addresses`;
    await expect(checkTarget(`https://[${address}]/hook`, production, async () => [])).rejects.toThrow(new TargetRefused(reason));
    // A name whose DNS answer is such an address, too.
    await expect(checkTarget('https://embeds.example/hook', production, async () => [{ address, family: 6 }])).rejects.toThrow(
      new TargetRefused(reason.replace(`${address} resolves`, 'embeds.example resolves')),
    );
  });

  it.each(embedding)('%s: %s is refused at connection time, as a literal and as a DNS answer', async (_form, address, range) => {
    const sender = new WebhookSender({ timeoutMs: 2_000, allowHosts: [], resolve: async () => [{ address, family: 6 }] });
    try {
      const literal = await sender.send({ url: `https://[${address}]/hook`, msgId: 'msg_1', body: '{}', secrets: [newSecret()] }, false);
      expect(literal).toEqual(expect.objectContaining({ ok: false, statusCode: null, error: expect.stringMatching(new RegExp(`^refused: .* a ${range} address \\(it embeds`)) }));
      const named = await sender.send({ url: 'https://embeds.example/hook', msgId: 'msg_1', body: '{}', secrets: [newSecret()] }, false);
      expect(named).toEqual(expect.objectContaining({ ok: false, statusCode: null, error: expect.stringMatching(/^refused: embeds\.example resolves to /) }));
    } finally {
      await sender.close();
    }
  });

  it('an embedded public address is public; the local-use NAT64 prefix is not; ::1 and :: keep their own range', () => {
    expect(['64:ff9b::808:808', '2002:808:808::1', '::ffff:808:808', '2001:0:4136:e378:8000:63bf:f7f7:f7f7'].map(rangeOf)).toEqual(['public', 'public', 'public', 'public']);
    expect(rangeOf('64:ff9b:1::a00:1')).toBe('rfc6052');
    expect(['::1', '::'].map(rangeOf)).toEqual(['loopback', 'unspecified']);
    // A sandbox tenant may use loopback, embedded or not; a production tenant may not.
    expect(addressRefusal('::7f00:1', '::7f00:1', { sandbox: true, allowHosts: [] })).toBeNull();
    expect(addressRefusal('::7f00:1', '::7f00:1', production)).toMatch(/a loopback address \(it embeds 127\.0\.0\.1\)/);
  });

  it('the lookup answers every address when asked for all', async () => {
    const lookup = checkedLookup(production, async () => [{ address: '93.184.216.34', family: 4 }, { address: '2606:2800::1', family: 6 }]);
    const all = await new Promise((resolve, reject) => lookup('two.example', { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));
    expect(all).toEqual([{ address: '93.184.216.34', family: 4 }, { address: '2606:2800::1', family: 6 }]);
  });
});

describe('the retry schedule', () => {
  it('is Svix: at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then none', () => {
    expect(RETRY_SCHEDULE_MS).toEqual([0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    expect(MAX_ATTEMPTS).toBe(8);
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => nextDelayMs(n, 1, null, () => 0.5))).toEqual(RETRY_SCHEDULE_MS.slice(1));
    expect(nextDelayMs(8, 1, null)).toBeNull();
  });

  it('spreads each delay by ±20 %, scales it, and lets Retry-After replace it (up to 10 h)', () => {
    expect(nextDelayMs(1, 1, null, () => 0)).toBe(4_000);
    expect(nextDelayMs(1, 1, null, () => 1)).toBe(6_000);
    expect(nextDelayMs(2, 0.001, null, () => 0.5)).toBe(300);
    expect(nextDelayMs(1, 1, 120_000)).toBe(120_000);
    expect(nextDelayMs(1, 1, 3 * 86_400_000)).toBe(36_000_000);
    expect(nextDelayMs(8, 1, 1_000)).toBeNull();
    expect(retryAfterMs('7')).toBe(7_000);
    expect(retryAfterMs(new Date(Date.now() + 60_000).toUTCString())).toBeGreaterThan(58_000);
    expect(retryAfterMs('soon')).toBeNull();
    expect(retryAfterMs(undefined)).toBeNull();
  });
});

describe('signatures', () => {
  it('standardwebhooks verifies what the gateway signs, under either secret of a rotation', () => {
    const [current, previous] = [newSecret(), newSecret()];
    const body = webhookBody('card.locked', new Date('2026-11-24T10:00:00Z'), { cardId: 'CARD-3002', entityId: 'ENT-1002', state: 'LOCKED' });
    const ts = Math.floor(Date.now() / 1000);
    const headers = { 'webhook-id': 'msg_abc', 'webhook-timestamp': String(ts), 'webhook-signature': [current, previous].map((s) => sign(s, 'msg_abc', ts, body)).join(' ') };
    for (const secret of [current, previous]) {
      expect(new Webhook(secret).verify(body, headers)).toEqual({ type: 'card.locked', timestamp: '2026-11-24T10:00:00.000Z', data: { cardId: 'CARD-3002', entityId: 'ENT-1002', state: 'LOCKED' } });
    }
    expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow();
    expect(new Webhook(current).sign('msg_abc', new Date(ts * 1000), body)).toBe(sign(current, 'msg_abc', ts, body));
  });
});
