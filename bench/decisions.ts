// `BENCH_DECISIONS=1 npm run bench`: does one tenant's hanging decision endpoint slow another tenant's
// authorizations? One gateway (PGlite in memory, the mock core in process) answers tenant `b`'s POST
// /v1/authorizations under load, its decision endpoint a loopback server that approves at once, in alternating
// rounds: tenant `a` idle, and tenant `a` under the same load with an endpoint that never answers (both deadlines
// 3 s, stand-in decline). Prints b's req/s and p50/p99 per variant and round, the median of the rounds per variant,
// how much the hanging endpoint moved b's p99, and how b's decision steps ended (all by b's endpoint, unless the
// machine is so loaded that b's own deadline passes). Exits 1 when b gets anything but a 201.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Algorithm, hash } from '@node-rs/argon2';
import autocannon from 'autocannon';
import { pino } from 'pino';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { MasterKey } from '../src/crypto/master-key.js';
import { createTenant } from '../src/services/tenancy/onboarding.js';
import { openDb } from '../src/store/db.js';

const SECONDS = Number(process.env.BENCH_SECONDS || '10');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || '32');
const ROUNDS = Number(process.env.BENCH_ROUNDS || '3');

type Variant = 'a idle' | "a's endpoint hangs" | "c's answers in 3 s" | 'd declined, same rate';
// BENCH_DECISIONS_CONTROL=1: two controls for what a's load costs b without a hanging endpoint: tenant c's endpoint
// declines after 2.9 s (a's shape: 32 requests ending together every 3 s), tenant d's at once at a's rate, spread out.
const CONTROL = process.env.BENCH_DECISIONS_CONTROL === '1';
const VARIANTS: Variant[] = ['a idle', "a's endpoint hangs", ...(CONTROL ? (["c's answers in 3 s", 'd declined, same rate'] as const) : [])];
const LOADED: Record<Exclude<Variant, 'a idle'>, string> = { "a's endpoint hangs": 'a', "c's answers in 3 s": 'c', 'd declined, same rate': 'd' };

