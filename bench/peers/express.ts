// A day's work, as a bench peer (issue 21): Express 5 + jsonwebtoken + ajv + one `pg` INSERT per request.
// The same route, body and ES256 token as Cardline's bench; one durable row per accepted request.
//   PEER_PORT (0: any), PEER_DATABASE_URL, PEER_PUBLIC_KEY (the tokens' ES256 public key, PEM),
//   PEER_ISSUER, PEER_AUDIENCE. Prints {"peerPort":N} on stdout when listening; exits on SIGTERM or stdin's end.
// GET /__bench/stats: the process's counters and the rows written (bench/run.ts reads them around a run).
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import jwt, { type JwtPayload } from 'jsonwebtoken';
import { Ajv } from 'ajv';
import pg from 'pg';

const LIMIT_URL = '/credit-line-management/business-entity-manager/upgradeLimit';
const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (bench/run.ts sets it)`);
  return v;
};
const PUBLIC_KEY = env('PEER_PUBLIC_KEY');
const ISSUER = env('PEER_ISSUER');
const AUDIENCE = env('PEER_AUDIENCE');

const validateBody = new Ajv({ allErrors: false }).compile<{ entityId: string; amount: string }>({
  type: 'object',
  properties: {
    entityId: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f]+$' },
    amount: { type: 'string', pattern: '^(?!0+(\\.0{1,2})?$)\\d{1,15}(\\.\\d{1,2})?$' },
  },
  required: ['entityId', 'amount'],
  additionalProperties: false,
});

const pool = new pg.Pool({ connectionString: env('PEER_DATABASE_URL'), max: 10 });
await pool.query(`CREATE TABLE IF NOT EXISTS peer_express_audit (
  id uuid PRIMARY KEY, tenant_id text NOT NULL, actor text NOT NULL, action text NOT NULL,
  target jsonb NOT NULL, outcome text NOT NULL, at timestamptz NOT NULL DEFAULT now())`);

const fail = (res: Response, status: number, code: string, message: string) =>
  res.status(status).json({ result: null, exception: { code, message }, pagination: null });

const app = express();
app.disable('x-powered-by');
app.use(express.json({ limit: '16kb' }));

app.post(LIMIT_URL, async (req: Request, res: Response) => {
  const header = req.headers.authorization ?? '';
  let claims: JwtPayload;
  try {
    if (!header.startsWith('Bearer ')) throw new Error('no token');
    claims = jwt.verify(header.slice(7), PUBLIC_KEY, { algorithms: ['ES256'], issuer: ISSUER, audience: AUDIENCE }) as JwtPayload;
  } catch {
    return fail(res, 401, 'UNAUTHORIZED', 'invalid token');
  }
  if (claims.tenant !== req.headers.tenant || claims.role !== 'API Integration') return fail(res, 403, 'FORBIDDEN', 'not allowed');
  if (!validateBody(req.body)) return fail(res, 400, 'VALIDATION_FAILED', validateBody.errors?.[0]?.message ?? 'invalid body');
  await pool.query('INSERT INTO peer_express_audit (id, tenant_id, actor, action, target, outcome) VALUES ($1, $2, $3, $4, $5, $6)', [
    randomUUID(),
    claims.tenant,
    claims.sub,
    'credit-limit.upgrade',
    JSON.stringify({ entityId: req.body.entityId, amount: req.body.amount }),
    'success',
  ]);
  return res.json({ result: true, exception: null, pagination: null });
});

app.get('/__bench/stats', async (_req: Request, res: Response) => {
  const r = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM peer_express_audit');
  res.json({ elu: performance.eventLoopUtilization(), cpu: process.cpuUsage(), rss: process.memoryUsage().rss, rows: r.rows[0]!.n });
});

// A malformed JSON body is the client's error, in the same envelope.
app.use((err: Error & { status?: number }, _req: Request, res: Response, next: NextFunction) => {
  if (res.headersSent) return next(err);
  return fail(res, err.status && err.status < 500 ? err.status : 500, 'BAD_REQUEST', 'malformed request');
});

const server = app.listen(Number(process.env.PEER_PORT || 0), '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ peerPort: (server.address() as AddressInfo).port })}\n`);
});

const stop = () => server.close(() => void pool.end().finally(() => process.exit(0)));
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
