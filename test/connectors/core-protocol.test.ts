// The core protocol table (connectors/rest/protocol.ts) is complete and consistent: every contract operation is
// served by one entry, path templates and parameter schemas agree, and kinds match methods and keys.
import { describe, expect, it } from 'vitest';
import { CORE_PROTOCOL, type CoreEndpointSpec } from '../../connectors/rest/protocol.js';
import { CONTRACT, CONTRACT_OPERATIONS } from '../../connectors/contract.js';

const entries = Object.values(CORE_PROTOCOL) as CoreEndpointSpec[];

describe('core protocol table', () => {
  it('serves every contract operation, and the card resolution, exactly once', () => {
    const served = entries.flatMap((e) => (e.kind === 'probe' ? [] : [e.serves])).sort();
    expect(served).toEqual([...CONTRACT_OPERATIONS, 'resolveCard'].sort());
  });

  it.each(entries.map((e) => [e.operationId, e] as const))('%s: the path names exactly its parameters', (_id, entry) => {
    const named = [...entry.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    expect(named).toEqual(Object.keys(entry.params));
  });

  it('is keyed by operationId; one entry per method and path', () => {
    for (const [key, entry] of Object.entries(CORE_PROTOCOL)) expect(entry.operationId).toBe(key);
    const routes = entries.map((e) => `${e.method} ${e.path}`);
    expect(new Set(routes).size).toBe(routes.length);
  });

  it('writes are POST, PUT or PATCH, take the Idempotency-Key and may answer 202; reads and probes are GET without 202', () => {
    for (const e of entries) {
      if (e.kind === 'write') {
        expect([e.operationId, e.method, e.keyed, 202 in e.answers]).toEqual([e.operationId, expect.stringMatching(/^(POST|PUT|PATCH)$/), true, true]);
      } else {
        expect([e.operationId, e.method, 202 in e.answers]).toEqual([e.operationId, 'GET', false]);
      }
    }
    expect(entries.filter((e) => e.kind === 'read' && e.keyed).map((e) => e.operationId)).toEqual(['resolveCard']);
  });

  it("takes each operation's kind from the contract table", () => {
    for (const e of entries) if (e.kind !== 'probe' && e.serves !== 'resolveCard') expect([e.operationId, e.kind]).toEqual([e.operationId, CONTRACT[e.serves].kind]);
  });
});
