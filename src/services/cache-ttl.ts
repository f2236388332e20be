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
 * gateway's tenants stay cached. Only tenants that exist get here: unknown ids are kept apart (below).
 */
export const TENANT_CACHE_MAX = 100_000;

/**
 * Unknown tenant ids remembered as misses (a flood of them then costs no queries), apart from the tenants
 * that exist: a flood of random ids evicts older misses, never a tenant, and holds at most this many
 * (an id has at most 63 characters: about 1 MB).
 */
export const UNKNOWN_TENANT_CACHE_MAX = 10_000;

/**
 * Tenants whose gateway keys stay imported (decision 0209): about 10 KB each (four imported EC keys and
 * their JWKs), so the default holds 10 000 tenants in about 100 MB; past it the least recently used tenant's
 * keys are dropped and imported again (about 0.4 ms) on its next request.
 */
export const DEFAULT_KEY_CACHE_MAX = 10_000;

/** Connector instances kept started by default (decision 0210). */
export const DEFAULT_MAX_INSTANCES = 10_000;

/**
 * LRU options bounding a cache to `entries` entries without allocating storage for all of them up front.
 * lru-cache's `max` allocates its arrays for `max` entries when the cache is made: the 100 000 and 200 000
 * bounds above cost a CLI command about 0.2 s of CPU and the gateway memory for entries it may never hold.
 * Counted as `maxSize` with each entry of size 1, the bound is the same and storage grows with use.
 */
export function bounded(entries: number): { maxSize: number; sizeCalculation: () => number } {
  return { maxSize: entries, sizeCalculation: () => 1 };
}
