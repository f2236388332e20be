// ES256 access tokens: issued per tenant with the tenant's signing key, verified with algorithms pinned.
import { hash, randomUUID } from 'node:crypto';
import type { Context } from '@opentelemetry/api';
import { SignJWT, decodeProtectedHeader, errors, jwtVerify } from 'jose';
import { LRUCache } from 'lru-cache';
import { entryBound } from '../infrastructure/cache-ttl.js';
import { ROLES, type Role } from '../../../schemas/common.js';
import { SIG_ALG } from '../../crypto/keys.js';
import type { KeyRing } from './key-ring.js';
import type { Tenant } from '../tenancy/tenants.js';
import type { User, UserState } from './users.js';

export interface Principal {
  sub: string;
  tenant: string;
  role: Role;
  jti: string;
  exp: number;
  /** The user's token generation when it was issued (claim `gen`; 0 for tokens issued before it existed). */
  gen: number;
}

/** Where verification learns whether a token's user still exists, is enabled and has not had its tokens revoked. */
export interface UserStates {
  state(tenantId: string, username: string, trace?: Context): Promise<UserState | null>;
}

export class TokenError extends Error {
  constructor(readonly reason: string) {
    super(`Token refused: ${reason}`);
    this.name = 'TokenError';
  }
}

/** ECDSA signatures are malleable, so tokens are signed and accepted only with low S (s ≤ n/2): one spelling each. */
const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const P256_HALF_N = P256_N >> 1n;
const ES256_SIGNATURE_BYTES = 64;

/** The s of a compact JWS's ES256 signature (raw r‖s), or null when the signature is not 64 bytes. */
function signatureS(signature: Buffer): bigint | null {
  return signature.length === ES256_SIGNATURE_BYTES ? BigInt(`0x${signature.subarray(32).toString('hex')}`) : null;
}

/** The same token with a low-S signature: s replaced by n − s when s > n/2 (still a valid signature). */
function lowS(token: string): string {
  const dot = token.lastIndexOf('.');
  const signature = Buffer.from(token.slice(dot + 1), 'base64url');
  const s = signatureS(signature);
  if (s === null || s <= P256_HALF_N) return token;
  const low = Buffer.from((P256_N - s).toString(16).padStart(64, '0'), 'hex');
  return `${token.slice(0, dot)}.${Buffer.concat([signature.subarray(0, 32), low]).toString('base64url')}`;
}

/** How long a verified token may be served from the cache before its signature is checked again. */
const VERIFIED_CACHE_TTL_MS = 60_000;

export class TokenService {
  /** Verified tokens by the SHA-256 of their text (43 characters, not 400: decision 0390); the signature check is the costliest step. */
  private readonly verified = new LRUCache<string, { principal: Principal; kid: string }>({ ...entryBound(50_000), ttl: VERIFIED_CACHE_TTL_MS });
  /** Tokens answered from the cache, and tokens whose signature was checked (the bench reports the hit rate). */
  cacheHits = 0;
  cacheMisses = 0;

  constructor(
    private readonly keys: KeyRing,
    private readonly issuer: string,
    private readonly audience: string,
    private readonly users?: UserStates,
  ) {}

  /** Signs a token for the user; the principal it names comes back with it (the audit records it). */
  async issue(tenant: Tenant, user: User): Promise<{ token: string; principal: Principal }> {
    const key = (await this.keys.forTenant(tenant.id)).sig.find((k) => k.status === 'active');
    if (!key) throw new Error(`Tenant '${tenant.id}' has no active signing key`);
    const now = Math.floor(Date.now() / 1000);
    const principal: Principal = {
      sub: user.username,
      tenant: tenant.id,
      role: user.role,
      jti: randomUUID(),
      exp: now + tenant.config.tokenLifetimeSeconds,
      gen: user.generation,
    };
    const token = lowS(await new SignJWT({ tenant: tenant.id, role: user.role, gen: user.generation })
      .setProtectedHeader({ alg: SIG_ALG, kid: key.kid, typ: 'JWT' })
      .setSubject(principal.sub)
      .setIssuedAt(now)
      .setExpirationTime(principal.exp)
      .setJti(principal.jti)
      .setIssuer(this.issuer)
      .setAudience(this.audience)
      .sign(await key.privateKey()));
    return { token, principal };
  }