export async function benchDecisions(): Promise<number> {
  // /b approves at once; /a never answers (its requests are dropped when the bench ends).
  const endpoint = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/a') return;
      const answer = req.url === '/b' ? '{"approved":true}' : '{"approved":false}';
      const send = () => res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
      if (req.url === '/c') setTimeout(send, 2900);
      else send();
    });
  });
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  const endpointBase = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}`;
  const config = loadConfig({ LOG_LEVEL: 'silent', CARDLINE_DELIVERY_WORKER: '0', CARDLINE_TENANT_CACHE_TTL_MS: '0', CARDLINE_DECISION_LATE_WINDOW_MS: '0' });
  const app = await buildApp({ config, db: await openDb({ dataDir: 'memory://' }), masterKey: MasterKey.generate(), logger: pino({ level: 'silent' }) });
  const services = app.cardline;
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const tokens: Record<string, string> = {};
  for (const [id, standIn] of [['a', 'decline'], ['b', 'decline'], ...(CONTROL ? ([['c', 'decline'], ['d', 'decline']] as const) : [])] as const) {
    await createTenant(services, {
      id,
      config: {
        connector: { id: 'mock', options: { fixtures: 'demo' } },
        sandbox: true,
        creditLimit: { maximum: '1000000.00', allowDecrease: false },
        authorization: { decision: { url: `${endpointBase}/${id}`, secret, standIn, deadlineMs: 3000 } },
      },
    });
    await services.db.query(`INSERT INTO users (tenant_id, username, id, role, password_hash) VALUES ($1, 'integration', gen_random_uuid(), 'API Integration', $2)`, [
      id,
      await hash(randomBytes(18).toString('base64url'), { algorithm: Algorithm.Argon2id }),
    ]);
    tokens[id] = (await services.tokens.issue((await services.tenants.get(id))!, { id, tenantId: id, username: 'integration', role: 'API Integration', generation: 0 })).token;
  }
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const body = JSON.stringify({ cardId: 'CARD-3001', amount: '0.01', currency: 'EUR', merchant: { name: 'Bench', mcc: '5814', country: 'PT' }, channel: 'POS' });
  const load = (tenant: string) =>
    autocannon({
      url: `${base}/v1/authorizations`,
      method: 'POST',
      connections: CONNECTIONS,
      ...(tenant === 'd' ? { overallRate: CONNECTIONS / 3 } : {}),
      duration: SECONDS,
      headers: { 'content-type': 'application/json', 'X-TENANT-ID': tenant, authorization: `Bearer ${tokens[tenant]}` },
      body,
    });

  const rows: { variant: Variant; round: number; rps: number; p50: number; p99: number; non2xx: number; aAnswered: number }[] = [];
  let failed = false;
  for (let round = 1; round <= ROUNDS; round++) {
    for (const variant of VARIANTS) {
      const [b, a] = await Promise.all([load('b'), variant === 'a idle' ? null : load(LOADED[variant])]);
      const non2xx = b.non2xx + b.errors + b.timeouts;
      if (non2xx) failed = true;
      rows.push({ variant, round, rps: Math.round(b.requests.average), p50: b.latency.p50, p99: b.latency.p99, non2xx, aAnswered: a?.requests.total ?? 0 });
      process.stdout.write(
        `round ${round}  ${variant.padEnd(19)} b: ${String(Math.round(b.requests.average)).padStart(6)} req/s  p50 ${b.latency.p50} ms  p99 ${b.latency.p99} ms  non-2xx ${non2xx}` +
          (a ? `  (${LOADED[variant as keyof typeof LOADED]} answered ${a.requests.total}, p50 ${a.latency.p50} ms)` : '') +
          '\n',
      );
    }
  }
  // How b's decision steps ended: `approved` by b's endpoint, or a stand-in and why.
  const outcomes = await services.db.query<{ outcome: string; n: number }>(
    `SELECT coalesce(s->>'standIn', s->>'outcome') AS outcome, count(*)::int AS n
       FROM authorizations, jsonb_array_elements(trail) s
      WHERE tenant_id = 'b' AND s->>'step' = 'decision-endpoint' GROUP BY 1 ORDER BY 1`,
  );
  process.stdout.write(`\nb's decision steps: ${outcomes.rows.map((r) => `${r.outcome} ${r.n}`).join(', ')}\n\n`);
  process.stdout.write(`| variant | b req/s (median of ${ROUNDS} rounds) | b p50 ms | b p99 ms |\n|---|---|---|---|\n`);
  const medians = new Map<Variant, number>();
  for (const variant of VARIANTS) {
    const mine = rows.filter((r) => r.variant === variant);
    const median = (f: (r: (typeof rows)[number]) => number) => {
      const v = mine.map(f).sort((x, y) => x - y);
      const mid = Math.floor(v.length / 2);
      return v.length % 2 ? v[mid]! : Math.round(((v[mid - 1]! + v[mid]!) / 2) * 10) / 10;
    };
    medians.set(variant, median((r) => r.p99));
    process.stdout.write(`| ${variant} | ${median((r) => r.rps)} | ${median((r) => r.p50)} | ${median((r) => r.p99)} |\n`);
  }
  const change = (variant: Variant) => {
    const c = (medians.get(variant)! / Math.max(1, medians.get('a idle')!) - 1) * 100;
    return `${c >= 0 ? '+' : ''}${c.toFixed(1)} %`;
  };
  process.stdout.write(`\nb's p99 with a's endpoint hanging: ${change("a's endpoint hangs")} (target: under 10 %)\n`);
  for (const v of VARIANTS.slice(2)) process.stdout.write(`b's p99 with ${v}: ${change(v)}\n`);
  endpoint.closeAllConnections();
  await app.close();
  await new Promise<void>((resolve) => endpoint.close(() => resolve()));
  return failed ? 1 : 0;
}
