// Acknowledged writes survive a crash: the gateway is SIGKILLed while concurrent writes flow (on PostgreSQL
// its store connections are also terminated under load), restarted on the same store, and every write it had
// answered 2xx is retried with its Idempotency-Key: each replays, identical, and was recorded as done once.
import { randomBytes } from 'node:crypto';
import { rmSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encryptCompact } from '../../src/crypto/jwe.js';
import { LIMIT_URL, createTestDataDir } from '../helpers/app.js';
import { baseEnv, freePort, kill, sleep, start, waitReady, within, type Proc } from '../helpers/process.js';
import { BUILD_TIMEOUT_MS, ensureBuilt } from '../helpers/spawn.js';

// The gateway processes run the compiled dist/ (helpers/process.ts): built, if stale, once before them.
beforeAll(ensureBuilt, BUILD_TIMEOUT_MS);

const PASSWORD = 'Crash-Settlement-Passw0rd-5e2c';
/** Writes answered before the kill; enough that some were surely between commit and answer. */
const ACKNOWLEDGED_BEFORE_KILL = 60;

interface Write {
  requestId: string;
  key: string;
  method: 'POST' | 'PUT';
  path: string;
  body: string;
  /** The answer, if one arrived before the kill. */
  status?: number;
  text?: string;
}

interface Store {
  env: Record<string, string>;
  /** Called while the load runs (PostgreSQL: terminate the gateway's connections). */
  disturb?: () => Promise<void>;
  /** After the kill, before the restart. */
  afterKill?: (dataDir: string) => void;
}

/** One gateway process on a store: started, loaded, killed, started again. */
class Gateway {
  proc: Proc | undefined;
  base = '';
  constructor(
    private readonly env: Record<string, string>,
    private readonly dataDir: string,
  ) {}

  async start(): Promise<void> {
    const port = await freePort();
    this.base = `http://127.0.0.1:${port}`;
    this.proc = start(['--demo'], baseEnv({ ...this.env, PORT: String(port), HOST: '127.0.0.1', CARDLINE_DATA_DIR: this.dataDir, CARDLINE_DEMO_PASSWORD: PASSWORD, LOG_LEVEL: 'warn' }));
    await waitReady(this.base, this.proc);
  }

