// Signed checkpoints of a tenant's audit trail (decision 0202): every chain's size and head, the
// trail's size and root, the time, signed (compact JWS, ES256) with the tenant's active token-signing key.
// The gateway publishes one per tenant every few seconds while the trail grows (each process for the tenants it
// wrote; the newest stays), GET /v1/audit/checkpoints/latest serves it, and `cardline audit verify
// --checkpoint FILE` proves offline that a saved one is a prefix of today's trail.
import { CompactSign, compactVerify, importJWK, type JWK } from 'jose';
import type { AuditCheckpoint } from '../../schemas/audit.js';
import { SIG_ALG, type KeySource } from '../crypto/keys.js';
import type { Queryable } from '../store/db.js';
import { trailRoot } from './chain.js';
import type { ChainHead } from './verify.js';

/** Checkpoints one process signs per round at most (an ES256 signature and two statements each). */
export const MAX_PER_ROUND = 200;

/** The JWS `typ` of a checkpoint: nothing else the tenant's key signs (tokens are `JWT`) can pass for one. */
export const CHECKPOINT_TYP = 'cardline-audit-checkpoint+jws';

/** What the JWS signs. */
export interface CheckpointPayload {
  tenantId: string;
  at: string;
  size: number;
  root: string;
  chains: ChainHead[];
}

/** The tenant's chains as stored now (empty ones left out), in chain order. */
export async function chainHeads(db: Queryable, tenantId: string): Promise<ChainHead[]> {
  const r = await db.query<{ chain: string; size: string | number; head: string }>(
    'SELECT chain, size, head FROM audit_chains WHERE tenant_id = $1 AND size > 0 ORDER BY chain',
    [tenantId],
  );
  return r.rows.map((row) => ({ chain: row.chain, size: Number(row.size), head: row.head }));
}

/** Takes, signs and stores a checkpoint of the tenant's trail (replacing an older one); resolves it. */
export async function publishCheckpoint(db: Queryable, keys: KeySource, tenantId: string, now = new Date()): Promise<AuditCheckpoint> {
  const key = (await keys.forTenant(tenantId)).sig.find((k) => k.status === 'active');
  if (!key) throw new Error(`Tenant '${tenantId}' has no active signing key`);
  const chains = await chainHeads(db, tenantId);
  const payload: CheckpointPayload = {
    tenantId,
    at: now.toISOString(),
    size: chains.reduce((n, c) => n + c.size, 0),
    root: trailRoot(tenantId, chains),
    chains,
  };
  // jose signs with a node:crypto KeyObject made for this checkpoint and dropped, outside the ring's imported keys (decision 0435).
  const jws = await new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader({ alg: SIG_ALG, kid: key.kid, typ: CHECKPOINT_TYP })
    .sign(key.signingKey());
  // Two processes may publish at once: the later checkpoint stays.
  await db.query(
    `INSERT INTO audit_checkpoints (tenant_id, at, size, root, kid, jws) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (tenant_id) DO UPDATE SET at = EXCLUDED.at, size = EXCLUDED.size, root = EXCLUDED.root, kid = EXCLUDED.kid, jws = EXCLUDED.jws
      WHERE audit_checkpoints.at <= EXCLUDED.at`,
    [tenantId, payload.at, payload.size, payload.root, key.kid, jws],
  );
  return { ...payload, kid: key.kid, jws };
}

/** The tenant's latest stored checkpoint, or null before the first. */
export async function latestCheckpoint(db: Queryable, tenantId: string): Promise<AuditCheckpoint | null> {
  const r = await db.query<{ kid: string; jws: string }>('SELECT kid, jws FROM audit_checkpoints WHERE tenant_id = $1', [tenantId]);
  const row = r.rows[0];
  if (!row) return null;
  const payload = JSON.parse(Buffer.from(row.jws.split('.')[1]!, 'base64url').toString('utf8')) as CheckpointPayload;
  return { ...payload, kid: row.kid, jws: row.jws };
}

/** Why a saved checkpoint cannot be used: unreadable, or its signature does not hold. */
export class CheckpointError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CheckpointError';
  }
}

