// A day's work, as a bench peer (issue 21): Fastify + @fastify/jwt + TypeBox + one `pg` INSERT per request.
// The same route, body and ES256 token as Cardline's bench; one durable row per accepted request.
//   PEER_PORT (0: any), PEER_DATABASE_URL, PEER_PUBLIC_KEY (the tokens' ES256 public key, PEM),
//   PEER_ISSUER, PEER_AUDIENCE. Prints {"peerPort":N} on stdout when listening; exits on SIGTERM or stdin's end.
// GET /__bench/stats: the process's counters and the rows written (bench/run.ts reads them around a run).
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import fastifyJwt from '@fastify/jwt';
import { Type, type Static } from '@sinclair/typebox';
import pg from 'pg';

const LIMIT_URL = '/credit-line-management/business-entity-manager/upgradeLimit';
const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (bench/run.ts sets it)`);
  return v;
};

const Body = Type.Object(
  {
    entityId: Type.String({ minLength: 1, maxLength: 64, pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f]+$' }),
    amount: Type.String({ pattern: '^(?!0+(\\.0{1,2})?$)\\d{1,15}(\\.\\d{1,2})?$' }),
  },
  { additionalProperties: false },
);
type Body = Static<typeof Body>;

interface Claims {
  sub: string;
  tenant: string;
  role: string;
}

const pool = new pg.Pool({ connectionString: env('PEER_DATABASE_URL'), max: 10 });
await pool.query(`CREATE TABLE IF NOT EXISTS peer_fastify_audit (
  id uuid PRIMARY KEY, tenant_id text NOT NULL, actor text NOT NULL, action text NOT NULL,
  target jsonb NOT NULL, outcome text NOT NULL, at timestamptz NOT NULL DEFAULT now())`);

const app = Fastify({ logger: { level: 'info', stream: { write: () => undefined } } });
await app.register(fastifyJwt, {
  secret: { public: env('PEER_PUBLIC_KEY'), private: '' },
  verify: { algorithms: ['ES256'], allowedIss: env('PEER_ISSUER'), allowedAud: env('PEER_AUDIENCE') },
});

app.post<{ Body: Body }>(LIMIT_URL, { schema: { body: Body } }, async (request, reply) => {
  let claims: Claims;
  try {
    claims = await request.jwtVerify<Claims>();
  } catch {
    return reply.code(401).send({ result: null, exception: { code: 'UNAUTHORIZED', message: 'invalid token' }, pagination: null });
  }
  if (claims.tenant !== request.headers.tenant || claims.role !== 'API Integration') {
    return reply.code(403).send({ result: null, exception: { code: 'FORBIDDEN', message: 'not allowed' }, pagination: null });
  }
  await pool.query('INSERT INTO peer_fastify_audit (id, tenant_id, actor, action, target, outcome) VALUES ($1, $2, $3, $4, $5, $6)', [
    randomUUID(),
    claims.tenant,
    claims.sub,
    'credit-limit.upgrade',
    JSON.stringify({ entityId: request.body.entityId, amount: request.body.amount }),
    'success',
  ]);
  return { result: true, exception: null, pagination: null };
});

app.get('/__bench/stats', async () => {
  const r = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM peer_fastify_audit');
  return { elu: performance.eventLoopUtilization(), cpu: process.cpuUsage(), rss: process.memoryUsage().rss, rows: r.rows[0]!.n };
});

await app.listen({ host: '127.0.0.1', port: Number(process.env.PEER_PORT || 0) });
const address = app.server.address();
process.stdout.write(`${JSON.stringify({ peerPort: typeof address === 'object' && address ? address.port : 0 })}\n`);

const stop = () => void app.close().then(() => pool.end()).finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
