// Two gateway processes on one PostgreSQL database write one tenant's audit trail under load (issue 21,
// decision 0200): every acknowledged write is audited exactly once, the trail verifies (one chain per
// process), and neither process counts a conflict retry. Then one process is SIGKILLed mid-load: no write
// it acknowledged is missing, and the trail still verifies, also against a checkpoint saved before.
// Skipped without PostgreSQL (DATABASE_URL): the embedded store is one process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishCheckpoint } from '../../src/audit/checkpoint.js';
import { verifyChain } from '../../src/audit/verify.js';
import { KeyRing } from '../../src/services/identity/key-ring.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { LIMIT_URL, createTestDb, type TestDb } from '../helpers/app.js';
import { GatewayProcess } from '../helpers/gateway.js';
import { sleep, within } from '../helpers/process.js';
import { BUILD_TIMEOUT_MS, ensureBuilt } from '../helpers/spawn.js';

// The gateway processes run the compiled dist/ (helpers/process.ts): built, if stale, once before them.
beforeAll(ensureBuilt, BUILD_TIMEOUT_MS);

const PG = process.env.DATABASE_URL;
const PASSWORD = 'Two-Gateways-Audit-Passw0rd';
/** Concurrent writers per process. */
const WRITERS = 8;

interface Write {
  requestId: string;
  status?: number;
}

describe.skipIf(!PG)('two gateway processes writing one tenant on PostgreSQL', () => {
  let store: TestDb;
  let a: GatewayProcess;
  let b: GatewayProcess;
  const masterKey = MasterKey.generate();

  beforeAll(async () => {
    store = await createTestDb();
    const env = { DATABASE_URL: store.url!, CARDLINE_MASTER_KEY: masterKey };
    a = new GatewayProcess(env, PASSWORD);
    await a.start();
    b = new GatewayProcess(env, PASSWORD, []);
    await b.start();
  }, 300_000);

  afterAll(async () => {
    await a?.kill();
    await b?.kill();
    await store?.drop();
  });

  /** WRITERS loops of limit upgrades on one gateway until stopped (or the gateway is gone); every write kept. */
  const load = (gw: GatewayProcess, bearer: string, prefix: string) => {
    const writes: Write[] = [];
    let stopped = false;
    let n = 0;
    const loops = Array.from({ length: WRITERS }, async (_, i) => {
      while (!stopped) {
        const w: Write = { requestId: `${prefix}-${++n}` };
        writes.push(w);
        try {
          const res = await fetch(`${gw.base}${LIMIT_URL}`, {
            method: 'POST',
            headers: { TENANT: 'demo', authorization: `Bearer ${bearer}`, 'content-type': 'application/json', 'x-request-id': w.requestId },
            body: JSON.stringify({ entityId: `ENT-100${(i % 3) + 1}`, amount: `${50000 + n}.00` }),
          });
          await res.text();
          w.status = res.status;
        } catch {
          return; // the gateway is gone: this write was not acknowledged
        }
      }
    });
    return {
      writes,
      acknowledged: () => writes.filter((w) => w.status !== undefined && w.status >= 200 && w.status < 300),
      stop: async () => {
        stopped = true;
        await Promise.all(loops);
      },
    };
  };

  /** Until `count` writes are acknowledged by each load. */
  const until = async (count: number, ...loads: ReturnType<typeof load>[]) => {
    while (loads.some((l) => l.acknowledged().length < count)) await sleep(20);
  };

  /** How many audit records each request id has. */
  const recorded = async (ids: string[]): Promise<Map<string, number>> => {
    const r = await store.db.query<{ request_id: string; n: number }>(
      "SELECT request_id, count(*)::int AS n FROM audit_log WHERE tenant_id = 'demo' AND request_id = ANY($1::text[]) GROUP BY request_id",
      [ids],
    );
    return new Map(r.rows.map((row) => [row.request_id, row.n]));
  };

  const conflictRetries = async (gw: GatewayProcess): Promise<number> => {
    const text = await (await fetch(`${gw.admin}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('cardline_audit_conflict_retries_total'));
    if (!line) throw new Error('no cardline_audit_conflict_retries_total in /metrics');
    return Number(line.split(' ').at(-1));
  };

  it('every acknowledged write is audited once, the trail verifies, and no conflict is retried', { timeout: 300_000 }, async () => {
    const loads = [load(a, await a.token('integration'), 'a'), load(b, await b.token('integration'), 'b')];
    await within(until(150, ...loads), 120_000, '150 acknowledged writes on each process');
    await Promise.all(loads.map((l) => l.stop()));

    const acknowledged = loads.flatMap((l) => l.acknowledged().map((w) => w.requestId));
    const counts = await recorded(acknowledged);
    expect(acknowledged.filter((id) => counts.get(id) !== 1)).toEqual([]);

    const result = await verifyChain(store.db, 'demo');
    expect(result).toMatchObject({ ok: true });
    // Both processes wrote to chains of their own (besides any the seeding process left).
    const writers = await store.db.query<{ chain: string }>(
      "SELECT DISTINCT chain FROM audit_log WHERE tenant_id = 'demo' AND request_id = ANY($1::text[])",
      [acknowledged],
    );
    expect(writers.rows.length).toBe(2);
    expect({ a: await conflictRetries(a), b: await conflictRetries(b) }).toEqual({ a: 0, b: 0 });
  });

  it('a SIGKILL of one process mid-load loses no acknowledged write; the trail extends the checkpoint saved before', { timeout: 300_000 }, async () => {
    const keys = new KeyRing(store.db, new MasterKey(masterKey), 0, undefined);
    const checkpoint = await publishCheckpoint(store.db, keys, 'demo');

    const loads = [load(a, await a.token('integration'), 'ka'), load(b, await b.token('integration'), 'kb')];
    await within(until(60, ...loads), 120_000, '60 acknowledged writes on each process');
    // Mid-load, at no particular point: requests are being run, recorded and answered right now.
    await sleep(Math.random() * 20);
    b.proc!.child.kill('SIGKILL');
    await within(b.proc!.exited, 60_000, 'exit after SIGKILL');
    await within(until(loads[0]!.acknowledged().length + 40, loads[0]!), 60_000, 'A goes on');
    await Promise.all(loads.map((l) => l.stop()));

    const acknowledged = loads.flatMap((l) => l.acknowledged().map((w) => w.requestId));
    const counts = await recorded(acknowledged);
    expect(acknowledged.filter((id) => counts.get(id) !== 1)).toEqual([]);
    expect(await verifyChain(store.db, 'demo', { checkpoint: checkpoint.chains })).toMatchObject({ ok: true });
    expect(await conflictRetries(a)).toBe(0);
  });
});