  async token(username: string): Promise<string> {
    const keys = (await (await fetch(`${this.base}/api/keys`, { headers: { TENANT: 'demo' } })).json()) as { keys: Parameters<typeof encryptCompact>[1][] };
    const res = await fetch(`${this.base}/api/authenticate`, {
      method: 'POST',
      headers: { TENANT: 'demo', 'content-type': 'application/json' },
      body: JSON.stringify({ username, password: await encryptCompact(PASSWORD, keys.keys[0]!) }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { id_token: string }).id_token;
  }

  send(w: Write, token: string, requestId = w.requestId): Promise<Response> {
    return fetch(`${this.base}${w.path}`, {
      method: w.method,
      headers: { TENANT: 'demo', authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': w.key, 'x-request-id': requestId },
      body: w.body,
    });
  }
}

/**
 * Six writers, each request with a key of its own, until `stop`: three raise the demo entities' limits step
 * by step (envelope), one locks and unlocks a card, two replace cards' preferences (problem). Every write
 * and its answer (if one came) is kept.
 */
function load(gw: Gateway, token: string, prefix: string) {
  const writes: Write[] = [];
  let stopped = false;
  let n = 0;
  const next = (method: Write['method'], path: string, body: unknown): Write => {
    const id = `${prefix}-${++n}`;
    const w = { requestId: id, key: `key-${id}`, method, path, body: JSON.stringify(body) };
    writes.push(w);
    return w;
  };
  const run = async (make: (step: number) => Write) => {
    for (let step = 0; !stopped; step++) {
      const w = make(step);
      try {
        const res = await gw.send(w, token);
        w.text = await res.text();
        w.status = res.status;
      } catch {
        return; // the gateway is gone: this write was not acknowledged
      }
    }
  };
  const writers = [
    ...['ENT-1001', 'ENT-1002', 'ENT-1003'].map((entityId) => run((step) => next('POST', LIMIT_URL, { entityId, amount: `${60000 + step * 10}.00` }))),
    run((step) => next('POST', `/v1/cards/CARD-3001/${step % 2 === 0 ? 'lock' : 'unlock'}`, {})),
    ...['CARD-3002', 'CARD-3003'].map((cardId) =>
      run((step) => next('PUT', `/v1/cards/${cardId}/preferences`, { domestic: { enabled: true, atm: { enabled: true, dailyLimit: `${100 + step}.00`, dailyCount: 3 } } })),
    ),
  ];
  return {
    writes,
    acknowledged: () => writes.filter((w) => w.status !== undefined && w.status >= 200 && w.status < 300),
    stop: async () => {
      stopped = true;
      await Promise.all(writers);
    },
  };
}

async function crashAndRetry(store: Store, name: string): Promise<void> {
  // A store already migrated (the run's template): the first start is another test's subject.
  const dataDir = await createTestDataDir(`cardline-crash-${name}-`);
  const gw = new Gateway(store.env, dataDir);
  try {
    await gw.start();
    const token = await gw.token('integration');
    const traffic = load(gw, token, `${name}-${randomBytes(3).toString('hex')}`);
    const deadline = Date.now() + 20_000;
    let disturbed = 0;
    while (traffic.acknowledged().length < ACKNOWLEDGED_BEFORE_KILL && Date.now() < deadline) {
      if (store.disturb && traffic.acknowledged().length > 10 * (disturbed + 1)) {
        await store.disturb();
        disturbed++;
      } else {
        await sleep(10);
      }
    }
    // Mid-load, at no particular point: requests are being parsed, run, recorded and answered right now.
    await sleep(Math.random() * 20);
    gw.proc!.child.kill('SIGKILL');
    await within(gw.proc!.exited, 150_000, 'exit after SIGKILL');
    await traffic.stop();
    const acknowledged = traffic.acknowledged();
    expect(acknowledged.length).toBeGreaterThanOrEqual(ACKNOWLEDGED_BEFORE_KILL);
    if (store.disturb) expect(disturbed).toBeGreaterThan(0);

    store.afterKill?.(dataDir);
    await gw.start();
    const retried = await Promise.all(
      acknowledged.map(async (w) => {
        const res = await gw.send(w, token, `${w.requestId}-retry`);
        return { key: w.key, status: res.status, replayed: res.headers.get('idempotent-replayed'), text: await res.text() };
      }),
    );
    expect(retried).toEqual(acknowledged.map((w) => ({ key: w.key, status: w.status, replayed: 'true', text: w.text })));

    // The trail agrees: each acknowledged write succeeded once, and its retry is a replay.
    const admin = await gw.token('admin');
    const outcomes = new Map<string, string[]>();
    for (let cursor: string | null = '', pages = 0; cursor !== null && pages < 50; pages++) {
      const res = await fetch(`${gw.base}/v1/audit?limit=500${cursor ? `&cursor=${cursor}` : ''}`, { headers: { TENANT: 'demo', authorization: `Bearer ${admin}` } });
      const page = (await res.json()) as { result: { requestId: string; outcome: string }[]; pagination: { next: string | null } };
      for (const r of page.result) outcomes.set(r.requestId, [...(outcomes.get(r.requestId) ?? []), r.outcome]);
      cursor = page.pagination.next;
    }
    for (const w of acknowledged) {
      expect({ key: w.key, first: outcomes.get(w.requestId), retry: outcomes.get(`${w.requestId}-retry`) }).toEqual({
        key: w.key,
        first: ['succeeded'],
        retry: ['replayed'],
      });
    }
  } catch (err) {
    throw new Error(`${(err as Error).message}\n--- gateway output ---\n${gw.proc?.output().slice(-4000) ?? ''}`, { cause: err });
  } finally {
    await kill(gw.proc);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The PostgreSQL server of the run, if one answers. */
async function postgres(): Promise<string | null> {
  const url = process.env.DATABASE_URL;
  if (!url) return null;
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    return url;
  } catch {
    return null;
  } finally {
    await c.end().catch(() => undefined);
  }
}

const pgUrl = await postgres();

describe.runIf(!process.env.DATABASE_URL)('SIGKILL under load, on PGlite (a data directory)', () => {
  it('every write answered 2xx replays after the restart, identical, recorded once as succeeded', async () => {
    await crashAndRetry(
      {
        env: {},
        // A killed gateway's lock on the data directory goes stale after 30 s (src/store/db.ts): the test
        // ages it instead of waiting.
        afterKill: (dataDir) => {
          const past = new Date(Date.now() - 60_000);
          utimesSync(join(dataDir, 'pglite', 'cardline.lock'), past, past);
        },
      },
      'pglite',
    );
  }, 300_000);
});

describe('SIGKILL under load with store connections terminated, on PostgreSQL', () => {
  if (!pgUrl) {
    it.skip(`needs a PostgreSQL server: ${process.env.DATABASE_URL ? `DATABASE_URL does not answer` : 'DATABASE_URL is not set'}`, () => undefined);
    return;
  }
  const name = `cardline_crash_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: pgUrl });
  afterAll(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  });

  it('every write answered 2xx replays after the restart, identical, recorded once as succeeded', async () => {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const u = new URL(pgUrl);
    u.pathname = `/${name}`;
    await crashAndRetry(
      {
        env: { DATABASE_URL: u.toString() },
        disturb: async () => {
          await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
        },
      },
      'postgres',
    );
  }, 300_000);
});
