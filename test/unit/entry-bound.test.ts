// The caches' entry bound without preallocation (decision 0214): the least recently used entry past the bound
// goes, as with lru-cache's `max`, and a TTL still expires entries.
import { LRUCache } from 'lru-cache';
import { describe, expect, it } from 'vitest';
import { entryBound } from '../../src/services/infrastructure/cache-ttl.js';

describe('entryBound', () => {
  it('keeps at most its bound of entries, dropping the least recently used', () => {
    const cache = new LRUCache<string, number>(entryBound(3));
    for (const [i, k] of ['a', 'b', 'c'].entries()) cache.set(k, i);
    expect(cache.get('a')).toBe(0);
    cache.set('d', 3);
    expect([...cache.keys()].sort()).toEqual(['a', 'c', 'd']);
    for (let i = 0; i < 10_000; i++) cache.set(`k${i}`, i);
    expect(cache.size).toBe(3);
    expect(cache.get('k9999')).toBe(9999);
  });

  it('expires entries with a TTL beside the bound', () => {
    let now = 5_000;
    const cache = new LRUCache<string, number>({ ...entryBound(100_000), ttl: 1_000, ttlResolution: 0, perf: { now: () => now } });
    cache.set('a', 1);
    now = 5_999;
    expect(cache.get('a')).toBe(1);
    now = 6_001;
    expect(cache.get('a')).toBeUndefined();
  });
});
