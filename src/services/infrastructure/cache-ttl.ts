// How long the tenant, key and client-key caches keep an entry (decision 0071).

/** LRU options for a TTL: null keeps entries until a change evicts them, a number expires them, 0 caches nothing. */
export function cacheTtl(ttlMs: number | null): { ttl?: number } {
  return ttlMs === null ? {} : { ttl: Math.max(ttlMs, 1) };
}

/** Entries a cache of tenants holds: beyond any deployment's tenant count (unknown ids are kept apart). */
export const TENANT_CACHE_MAX = 100_000;

/** Unknown tenant ids remembered as misses apart from tenants, so a flood evicts older misses, never a tenant. */
export const UNKNOWN_TENANT_CACHE_MAX = 10_000;

/** LRU options bounded by size, one per entry, so a large bound preallocates nothing (decision 0214). */
export function entryBound(max: number): { maxSize: number; sizeCalculation: () => number } {
  return { maxSize: max, sizeCalculation: one };
}
const one = () => 1;
