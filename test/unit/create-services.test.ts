// The composition root without a framework: createServices() builds the gateway's services from a store and a
// master key, start() adds the gateway's background work, close() stops that first and then closes every
// service in the reverse order of construction, the store last; a build that fails closes what it had opened
// and leaves the store to its caller.
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AuditWriter } from '../../src/audit/writer.js';
import { CheckpointPublisher } from '../../src/audit/checkpoint.js';
import { loadConfig } from '../../src/config.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { DeliveryService } from '../../src/notify/deliveries.js';
import { ConnectorInstances } from '../../src/services/connectors/connector-instances.js';
import { ShadowService } from '../../src/services/connectors/shadow.js';
import { createServices } from '../../src/services/index.js';
import { ChangeFeed } from '../../src/services/infrastructure/changes.js';
import { IdempotencyStore } from '../../src/services/infrastructure/idempotency.js';
import { createTestDb } from '../helpers/app.js';

const log = pino({ enabled: false });

/** Records, in order, which of these methods ran (each still does its work). */
function recordCalls(): string[] {
  const calls: string[] = [];
  const watch = <T extends object>(proto: T, method: keyof T & string, name: string) => {
    const original = proto[method] as (...args: unknown[]) => unknown;
    vi.spyOn(proto, method as never).mockImplementation(function (this: unknown, ...args: unknown[]) {
      calls.push(name);
      return original.apply(this, args);
    } as never);
  };
  watch(IdempotencyStore.prototype, 'stop', 'idempotency');
  watch(AuditWriter.prototype, 'close', 'audit');
  watch(DeliveryService.prototype, 'stop', 'deliveries');
  watch(CheckpointPublisher.prototype, 'stop', 'checkpoints');
  watch(ShadowService.prototype, 'close', 'shadow');
  watch(ConnectorInstances.prototype, 'close', 'connectors');
  watch(ChangeFeed.prototype, 'close', 'changes');
  return calls;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('createServices', () => {
  it('builds the services without Fastify; close() stops what start() started, then the rest in reverse, the store last', async () => {
    const { db, drop } = await createTestDb();
    const calls = recordCalls();
    // The store is the test's (it goes back to the pool): its close is recorded, not run.
    vi.spyOn(db, 'close').mockImplementation(async () => void calls.push('store'));
    try {
      const config = loadConfig({ LOG_LEVEL: 'silent' });
      const { services, start, close } = await createServices({ config, db, masterKey: MasterKey.generate(), log });
      expect(await services.tenants.listStored()).toEqual([]);
      await start();
      await close();
      expect(calls).toEqual(['checkpoints', 'deliveries', 'idempotency', 'audit', 'shadow', 'connectors', 'changes', 'store']);
      // A second close closes nothing twice.
      await close();
      expect(calls).toHaveLength(8);
    } finally {
      await drop();
    }
  });

  it('leaves the store open when the caller owns it, and starts nothing it is not asked to', async () => {
    const { db, drop } = await createTestDb();
    const calls = recordCalls();
    try {
      const { close } = await createServices({ config: loadConfig({ LOG_LEVEL: 'silent' }), db, masterKey: MasterKey.generate(), log, ownsDb: false, hsm: null });
      await close();
      expect(calls).toEqual(['idempotency', 'audit', 'shadow', 'connectors', 'changes']);
      expect((await db.query<{ n: number }>('SELECT 1 AS n')).rows).toEqual([{ n: 1 }]);
    } finally {
      await drop();
    }
  });

  it('a build that fails closes what it had opened and leaves the store to its caller', async () => {
    const { db, drop } = await createTestDb();
    const calls = recordCalls();
    const closeDb = vi.spyOn(db, 'close');
    try {
      // The HSM is opened after the change feed: a PKCS#11 library that is not there fails the build.
      const config = loadConfig({
        LOG_LEVEL: 'silent',
        CARDLINE_HSM: 'pkcs11',
        CARDLINE_PKCS11_LIBRARY: '/nonexistent/libpkcs11.so',
        CARDLINE_PKCS11_TOKEN_LABEL: 'cardline',
        CARDLINE_PKCS11_PIN: '1234',
      });
      await expect(createServices({ config, db, masterKey: MasterKey.generate(), log })).rejects.toThrow(/PIN HSM/);
      expect(calls).toEqual(['changes']);
      expect(closeDb).not.toHaveBeenCalled();
      expect((await db.query<{ n: number }>('SELECT 1 AS n')).rows).toEqual([{ n: 1 }]);
    } finally {
      await drop();
    }
  });
});
