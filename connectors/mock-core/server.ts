// The mock core server: several simulated banks speaking the Cardline core REST protocol v1 (its routes
// registered from the protocol table), with persistence and fault injection. Tests use it in-process.
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { OperationResult } from '../contract.js';
import type { CoreBank } from '../mock/core.js';
import { maskPan } from '../shared/pan.js';
import type { MockCard, MockEntity } from '../mock/fixtures.js';
import { fromMinor } from '../shared/money.js';
import {
  BankId,
  CoreError,
  FaultConfig,
  FaultConfigUpdate,
  OperationHeaders,
  ResetRequest,
  ResetResult,
  CoreHealth,
  type CoreEntity,
} from '../../schemas/core-protocol.js';
import { CORE_PROTOCOL, type CoreEndpointSpec, type CoreOperation, type CoreProbeId } from '../rest/protocol.js';
import { coreProtocolOpenApi } from '../rest/protocol-document.js';
import { BankStore, BankStoreError } from './banks.js';
import { FaultInjector, MAX_HOLD_MS, parseFaultHeader, type Fault } from './faults.js';

export type MockCoreAuth = { type: 'none' } | { type: 'bearer'; token: string } | { type: 'basic'; username: string; password: string };

export interface MockCoreOptions {
  /** Directory of the banks' snapshots (one JSON file per bank). Without it, state lives in memory only. */
  dataDir?: string | undefined;
  /** What a bank starts from on first use: the demo fixtures (default) or nothing. */
  fixtures?: 'demo' | 'empty' | undefined;
  /** Initial fault configuration; PUT /__admin/faults replaces it. */
  faults?: FaultConfigUpdate | undefined;
  /** How long a `timeout` fault holds a request before dropping it (default 60 s). */
  maxHoldMs?: number | undefined;
  /** Credentials the bank routes require (default none). Admin and health routes are open: keep the server on loopback. */
  auth?: MockCoreAuth | undefined;
  /** Fastify logger options; silent by default. */
  logger?: FastifyServerOptions['logger'];
}

const CallCounts = Type.Object({
  banks: Type.Record(Type.String(), Type.Record(Type.String(), Type.Integer()), { description: 'by bank, then by operationId: the requests it received since the server started' }),
});

const coreError = (code: string, message: string) => ({ error: { code, message } });

function entityView(entity: MockEntity, cards: Iterable<MockCard>): CoreEntity {
  return {
    entityId: entity.entityId,
    name: entity.name,
    creditLimit: fromMinor(entity.creditLimitMinor),
    cards: [...cards]
      .filter((c) => c.entityId === entity.entityId)
      .map((c) => ({
        cardId: c.cardId,
        form: c.form,
        state: c.state,
        maskedPan: maskPan(c.pan),
        ...(c.kitNo ? { kitNo: c.kitNo } : {}),
        ...(c.fulfilment ? { fulfilment: c.fulfilment } : {}),
        balance: fromMinor(c.balanceMinor),
      })),
  };
}

const sameSecret = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

function authorized(auth: MockCoreAuth, header: string | undefined): boolean {
  if (auth.type === 'none') return true;
  if (!header) return false;
  if (auth.type === 'bearer') return header.startsWith('Bearer ') && sameSecret(header.slice(7), auth.token);
  if (!header.startsWith('Basic ')) return false;
  return sameSecret(Buffer.from(header.slice(6), 'base64').toString('utf8'), `${auth.username}:${auth.password}`);
}

