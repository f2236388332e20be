// `BENCH_SHADOW=1 npm run bench`: does a shadow core slow the primary? One gateway (PGlite in memory, the
// mock core in process as the primary) answers credit-limit reads under load, in alternating rounds:
// without a shadow, with a shadow that hangs every call (a mock core server with timeoutRate 1), and with
// one that fails every call (errorRate 1). Prints req/s and p50/p99 per variant and round, and what the
// shadow counted (compared, errors, dropped), the process's CPU time per answered request, then the median of the rounds per variant. Exits 1 when the primary answers anything but 200.
import { randomBytes } from 'node:crypto';
import { Algorithm, hash } from '@node-rs/argon2';
import autocannon from 'autocannon';
import { pino } from 'pino';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { MasterKey } from '../src/crypto/master-key.js';
import { buildMockCore } from '../connectors/mock-core/server.js';
import { createTenant } from '../src/services/tenancy/onboarding.js';
import { updateTenant } from '../src/services/tenancy/tenant-admin.js';
import { openDb } from '../src/store/db.js';

const FETCH_LIMIT_URL = '/credit-line-management/business-entity-manager/fetchLimit';
const SECONDS = Number(process.env.BENCH_SECONDS || '10');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || '32');
const ROUNDS = Number(process.env.BENCH_ROUNDS || '3');

type Variant = 'no shadow' | 'shadow hangs' | 'shadow fails';

export async function benchShadow(): Promise<number> {
  const hanging = buildMockCore({ fixtures: 'demo', faults: { timeoutRate: 1 } });
  const failing = buildMockCore({ fixtures: 'demo', faults: { errorRate: 1 } });
  const [hangingBase, failingBase] = [await hanging.listen({ host: '127.0.0.1', port: 0 }), await failing.listen({ host: '127.0.0.1', port: 0 })];
  const config = loadConfig({ LOG_LEVEL: 'silent', CARDLINE_DELIVERY_WORKER: '0', CARDLINE_TENANT_CACHE_TTL_MS: '0' });
  const app = await buildApp({ config, db: await openDb({ dataDir: 'memory://' }), masterKey: MasterKey.generate(), logger: pino({ level: 'silent' }) });
  const services = app.cardline;
  const shadowOf = (base: string) => ({ id: 'rest', options: { baseUrl: `${base}/banks/bench`, retries: { max: 0 } } });
  await createTenant(services, { id: 'bench', config: { connector: { id: 'mock', options: { fixtures: 'demo' } }, creditLimit: { maximum: '1000000.00', allowDecrease: false } } });
  await services.db.query(`INSERT INTO users (tenant_id, username, id, role, password_hash) VALUES ('bench', 'integration', gen_random_uuid(), 'API Integration', $1)`, [
    await hash(randomBytes(18).toString('base64url'), { algorithm: Algorithm.Argon2id }),
  ]);
  const { token } = await services.tokens.issue((await services.tenants.get('bench'))!, { id: 'bench', tenantId: 'bench', username: 'integration', role: 'API Integration', generation: 0 });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });

  const configure = async (variant: Variant) => {
    const config =
      variant === 'no shadow'
        ? { connector: { id: 'mock', options: { fixtures: 'demo' } }, connectors: null, routing: null, shadow: null }
        : {
            connector: null,
            connectors: { primary: { id: 'mock', options: { fixtures: 'demo' } }, candidate: shadowOf(variant === 'shadow hangs' ? hangingBase : failingBase) },
            routing: { default: 'primary' },
            shadow: { connector: 'candidate', operations: ['credit-line'] },
          };
    const updated = await updateTenant(services, 'bench', { config });
    if (!updated) throw new Error('the bench tenant is gone');
  };

  const rows: { variant: Variant; round: number; rps: number; p50: number; p99: number; cpuUs: number; non2xx: number }[] = [];
  let failed = false;
  for (let round = 1; round <= ROUNDS; round++) {
    for (const variant of ['no shadow', 'shadow hangs', 'shadow fails'] as Variant[]) {
      await configure(variant);
      const cpu0 = process.cpuUsage();
      const result = await autocannon({
        url: `${base}${FETCH_LIMIT_URL}`,
        method: 'POST',
        connections: CONNECTIONS,
        duration: SECONDS,
        headers: { 'content-type': 'application/json', TENANT: 'bench', authorization: `Bearer ${token}` },
        body: JSON.stringify({ entityId: 'ENT-1001' }),
      });
      // CPU of this process per answered request: the gateway's, plus the load generator's and the in-process
      // shadow core's (the same for every variant but the shadow's). Steadier than req/s on a shared machine.
      const used = process.cpuUsage(cpu0);
      const cpuUs = Math.round((used.user + used.system) / Math.max(1, result.requests.total));
      const non2xx = result.non2xx + result.errors + result.timeouts;
      if (non2xx) failed = true;
      rows.push({ variant, round, rps: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99, cpuUs, non2xx });
      process.stdout.write(`round ${round}  ${variant.padEnd(13)} ${String(Math.round(result.requests.average)).padStart(6)} req/s  p50 ${result.latency.p50} ms  p99 ${result.latency.p99} ms  CPU ${cpuUs} µs/req  non-2xx ${non2xx}\n`);
    }
  }
  await services.shadow.settled();
  const summary = await services.shadow.summary('bench');
  process.stdout.write(`\nshadow counted (getCreditLimit): ${JSON.stringify(summary.find((s) => s.operation === 'getCreditLimit') ?? {})}\n`);
  // What the shadow cores themselves received (their breaker, once open, keeps most calls from them).
  for (const [name, core] of [['hanging', hanging], ['failing', failing]] as const) {
    const calls = ((await core.inject({ method: 'GET', url: '/__admin/calls' })).json() as { banks: Record<string, Record<string, number>> }).banks.bench ?? {};
    process.stdout.write(`the ${name} shadow core received: ${JSON.stringify(calls)}\n`);
  }
  process.stdout.write('\n');
  // Medians of the rounds: one round slowed by a neighbour on a shared machine does not move them.
  process.stdout.write(`| variant | req/s (median of ${ROUNDS} rounds) | p50 ms | p99 ms | CPU µs/req |\n|---|---|---|---|---|\n`);
  for (const variant of ['no shadow', 'shadow hangs', 'shadow fails'] as Variant[]) {
    const mine = rows.filter((r) => r.variant === variant);
    const median = (f: (r: (typeof rows)[number]) => number) => {
      const v = mine.map(f).sort((x, y) => x - y);
      const mid = Math.floor(v.length / 2);
      return v.length % 2 ? v[mid]! : Math.round(((v[mid - 1]! + v[mid]!) / 2) * 10) / 10;
    };
    process.stdout.write(`| ${variant} | ${median((r) => r.rps)} | ${median((r) => r.p50)} | ${median((r) => r.p99)} | ${median((r) => r.cpuUs)} |\n`);
  }
  await app.close();
  await hanging.close();
  await failing.close();
  return failed ? 1 : 0;
}
