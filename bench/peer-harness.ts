// The peers of issue 21 point 6 (bench/peers/), started and measured by bench/run.ts in the same alternated
// run as Cardline, and the PostgreSQL backends' CPU of any arm (read from /proc for the backends connected
// to the arm's database: the server runs on this machine).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { EventLoopUtilization } from 'node:perf_hooks';
import { SignJWT, exportSPKI, generateKeyPair } from 'jose';
import pg from 'pg';
import { procStat } from './cluster-arm.js';
import { temporaryDatabase } from './postgres.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ISSUER = 'bench-peer';
const AUDIENCE = 'bench-peer-api';

export const PEERS = [
  { name: 'Fastify + @fastify/jwt + TypeBox', file: 'fastify.ts' },
  { name: 'Express 5 + jsonwebtoken + ajv', file: 'express.ts' },
] as const;

export interface PeerStats {
  elu: EventLoopUtilization;
  cpu: NodeJS.CpuUsage;
  rss: number;
  rows: number;
}

export interface StartedPeer {
  name: string;
  child: ChildProcess;
  port: number;
  database: string;
  drop: () => Promise<void>;
}

/** One ES256 key pair for both peers, and a token for tenant `demo` signed with it (Cardline's claims). */
export async function peerCredentials(): Promise<{ publicKey: string; token: string }> {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const token = await new SignJWT({ tenant: 'demo', role: 'API Integration', gen: 0 })
    .setProtectedHeader({ alg: 'ES256', typ: 'JWT' })
    .setSubject('integration')
    .setIssuedAt()
    .setExpirationTime('2h')
    .setJti(randomUUID())
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .sign(privateKey);
  return { publicKey: await exportSPKI(publicKey), token };
}

/** Starts one peer on a database of its own; resolves once it listens. */
export async function startPeer(peer: (typeof PEERS)[number], publicKey: string, port: number): Promise<StartedPeer> {
  const db = await temporaryDatabase('cardline_bench_peer');
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', 'peers', peer.file)], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'production', PEER_PORT: String(port), PEER_DATABASE_URL: db.url, PEER_PUBLIC_KEY: publicKey, PEER_ISSUER: ISSUER, PEER_AUDIENCE: AUDIENCE },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  return new Promise((resolveStarted, reject) => {
    const timer = setTimeout(() => reject(new Error(`peer ${peer.file} did not start within 60 s`)), 60_000);
    child.once('exit', (code) => reject(new Error(`peer ${peer.file} exited early with code ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const msg = JSON.parse(line) as { peerPort?: number };
        if (msg.peerPort) {
          clearTimeout(timer);
          resolveStarted({ name: peer.name, child, port: msg.peerPort, database: new URL(db.url).pathname.slice(1), drop: db.drop });
          return;
        }
      } catch {
        // not ours
      }
      process.stderr.write(`[${peer.file}] ${line}\n`);
    });
  });
}

export const peerStats = async (port: number): Promise<PeerStats> => (await (await fetch(`http://127.0.0.1:${port}/__bench/stats`)).json()) as PeerStats;

/**
 * The CPU (µs, user + system) the PostgreSQL backends connected to `database` have used so far, by pid; only
 * those of `application` (their connection string's application_name) when given: two arms on one database.
 * A backend that ends between two readings takes its CPU with it (an undercount): the arms' pools keep theirs open.
 */
export async function backendCpu(client: pg.Client, database: string, application?: string): Promise<Map<number, number>> {
  const r = await client.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND ($2::text IS NULL OR application_name = $2)',
    [database, application ?? null],
  );
  const out = new Map<number, number>();
  for (const { pid } of r.rows) {
    // null when it ended, or the server runs elsewhere: no figure
    const s = procStat(pid);
    if (s) out.set(pid, s.cpuUs);
  }
  return out;
}

/** CPU used between two readings: backends present in both, and new ones since their start. */
export function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, us] of after) total += us - (before.get(pid) ?? 0);
  return total;
}

/** A client to DATABASE_URL's server for reading pg_stat_activity, or null without one. */
export async function statsClient(): Promise<pg.Client | null> {
  if (!process.env.DATABASE_URL) return null;
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  return client;
}