export function buildMockCore(opts: MockCoreOptions = {}): FastifyInstance {
  const banks = new BankStore({ dataDir: opts.dataDir, fixtures: opts.fixtures ?? 'demo' });
  const faults = new FaultInjector(opts.faults);
  const maxHoldMs = Math.min(opts.maxHoldMs ?? MAX_HOLD_MS, MAX_HOLD_MS);
  const auth = opts.auth ?? { type: 'none' };
  /** Requests held by `timeout` faults, released (socket destroyed) when the server closes. */
  const held = new Set<() => void>();
  const closing = new AbortController();
  /** Requests each bank received, by the protocol's operationId (GET /__admin/calls): what the core itself counted. */
  const calls = new Map<string, Map<string, number>>();
  const operationIds = new Map<string, string>();

  const fastify = Fastify({
    logger: opts.logger ?? false,
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    return503OnClosing: true,
    // A start on a loaded machine is slow, not broken (decision 0101).
    pluginTimeout: 0,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: true } },
  });
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  app.setErrorHandler((err: Error & { validation?: unknown; statusCode?: number }, request, reply) => {
    if (err.validation) return reply.code(400).send(coreError('BAD_REQUEST', err.message));
    if (err instanceof BankStoreError) {
      request.log.error({ err }, 'bank storage failed');
      return reply.code(500).send(coreError('CORE_STORAGE', 'The core could not read or write its state; nothing was applied.'));
    }
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) request.log.error({ err }, 'unexpected error');
    return reply.code(status).send(coreError(status === 500 ? 'CORE_ERROR' : 'BAD_REQUEST', status === 500 ? 'Internal error.' : err.message));
  });
  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send(coreError('NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}.`));
  });

  /** A `timeout` fault: no answer until the client gives up, the hold limit passes or the server closes. */
  const hold = (request: FastifyRequest, reply: FastifyReply) => {
    reply.hijack();
    const socket = request.raw.socket;
    const release = () => {
      clearTimeout(timer);
      held.delete(release);
      if (!socket.destroyed) socket.destroy();
    };
    const timer = setTimeout(release, maxHoldMs);
    held.add(release);
    reply.raw.once('close', release);
  };

  /** Applies the request's fault or latency; true when the fault answered (or never will), so the handler stops. */
  const injectFault = async (request: FastifyRequest, reply: FastifyReply, operation: boolean): Promise<boolean> => {
    const header = request.headers['x-mock-fault'];
    const requested = parseFaultHeader(typeof header === 'string' ? header : undefined);
    const fault: Fault | undefined = requested ?? (operation ? faults.draw() : undefined);
    const delay = (operation ? faults.latencyMs : 0) + (fault?.kind === 'latency' ? fault.ms : 0);
    if (delay > 0) {
      try {
        await sleep(Math.min(delay, MAX_HOLD_MS), undefined, { signal: closing.signal });
      } catch {
        void reply.code(503).send(coreError('CORE_UNAVAILABLE', 'The core is shutting down; nothing was applied.'));
        return true;
      }
    }
    switch (fault?.kind) {
      case 'error':
        request.log.info({ fault: 'error' }, 'injected fault');
        void reply.code(503).send(coreError('CORE_UNAVAILABLE', 'Injected fault: the core is unavailable; nothing was applied.'));
        return true;
      case 'timeout':
        request.log.info({ fault: 'timeout' }, 'injected fault');
        hold(request, reply);
        return true;
      case 'reset':
        request.log.info({ fault: 'reset' }, 'injected fault');
        reply.hijack();
        request.raw.socket.destroy();
        return true;
      default:
        return false;
    }
  };

  /** 200 with the protocol's answer, 422 business refusal, or (a write) 202 when the core only took the request. */
  const reply = <T>(res: FastifyReply, result: OperationResult<T>, answer: (value: T) => unknown) => {
    switch (result.status) {
      case 'succeeded':
        return res.code(200).send(answer(result.value));
      case 'rejected':
        return res.code(422).send(coreError(result.code, result.message));
      case 'pending':
        return res.code(202).send({ status: 'ACCEPTED', ...(result.reference ? { reference: result.reference } : {}) });
    }
  };

  /**
   * An operation of the table applied by its CoreBank rule, one at a time per bank; a write is saved when
   * it changed state or carries a key; a read never.
   */
  const operation = (entry: CoreOperation) => async (request: FastifyRequest, res: FastifyReply) => {
    if (await injectFault(request, res, true)) return res;
    const { bankId, ...ids } = request.params as { bankId: string } & Record<string, string>;
    const fields = { ...(entry.query ? (request.query as object) : {}), ...((request.body as object | undefined) ?? {}), ...ids };
    const input = entry.input ? entry.input(fields) : fields;
    const key = request.headers['idempotency-key'] as string | undefined;
    const rule = (core: CoreBank) => (core[entry.serves] as (input: unknown, key?: string) => OperationResult<unknown>).call(core, input, key);
    const answer = (value: unknown) => (entry.answer as (value: unknown, input: unknown) => unknown)(value, input);
    if (entry.kind === 'write') {
      return reply(res, await banks.exclusive(bankId, rule, (r) => r.status === 'succeeded' || key !== undefined), answer);
    }
    const result = await banks.exclusive(bankId, rule);
    if (result.status === 'pending') throw new Error('a read cannot be pending');
    return reply(res, result, answer);
  };

  /** The protocol's paths that are not operations: only a requested fault applies to them. */
  const probes: Record<CoreProbeId, (request: FastifyRequest, res: FastifyReply) => Promise<unknown>> = {
    getEntity: async (request, res) => {
      if (await injectFault(request, res, false)) return res;
      const { bankId, entityId } = request.params as { bankId: string; entityId: string };
      const view = await banks.exclusive(bankId, (core) => {
        const entity = core.state.entities.get(entityId);
        return entity ? entityView(entity, core.state.cards.values()) : undefined;
      });
      if (!view) return res.code(404).send(coreError('ENTITY_NOT_FOUND', `Entity ${entityId} does not exist.`));
      return view;
    },
    bankHealth: async (request, res) => {
      if (await injectFault(request, res, false)) return res;
      await banks.exclusive((request.params as { bankId: string }).bankId, () => undefined);
      return { status: 'UP' as const };
    },
  };

  app.register(
    async (plugin) => {
      plugin.addHook('onRequest', async (request, res) => {
        if (!authorized(auth, request.headers.authorization)) {
          return res.code(401).header('www-authenticate', auth.type === 'basic' ? 'Basic' : 'Bearer').send(coreError('UNAUTHENTICATED', 'Missing or wrong credentials.'));
        }
        // Counted as received, before validation and faults: a call the gateway sent is a call the core saw.
        const { bankId } = request.params as { bankId: string };
        const operationId = operationIds.get(`${request.method} ${request.routeOptions.url}`) ?? '?';
        let bank = calls.get(bankId);
        if (!bank) calls.set(bankId, (bank = new Map()));
        bank.set(operationId, (bank.get(operationId) ?? 0) + 1);
      });
      for (const entry of Object.values(CORE_PROTOCOL) as CoreEndpointSpec[]) {
        const url = entry.path.replace(/\{(\w+)\}/g, ':$1');
        operationIds.set(`${entry.method} /banks/:bankId${url}`, entry.operationId);
        plugin.route({
          method: entry.method,
          url,
          schema: {
            params: Type.Object({ bankId: BankId, ...entry.params }),
            headers: OperationHeaders,
            ...(entry.query ? { querystring: entry.query } : {}),
            ...(entry.body ? { body: entry.body } : {}),
            response: { ...Object.fromEntries(Object.entries(entry.answers).map(([status, a]) => [status, a.schema])), 500: CoreError },
          },
          handler: entry.kind === 'probe' ? probes[entry.operationId as CoreProbeId] : operation(entry),
        });
      }
    },
    { prefix: '/banks/:bankId' },
  );

  app.get('/health', { schema: { response: { 200: CoreHealth } } }, async () => ({ status: 'UP' as const }));
  app.get('/openapi.json', async () => coreProtocolOpenApi());

  app.get('/__admin/faults', { schema: { response: { 200: FaultConfig } } }, async () => faults.current());
  app.put('/__admin/faults', { schema: { body: FaultConfigUpdate, response: { 200: FaultConfig } } }, async (request) => {
    const config = faults.configure(request.body);
    request.log.info({ faults: config }, 'fault configuration replaced');
    return config;
  });
  app.get('/__admin/calls', { schema: { response: { 200: CallCounts } } }, async () => ({
    banks: Object.fromEntries([...calls].map(([bankId, ops]) => [bankId, Object.fromEntries(ops)])),
  }));
  // The body is optional here (an empty POST resets every bank), so it is checked by hand.
  app.post('/__admin/reset', { schema: { response: { 200: ResetResult, 400: CoreError } } }, async (request, reply) => {
    const body = request.body ?? {};
    if (!Value.Check(ResetRequest, body)) {
      return reply.code(400).send(coreError('BAD_REQUEST', 'body must be {} or { "bankId": "<bank>" }'));
    }
    return { reset: await banks.reset(body.bankId) };
  });

  // Held requests never answer by themselves; closing releases them so that close() does not wait a minute.
  app.addHook('preClose', async () => {
    closing.abort();
    for (const release of [...held]) release();
  });
  app.addHook('onClose', async () => {
    await banks.drain();
  });

  return fastify;
}