  /** Verifies a token for the tenant named by the request's header; throws TokenError otherwise. `trace`: its statements' parent. */
  async verify(token: string, tenantId: string, trace?: Context): Promise<Principal> {
    const nowSeconds = Math.floor(Date.now() / 1000);
    // One-shot: no Hash object per request.
    const digest = hash('sha256', token, 'base64url');
    const hit = this.verified.get(digest);
    if (hit) {
      this.cacheHits += 1;
      const cached = hit.principal;
      if (cached.exp <= nowSeconds) throw new TokenError('expired');
      if (cached.tenant !== tenantId) throw new TokenError('tenant mismatch');
      // A retired signing key stops verifying at once, not when this cache entry expires (decision 0021).
      if (!(await this.keys.forTenant(tenantId, trace)).sig.some((k) => k.kid === hit.kid)) throw new TokenError('unknown key');
      return this.current(cached, trace);
    }
    this.cacheMisses += 1;
    let kid: string | undefined;
    try {
      const header = decodeProtectedHeader(token);
      if (header.alg !== SIG_ALG) throw new TokenError('algorithm not allowed');
      if (header.jwk || header.jku || header.x5u || header.x5c) throw new TokenError('embedded keys are not accepted');
      kid = header.kid;
    } catch (err) {
      throw err instanceof TokenError ? err : new TokenError('malformed');
    }
    const s = signatureS(Buffer.from(token.slice(token.lastIndexOf('.') + 1), 'base64url'));
    if (s !== null && s > P256_HALF_N) throw new TokenError('high-S signature (malleated)');
    // Only the header's tenant's keys are candidates: another tenant's token never finds its key here.
    const key = (await this.keys.forTenant(tenantId, trace)).sig.find((k) => k.kid === kid);
    if (!key) throw new TokenError('unknown key');
    let payload;
    try {
      ({ payload } = await jwtVerify(token, await key.publicKey(), {
        algorithms: [SIG_ALG],
        // Explicit typing (RFC 8725 §3.11): a JWT of another kind signed with the same key is not an access token.
        typ: 'JWT',
        issuer: this.issuer,
        audience: this.audience,
        requiredClaims: ['sub', 'iat', 'exp', 'jti'],
      }));
    } catch (err) {
      // jose checks the signature first, so an expired token is genuine: logged apart from a forgery.
      throw new TokenError(err instanceof errors.JWTExpired ? 'expired' : 'signature or claims invalid');
    }
    const { sub, tenant, role, jti, exp, gen } = payload as Record<string, unknown>;
    if (tenant !== tenantId) throw new TokenError('tenant mismatch');
    if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role)) throw new TokenError('unknown role');
    if (gen !== undefined && (typeof gen !== 'number' || !Number.isSafeInteger(gen) || gen < 0)) throw new TokenError('malformed');
    const principal: Principal = { sub: String(sub), tenant: tenantId, role: role as Role, jti: String(jti), exp: Number(exp), gen: typeof gen === 'number' ? gen : 0 };
    this.verified.set(digest, { principal, kid: key.kid });
    return this.current(principal, trace);
  }

  /** Refuses a token whose user was removed or disabled, or whose tokens were revoked since it was issued. */
  private async current(principal: Principal, trace: Context | undefined): Promise<Principal> {
    if (!this.users) return principal;
    const state = await this.users.state(principal.tenant, principal.sub, trace);
    if (!state) throw new TokenError('user removed');
    if (state.disabled) throw new TokenError('user disabled');
    if (state.generation !== principal.gen) throw new TokenError('revoked');
    return principal;
  }
}
