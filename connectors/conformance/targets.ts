// How the suite gets fresh instances of each built-in connector, by id. Every id in
// connectors/index.ts needs an entry: test/connectors/conformance.test.ts fails for one without.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildMockCore } from '../mock-core/server.js';
import file from '../file/index.js';
import mock from '../mock/index.js';
import rest from '../rest/index.js';
import { targetFromDefinition } from './runner.js';
import type { ConformanceTarget } from './types.js';

export const conformanceTargets: Record<string, () => ConformanceTarget> = {
  // Each instance holds its own copy of the demo fixtures, so a new instance is a fresh core.
  mock: () => targetFromDefinition(mock, { fixtures: 'demo' }),

  // A new temporary directory per instance, seeded with the demo fixtures.
  file: () =>
    targetFromDefinition(file, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'cardline-conformance-'));
      return { options: { dir, fixtures: 'demo' }, cleanup: () => rm(dir, { recursive: true, force: true }) };
    }),

  // The mock core server, started once on loopback; a new bank (fresh demo fixtures) per instance.
  rest: () => {
    let core: FastifyInstance | undefined;
    let base = '';
    let n = 0;
    return targetFromDefinition(
      rest,
      async () => {
        if (!core) {
          core = buildMockCore({ fixtures: 'demo' });
          base = await core.listen({ host: '127.0.0.1', port: 0 });
        }
        return { options: { baseUrl: `${base}/banks/conf-${++n}` } };
      },
      { dispose: async () => void (await core?.close()) },
    );
  },
};