/**
 * A saved checkpoint (answer, object or bare JWS) verified against the tenant's key `kid`, retired or not;
 * returns the signed payload only.
 */
export async function openCheckpoint(db: Queryable, tenantId: string, text: string): Promise<CheckpointPayload> {
  let jws = text.trim();
  if (jws.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(jws);
    } catch {
      throw new CheckpointError('the file is neither JSON nor a compact JWS');
    }
    const obj = (parsed as { result?: unknown }).result ?? parsed;
    const inner = (obj as { jws?: unknown }).jws;
    if (typeof inner !== 'string') throw new CheckpointError('the file holds no `jws` field');
    jws = inner;
  }
  const parts = jws.split('.');
  if (parts.length !== 3) throw new CheckpointError('the checkpoint is not a compact JWS');
  let header: { alg?: unknown; kid?: unknown; typ?: unknown };
  try {
    header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8')) as typeof header;
  } catch {
    throw new CheckpointError('the checkpoint is not a compact JWS');
  }
  if (header.typ !== CHECKPOINT_TYP || header.alg !== SIG_ALG || typeof header.kid !== 'string') {
    throw new CheckpointError(`the JWS is not a Cardline audit checkpoint (typ ${String(header.typ)}, alg ${String(header.alg)})`);
  }
  const r = await db.query<{ public_jwk: JWK | string }>("SELECT public_jwk FROM keys WHERE tenant_id = $1 AND kid = $2 AND use = 'sig'", [tenantId, header.kid]);
  const row = r.rows[0];
  if (!row) throw new CheckpointError(`tenant '${tenantId}' has no signing key '${header.kid}'`);
  const jwk = typeof row.public_jwk === 'string' ? (JSON.parse(row.public_jwk) as JWK) : row.public_jwk;
  let payload: CheckpointPayload;
  try {
    const verified = await compactVerify(jws, await importJWK(jwk, SIG_ALG), { algorithms: [SIG_ALG] });
    payload = JSON.parse(new TextDecoder().decode(verified.payload)) as CheckpointPayload;
  } catch {
    throw new CheckpointError(`the signature does not verify with tenant '${tenantId}' key '${header.kid}'`);
  }
  if (payload.tenantId !== tenantId) throw new CheckpointError(`the checkpoint is of tenant '${payload.tenantId}', not '${tenantId}'`);
  if (!Array.isArray(payload.chains) || trailRoot(tenantId, payload.chains) !== payload.root) {
    throw new CheckpointError('the checkpoint\'s chains do not make its root');
  }
  return payload;
}

/** Publishes a checkpoint every `intervalMs` for each tenant this process wrote to; not for the platform's trail. */
export class CheckpointPublisher {
  private readonly dirty = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<void> | null = null;

  constructor(
    private readonly db: Queryable,
    private readonly keys: KeySource,
    private readonly intervalMs: number,
    private readonly onError: (tenantId: string, err: unknown) => void,
    /** Told of each checkpoint published or not (the metrics). */
    private readonly observer?: { checkpoint(published: boolean): void },
  ) {}

  /** The writer committed records of these tenants. */
  wrote(tenants: Iterable<string>): void {
    for (const t of tenants) this.dirty.add(t);
  }

  start(): void {
    if (this.timer || this.intervalMs <= 0) return;
    this.timer = setInterval(() => {
      this.round ??= this.publishDirty().finally(() => {
        this.round = null;
      });
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Publishes for at most MAX_PER_ROUND tenants a round, so busy tenants cost bounded signatures per interval. */
  async publishDirty(): Promise<void> {
    const tenants = [...this.dirty].slice(0, MAX_PER_ROUND);
    for (const t of tenants) this.dirty.delete(t);
    for (const t of tenants) {
      if (t.startsWith('_')) continue;
      try {
        await publishCheckpoint(this.db, this.keys, t);
        this.observer?.checkpoint(true);
      } catch (err) {
        this.observer?.checkpoint(false);
        this.onError(t, err);
      }
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.round;
  }
}
