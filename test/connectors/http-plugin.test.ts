// A plugin HTTP connector that brings only its options, paths and transformers gets the shared transport's
// behaviour: headers, safe retries, the breaker per core, deadlines and counters (undici MockAgent).
import { pino } from 'pino';
import { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ephemeralSecrets } from '../../connectors/shared/ephemeral-secrets.js';
import { ConnectorTimeoutError, ConnectorUnavailableError, type ConnectorContext } from '../../connectors/contract.js';
import { checkOptions } from '../../connectors/loader.js';
import ledger, { createLedger } from './fixtures/http-plugin.js';

const logger = pino({ level: 'silent' });
const limit = { entityId: 'ENT 1', amount: '750.00', allowDecrease: false };
const PATH = '/ledger/lines/ENT%201';
const applied = { line: 'ENT 1', cents: '75000', previousCents: '50000' };

let agent: MockAgent;
let origin: string;
let seq = 0;
const open: { close(): Promise<void> }[] = [];

beforeEach(() => {
  agent = new MockAgent({ enableCallHistory: true });
  agent.disableNetConnect();
  origin = `http://ledger-${++seq}.test`;
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  await agent.close();
});

async function connect(options: object = {}) {
  const c = await createLedger(
    { baseUrl: `${origin}/ledger`, retries: { max: 2, baseDelayMs: 1, maxDelayMs: 2 }, breaker: { failureThreshold: 2, openMs: 60_000 }, ...options },
    { tenantId: 't', logger, secrets: ephemeralSecrets() },
    { dispatcher: agent },
  );
  open.push(c);
  return c;
}

const ctx = (over: Partial<ConnectorContext> = {}): ConnectorContext => ({ tenantId: 't', requestId: 'req-9', logger, signal: AbortSignal.timeout(2_000), ...over });
const calls = () => agent.getCallHistory()?.calls() ?? [];

describe('a plugin on the shared HTTP transport', () => {
  it("validates its options with the transport's defaults", () => {
    const { value, problems } = checkOptions(ledger, { baseUrl: 'https://ledger.example/v2' });
    expect(problems).toEqual([]);
    expect(value).toMatchObject({ connections: 10, timeoutMs: 10_000, retries: { max: 2 }, breaker: { failureThreshold: 5 } });
    expect(checkOptions(ledger, { baseUrl: 'https://u:p@ledger.example' }).problems).toEqual([expect.stringMatching(/^\/baseUrl/)]);
  });

  it('sends its path under the baseUrl, its body, the request id and the idempotency key', async () => {
    agent.get(origin).intercept({ path: PATH, method: 'PUT' }).reply(200, applied);
    const c = await connect();
    expect(await c.upgradeLimit(limit, ctx({ idempotencyKey: 'k-1' }))).toEqual({
      status: 'succeeded',
      value: { entityId: 'ENT 1', previousLimit: '500.00', newLimit: '750.00' },
    });
    const [call] = calls();
    expect(call!.headers).toMatchObject({ 'x-request-id': 'req-9', 'idempotency-key': 'k-1', 'user-agent': 'ledger-connector/1.0.0' });
    expect(JSON.parse(String(call!.body))).toEqual({ cents: '75000', mayLower: false });
  });

  it('retries what its mapper calls retryable only when a repeat is safe, and counts it', async () => {
    agent.get(origin).intercept({ path: PATH, method: 'PUT' }).reply(503, {}).times(2);
    agent.get(origin).intercept({ path: PATH, method: 'PUT' }).reply(200, applied);
    const c = await connect({ breaker: { failureThreshold: 5, openMs: 60_000 } });
    expect((await c.upgradeLimit(limit, ctx({ idempotencyKey: 'k-2' }))).status).toBe('succeeded');
    expect(c.stats()).toMatchObject({ calls: 1, succeeded: 1, retries: 2 });

    agent.get(origin).intercept({ path: PATH, method: 'PUT' }).reply(503, {});
    await expect(c.upgradeLimit(limit, ctx())).rejects.toThrow(/answered 503/);
    expect(calls()).toHaveLength(4);
  });

  it("opens the core's breaker after consecutive 5xx and then fails fast without calling", async () => {
    agent.get(origin).intercept({ path: PATH, method: 'GET' }).reply(500, {}).times(2);
    const c = await connect();
    for (let i = 0; i < 2; i++) await expect(c.getCreditLimit({ entityId: 'ENT 1' }, ctx())).rejects.toBeInstanceOf(ConnectorUnavailableError);
    await expect(c.getCreditLimit({ entityId: 'ENT 1' }, ctx())).rejects.toThrow(/circuit breaker is open/);
    expect(calls()).toHaveLength(2);
    expect(c.stats()).toMatchObject({ shortCircuits: 1, breaker: { state: 'open', opens: 1 } });
    await expect(c.health()).rejects.toThrow(/circuit breaker/);
  });

  it("honours the request's deadline", async () => {
    agent.get(origin).intercept({ path: PATH, method: 'GET' }).reply(200, { line: 'ENT 1', cents: '1' }).delay(60_000);
    const c = await connect();
    const started = Date.now();
    await expect(c.getCreditLimit({ entityId: 'ENT 1' }, ctx({ signal: AbortSignal.timeout(80) }))).rejects.toBeInstanceOf(ConnectorTimeoutError);
    expect(Date.now() - started).toBeLessThan(30_000); // the 80 ms deadline, not the 60 s answer
    expect(c.stats().timeouts).toBe(1);
  });
});
