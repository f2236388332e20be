// The mock core server: several simulated banks speaking the Cardline core REST protocol v1, with
// persistence and fault injection. A plugin-free Fastify instance that tests use in-process.
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { CardSummary, OperationResult } from '../../connectors/contract.js';
import type { CoreBank } from '../../connectors/mock/core.js';
import { maskPan } from '../../connectors/shared/pan.js';
import type { MockCard, MockEntity } from '../../connectors/mock/fixtures.js';
import { fromMinor } from '../../connectors/shared/money.js';
import { Identifier } from '../../schemas/common.js';
import {
  BankId,
  CardResolutionQuery,
  CoreAccepted,
  CoreBlockRequest,
  CoreCardApplied,
  CoreCardDetails,
  CoreCardList,
  CoreCardResolution,
  CoreCreditLimit,
  CorePinApplied,
  CorePinRequest,
  CorePreferences,
  CorePreferencesApplied,
  CorePreferencesRequest,
  type CoreCardSummary,
  CoreCreditLimitApplied,
  CoreCreditLimitRequest,
  CoreEntity,
  CoreError,
  CoreHealth,
  CorePhysicalUpgradeApplied,
  CorePhysicalUpgradeRequest,
  FaultConfig,
  FaultConfigUpdate,
  OperationHeaders,
  ResetRequest,
  ResetResult,
  coreProtocolOpenApi,
} from '../../schemas/core-protocol.js';
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

const coreError = (code: string, message: string) => ({ error: { code, message } });

