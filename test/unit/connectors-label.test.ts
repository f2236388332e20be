// How `cardline tenant list` names a tenant's cores (decision 0287): one connector by its id; several by where
// routing sends operations, the default first, and the shadow beside them; never a `?`.
import { describe, expect, it } from 'vitest';
import type { TenantConfig } from '../../schemas/tenant.js';
import { connectorsLabel } from '../../src/services/connectors/routing.js';

const rest = (baseUrl: string) => ({ id: 'rest', options: { baseUrl } });
const label = (config: Partial<TenantConfig>) => connectorsLabel(config as TenantConfig);

describe('connectorsLabel', () => {
  it('one connector: its id', () => {
    expect(label({ connector: { id: 'mock', options: { fixtures: 'demo' } } })).toBe('mock');
  });

  it('several: each routed one as name=id, the default first, then the others in routing order', () => {
    expect(
      label({
        connectors: { processor: rest('https://processor.example'), core: { id: 'file', options: { dir: '/var/lib/core' } } },
        routing: { default: 'core', operations: { cards: 'processor', pin: 'processor' } },
      }),
    ).toBe('core=file, processor=rest');
  });

  it('a core in shadow is named after the others; a name that is its id is written once', () => {
    expect(
      label({
        connectors: { processor: rest('https://p.example'), old: rest('https://old.example'), new: rest('https://new.example') },
        routing: { default: 'old', operations: { cards: 'processor', pin: 'processor' } },
        shadow: { connector: 'new', operations: ['credit-line'] },
      }),
    ).toBe('old=rest, processor=rest (+shadow new=rest)');
    expect(label({ connectors: { mock: { id: 'mock', options: {} }, rest: rest('https://r.example') }, routing: { default: 'mock', operations: { cards: 'rest' } } })).toBe(
      'mock, rest',
    );
  });

  it('a connector named but not routed to is not listed as serving; a configuration without one says -', () => {
    expect(label({ connectors: { a: { id: 'mock', options: {} }, spare: { id: 'mock', options: {} } }, routing: { default: 'a' } })).toBe('a=mock');
    expect(label({})).toBe('-');
  });
});
