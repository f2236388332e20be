import { describe, expect, it } from 'vitest';
import { stringAt, targetOf } from '../../src/plugins/audit.js';

/** The lookup as it was before decision 0439 (an object of the three parts per call), the reference. */
function referenceAt(request: { params: unknown; query: unknown; body: unknown }, path: string): string | undefined {
  let value: unknown = { params: request.params, query: request.query, body: request.body };
  for (const segment of path.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, segment)) return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

const requests = [
  { params: { cardId: 'C-1' }, query: { q: 'x', n: 3 }, body: { entityId: 'ENT-1001', nested: { id: 'N-1', empty: '' }, list: ['a'], nil: null } },
  { params: undefined, query: undefined, body: undefined },
  { params: null, query: 'text', body: 'a body' },
  { params: {}, query: {}, body: Object.create({ inherited: 'no' }) as unknown },
];
const paths = [
  'params', 'params.cardId', 'query.q', 'query.n', 'body', 'body.entityId', 'body.nested.id', 'body.nested.empty', 'body.nested.none',
  'body.list.0', 'body.nil', 'body.nil.x', 'body.inherited', 'headers.authorization', 'constructor', 'body.constructor', 'toString',
];

describe('audit targets (decision 0439)', () => {
  it('reads every path as the lookup it replaces did', () => {
    for (const request of requests) for (const path of paths) expect(stringAt(request, path), path).toBe(referenceAt(request, path));
  });

  it('names fields by source or dotted path, in the spec order, masked and clipped', () => {
    const request = { params: { cardId: 'C-9' }, query: {}, body: { entityId: '4111111111111111', card: { ref: 'x'.repeat(300) }, n: 5 } };
    const spec = { entityId: 'body', cardId: 'params', ref: 'body.card.ref', n: 'body', missing: 'query' } as const;
    const target = targetOf(request, spec);
    expect(Object.keys(target)).toEqual(['entityId', 'cardId', 'ref']);
    expect(target).toEqual({ entityId: '411111******1111', cardId: 'C-9', ref: 'x'.repeat(128) });
    expect(targetOf(request, spec)).toEqual(target);
    expect(targetOf(request, undefined)).toEqual({});
  });
});
