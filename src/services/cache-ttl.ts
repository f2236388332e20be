// How long the tenant, key and client-key caches keep an entry (decision 0071).

/**
 * LRU options for a cache TTL: null keeps entries until a change evicts them (the change feed tells every
 * process); a positive TTL expires them too; 0 caches nothing (an expiry of 1 ms).
 */
export function cacheTtl(ttlMs: number | null): { ttl?: number } {
  return ttlMs === null ? {} : { ttl: Math.max(ttlMs, 1) };
}

/**
 * Entries a cache of tenants (or of their keys) holds: past any tenant count a deployment reaches, so that a
 * gateway's tenants stay cached; the bound keeps unknown tenant ids (cached as misses) from growing memory
 * without limit.
 */
export const TENANT_CACHE_MAX = 100_000;