/** The contract's card summary in the protocol's words (maskedPan). */
function cardView(card: CardSummary): CoreCardSummary {
  const { panMasked, ...rest } = card;
  return { ...rest, maskedPan: panMasked };
}

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

  const fastify = Fastify({
    logger: opts.logger ?? false,
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    return503OnClosing: true,
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

  /**
   * Applies the request's fault, or (for operations) the configured latency and a random draw.
   * Returns true when the fault has answered the request (or never will), so the handler must stop.
   */
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

  /** 200 APPLIED, 422 business refusal, or 202 when the core only took the request. */
  const answer = <T>(reply: FastifyReply, result: OperationResult<T>, applied: (value: T) => unknown) => {
    switch (result.status) {
      case 'succeeded':
        return reply.code(200).send(applied(result.value));
      case 'rejected':
        return reply.code(422).send(coreError(result.code, result.message));
      case 'pending':
        return reply.code(202).send({ status: 'ACCEPTED', ...(result.reference ? { reference: result.reference } : {}) });
    }
  };

  const operationAnswers = { 202: CoreAccepted, 400: CoreError, 401: CoreError, 422: CoreError, 500: CoreError, 503: CoreError };

  app.register(
    async (plugin) => {
      const bank = plugin.withTypeProvider<TypeBoxTypeProvider>();
      bank.addHook('onRequest', async (request, reply) => {
        if (!authorized(auth, request.headers.authorization)) {
          return reply.code(401).header('www-authenticate', auth.type === 'basic' ? 'Basic' : 'Bearer').send(coreError('UNAUTHENTICATED', 'Missing or wrong credentials.'));
        }
      });

      bank.post(
        '/v1/entities/:entityId/credit-limit',
        {
          schema: {
            params: Type.Object({ bankId: BankId, entityId: Identifier }),
            headers: OperationHeaders,
            body: CoreCreditLimitRequest,
            response: { 200: CoreCreditLimitApplied, ...operationAnswers },
          },
        },
        async (request, reply) => {
          if (await injectFault(request, reply, true)) return reply;
          const { bankId, entityId } = request.params;
          const key = request.headers['idempotency-key'];
          const result = await banks.exclusive(
            bankId,
            (core) => core.upgradeLimit({ entityId, amount: request.body.amount, allowDecrease: request.body.allowDecrease }, key),
            (r) => r.status === 'succeeded' || key !== undefined,
          );
          return answer(reply, result, (v) => ({ status: 'APPLIED', ...v }));
        },
      );

      bank.post(
        '/v1/cards/physical-upgrades',
        {
          schema: {
            params: Type.Object({ bankId: BankId }),
            headers: OperationHeaders,
            body: CorePhysicalUpgradeRequest,
            response: { 200: CorePhysicalUpgradeApplied, ...operationAnswers },
          },
        },
        async (request, reply) => {
          if (await injectFault(request, reply, true)) return reply;
          const key = request.headers['idempotency-key'];
          const result = await banks.exclusive(
            request.params.bankId,
            (core) => core.upgradeToPhysical(request.body, key),
            (r) => r.status === 'succeeded' || key !== undefined,
          );
          return answer(reply, result, (v) => ({ status: 'APPLIED', cardId: v.cardId, entityId: v.entityId, kitNo: v.kitNo, cardState: v.state }));
        },
      );

      // ── Card lifecycle: every change goes through CoreBank (the transition table), persisted like the rest ──

      const CardParams = Type.Object({ bankId: BankId, cardId: Identifier });
      const EntityParams = Type.Object({ bankId: BankId, entityId: Identifier });
      const readAnswers = { 400: CoreError, 401: CoreError, 422: CoreError, 500: CoreError, 503: CoreError };

      /** A write: one at a time per bank, saved when it changed state or carries a key (its outcome is then kept). */
      const write = <T>(bankId: string, key: string | undefined, apply: (core: CoreBank) => OperationResult<T>) =>
        banks.exclusive(bankId, apply, (r) => r.status === 'succeeded' || key !== undefined);

      /** A read answers 200 with the value or 422 with the refusal; it is never saved. */
      const read = async <T>(reply: FastifyReply, bankId: string, get: (core: CoreBank) => OperationResult<T>, view: (value: T) => unknown) => {
        const result = await banks.exclusive(bankId, get);
        if (result.status === 'succeeded') return reply.code(200).send(view(result.value));
        if (result.status === 'rejected') return reply.code(422).send(coreError(result.code, result.message));
        throw new Error('a read cannot be pending');
      };

      const cardChange = (suffix: string, apply: (core: CoreBank, cardId: string, key: string | undefined, body: unknown) => OperationResult<CardSummary>, body?: typeof CoreBlockRequest) =>
        bank.post(
          `/v1/cards/:cardId/${suffix}`,
          { schema: { params: CardParams, headers: OperationHeaders, ...(body ? { body } : {}), response: { 200: CoreCardApplied, ...operationAnswers } } },
          async (request, reply) => {
            if (await injectFault(request, reply, true)) return reply;
            const key = request.headers['idempotency-key'];
            const result = await write(request.params.bankId, key, (core) => apply(core, request.params.cardId, key, request.body));
            return answer(reply, result, (v) => ({ status: 'APPLIED', ...cardView(v) }));
          },
        );

      cardChange('activation', (core, cardId, key) => core.activateCard({ cardId }, key));
      cardChange('lock', (core, cardId, key) => core.lockCard({ cardId }, key));
      cardChange('unlock', (core, cardId, key) => core.unlockCard({ cardId }, key));
      cardChange('block', (core, cardId, key, body) => core.blockCard({ cardId, reasonCode: (body as CoreBlockRequest).reasonCode }, key), CoreBlockRequest);
      cardChange('fulfilment/advance', (core, cardId, key) => core.advanceFulfilment({ cardId }, key));

      bank.put(
        '/v1/cards/:cardId/preferences',
        { schema: { params: CardParams, headers: OperationHeaders, body: CorePreferencesRequest, response: { 200: CorePreferencesApplied, ...operationAnswers } } },
        async (request, reply) => {
          if (await injectFault(request, reply, true)) return reply;
          const { bankId, cardId } = request.params;
          const key = request.headers['idempotency-key'];
          const result = await write(bankId, key, (core) => core.updatePreferences({ cardId, preferences: request.body.preferences }, key));
          return answer(reply, result, (preferences) => ({ status: 'APPLIED', cardId, preferences }));
        },
      );

      bank.put(
        '/v1/cards/:cardId/pin',
        { schema: { params: CardParams, headers: OperationHeaders, body: CorePinRequest, response: { 200: CorePinApplied, ...operationAnswers } } },
        async (request, reply) => {
          if (await injectFault(request, reply, true)) return reply;
          const { bankId, cardId } = request.params;
          const key = request.headers['idempotency-key'];
          // The core keeps the record of the change; the block is not stored and never answered.
          const result = await write(bankId, key, (core) => core.setPin({ cardId, format: request.body.format, keyId: request.body.keyId }, key));
          return answer(reply, result, (v) => ({ status: 'APPLIED', cardId: v.cardId }));
        },
      );

      bank.get(
        '/v1/card-resolution',
        { schema: { params: Type.Object({ bankId: BankId }), querystring: CardResolutionQuery, headers: OperationHeaders, response: { 200: CoreCardResolution, ...readAnswers } } },
        async (request, reply) => {
          if (await injectFault(request, reply, true)) return reply;
          const { action, ...ref } = request.query;
          const key = request.headers['idempotency-key'];
          return read(reply, request.params.bankId, (core) => core.resolveCardId(ref, action, key), (v) => v);
        },
      );

      bank.get(
        '/v1/cards/:cardId',
        { schema: { params: CardParams, headers: OperationHeaders, response: { 200: CoreCardDetails, ...readAnswers } } },
        async (request, reply) => {
          if (await injectFault(request, reply, true)) return reply;
          return read(reply, request.params.bankId, (core) => core.getCard({ cardId: request.params.cardId }), (v) => {
            const { panMasked, ...rest } = v;
            return { ...rest, maskedPan: panMasked };
          });
        },
      );

      bank.get(
        '/v1/cards/:cardId/preferences',
        { schema: { params: CardParams, headers: OperationHeaders, response: { 200: CorePreferences, ...readAnswers } } },
        async (request, reply) => {
          if (await injectFault(request, reply, true)) return reply;
          const { cardId } = request.params;
          return read(reply, request.params.bankId, (core) => core.getPreferences({ cardId }), (preferences) => ({ cardId, preferences }));
        },
      );

      bank.get(
        '/v1/entities/:entityId/cards',
        { schema: { params: EntityParams, headers: OperationHeaders, response: { 200: CoreCardList, ...readAnswers } } },
        async (request, reply) => {
          if (await injectFault(request, reply, true)) return reply;
          const { entityId } = request.params;
          return read(reply, request.params.bankId, (core) => core.listCards({ entityId }), (cards) => ({ entityId, cards: cards.map(cardView) }));
        },
      );

      bank.get(
        '/v1/entities/:entityId/credit-limit',
        { schema: { params: EntityParams, headers: OperationHeaders, response: { 200: CoreCreditLimit, ...readAnswers } } },
        async (request, reply) => {
          if (await injectFault(request, reply, true)) return reply;
          return read(reply, request.params.bankId, (core) => core.getCreditLimit({ entityId: request.params.entityId }), (v) => v);
        },
      );

      bank.get(
        '/v1/entities/:entityId',
        {
          schema: {
            params: Type.Object({ bankId: BankId, entityId: Identifier }),
            headers: OperationHeaders,
            response: { 200: CoreEntity, 404: CoreError },
          },
        },
        async (request, reply) => {
          if (await injectFault(request, reply, false)) return reply;
          const { bankId, entityId } = request.params;
          const view = await banks.exclusive(bankId, (core) => {
            const entity = core.state.entities.get(entityId);
            return entity ? entityView(entity, core.state.cards.values()) : undefined;
          });
          if (!view) return reply.code(404).send(coreError('ENTITY_NOT_FOUND', `Entity ${entityId} does not exist.`));
          return view;
        },
      );

      bank.get(
        '/v1/health',
        { schema: { params: Type.Object({ bankId: BankId }), headers: OperationHeaders, response: { 200: CoreHealth } } },
        async (request, reply) => {
          if (await injectFault(request, reply, false)) return reply;
          await banks.exclusive(request.params.bankId, () => undefined);
          return { status: 'UP' as const };
        },
      );
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
