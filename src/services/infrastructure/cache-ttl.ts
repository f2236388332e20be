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
 * LRU options bounding a cache to `max` entries without lru-cache's preallocation: given `max`, it allocates
 * its arrays for that many entries at once (24 bytes each: a cache bounded at 100 000 tenants held 2.4 MB
 * before its first entry, 15 MB across the gateway's caches); bounded by size, one per entry, they grow with
 * the entries (decision 0214). The least recently used entry past the bound goes, as with `max`.
 */
export function entryBound(max: number): { maxSize: number; sizeCalculation: () => number } {
  return { maxSize: max, sizeCalculation: one };
}
const one = () => 1;
