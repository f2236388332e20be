// The management API's routes: tenants (create, read, change by merge patch, disable, enable, their cores),
// their users, and operator keys. Problem dialect; each route names its audit action.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  MessageResponse,
  OperatorKeyCreateBody,
  OperatorKeyCreatedResponse,
  OperatorKeyPageResponse,
  OperatorKeyParams,
  PasswordBody,
  TenantCreateBody,
  TenantCreatedResponse,
  TenantIdParams,
  TenantPageResponse,
  TenantPatchBody,
  TenantResponse,
  TenantUserParams,
  UserCreateBody,
  UserPageResponse,
  UserPatchBody,
  UserResponse,
  isOperatorKeyName,
  isUsername,
} from '../../schemas/management.js';
import { PageQuery } from '../../schemas/page.js';
import { Jwks } from '../../schemas/auth.js';
import { looksLikeCompactJwe } from '../crypto/jwe.js';
import { openTenantJwe } from '../crypto/tenant-jwe.js';
import { TenantConfig } from '../../schemas/tenant.js';
import { ConnectorsResponse } from '../../schemas/core-routing.js';
import { Errors } from '../errors.js';
import { domainEvent } from '../events/outbox.js';
import { connectorsView } from '../services/connectors-view.js';
import { OperatorKeyError } from '../services/operator-keys.js';
import { createTenant, encryptionKeys, setTenantStatus, tenantView, updateTenant } from '../services/tenant-admin.js';
import { isTenantId, type Tenant } from '../services/tenants.js';
import { keyCursorOf, pageBounds, pageQueryErrors, type KeyPage } from '../store/key-cursor.js';

const envelope = <T>(result: T) => ({ result, pagination: null });

/** A list's page as the transaction list answers it: `{ result, pagination: { nextCursor } }`. */
const paged = <T>({ items, nextCursor }: KeyPage<T>) => ({ result: items, pagination: { nextCursor } });

/** The page a list's query asks for (key-cursor.ts), or the transaction list's 400 for a bad limit or cursor. */
function boundsOf(query: PageQuery, objectName: string, isKey: (key: string) => boolean) {
  const errors = pageQueryErrors(query, objectName, keyCursorOf(isKey));
  if (errors.length) throw Errors.validation(errors);
  return pageBounds(query);
}

/** The configuration's fields, as a change names them (a patch may only remove fields the schema knows). */
const CONFIG_FIELDS = new Set(Object.keys(TenantConfig.properties));

/**
 * The security event an operator's change raises, as the same change by the tenant's Admin does: committed
 * with the request's audit record in the tenant's trail (only if the answer is 2xx), then delivered to the
 * tenant's channels.
 */
function securityEvent(request: FastifyRequest, type: 'tenant.config-changed' | 'user.created' | 'user.disabled', payload: Record<string, unknown>): void {
  request.outcome = { result: null, event: domainEvent(type, payload) };
}

const managementRoutes: FastifyPluginAsync = async (plain) => {
  const app = plain.withTypeProvider<TypeBoxTypeProvider>();
  const services = app.cardline;

  const tenantOr404 = async (tenantId: string): Promise<Tenant> => {
    const tenant = await services.tenants.get(tenantId);
    if (!tenant) throw Errors.tenantNotFound(tenantId);
    return tenant;
  };
  const viewOf = async (tenantId: string) => tenantView((await services.tenants.stored(tenantId))!);

  /** A password sent for a tenant's user: a JWE to that tenant's key, plain text only where it allows it. */
  const passwordOf = async (request: FastifyRequest, tenant: Tenant, value: string): Promise<string> => {
    if (looksLikeCompactJwe(value)) return openTenantJwe(services, tenant.id, value, request.log, 'password');
    if (!tenant.config.encryption.allowPlaintextPassword) throw Errors.plaintextPassword();
    return value;
  };

  app.get('/health/live', { config: { operator: false } }, async () => ({ status: 'ok' }));

  // Prometheus scrapes without a key, like its exporters: this listener stays on a private network (decision 0070).
  app.get('/metrics', { config: { operator: false } }, async (_request, reply) => {
    reply.type(services.metrics.contentType);
    return services.metrics.text();
  });

  // ── Tenants ──────────────────────────────────────────────────────────────────────────────────────

  app.get('/v1/tenants', {
    schema: { querystring: PageQuery, response: { 200: TenantPageResponse } },
    config: { objectName: 'tenantListRequest', audit: { action: 'tenant.list' } },
    handler: async (request) => {
      const page = await services.tenants.pageStored(boundsOf(request.query, 'tenantListRequest', isTenantId));
      return paged({ items: page.items.map(tenantView), nextCursor: page.nextCursor });
    },
  });

  app.post('/v1/tenants', {
    schema: { body: TenantCreateBody, response: { 201: TenantCreatedResponse } },
    // The configuration may hold connector secrets: fingerprinted under the gateway's key (decision 0175).
    config: { objectName: 'tenantRequest', idempotency: 'sealed', audit: { action: 'tenant.create', target: { tenantId: 'body.id' } } },
    handler: async (request, reply) => {
      const { id, name, config } = request.body;
      if (await services.tenants.stored(id)) throw Errors.business('TENANT_EXISTS', `A tenant '${id}' exists already.`);
      try {
        await createTenant(services, { id, ...(name !== undefined ? { name } : {}), config });
      } catch (err) {
        // Two operators creating the same id at once: the second meets the primary key.
        if ((err as { code?: unknown }).code === '23505') throw Errors.business('TENANT_EXISTS', `A tenant '${id}' exists already.`);
        throw err;
      }
      reply.code(201);
      return envelope({ tenant: await viewOf(id), encryptionKeys: { keys: await encryptionKeys(services, id) } });
    },
  });

  app.get('/v1/tenants/:tenantId', {
    schema: { params: TenantIdParams, response: { 200: TenantResponse } },
    config: { audit: { action: 'tenant.read', target: { tenantId: 'params.tenantId' } } },
    handler: async (request) => {
      const stored = await services.tenants.stored(request.params.tenantId);
      if (!stored) throw Errors.tenantNotFound(request.params.tenantId);
      return envelope(tenantView(stored));
    },
  });

  app.patch('/v1/tenants/:tenantId', {
    schema: { params: TenantIdParams, body: TenantPatchBody, response: { 200: TenantResponse } },
    config: { objectName: 'tenantPatch', idempotency: 'sealed', audit: { action: 'tenant.update', target: { tenantId: 'params.tenantId' } } },
    handler: async (request) => {
      const { tenantId } = request.params;
      if (!(await updateTenant(services, tenantId, request.body))) throw Errors.tenantNotFound(tenantId);
      // The tenant's channels hear of it, as of a change its own Admin makes (tenant.config-changed).
      const changed = [...(request.body.name !== undefined ? ['name'] : []), ...Object.keys(request.body.config ?? {}).filter((k) => CONFIG_FIELDS.has(k))].sort();
      if (changed.length) securityEvent(request, 'tenant.config-changed', { tenantId, changed });
      return envelope(await viewOf(tenantId));
    },
  });

  app.get('/v1/tenants/:tenantId/keys', {
    schema: { params: TenantIdParams, response: { 200: Jwks } },
    config: { audit: { action: 'tenant.keys', target: { tenantId: 'params.tenantId' } } },
    // What passwords for the tenant's users are encrypted to (the same set as its GET /api/keys).
    handler: async (request) => ({ keys: await encryptionKeys(services, (await tenantOr404(request.params.tenantId)).id) }),
  });

  // Each of the tenant's cores as its Admin sees them on GET /v1/admin/connectors (decision 0113, 0115):
  // offer, routes, shadow, breaker, and calls over the last five minutes of this gateway process.
  app.get('/v1/tenants/:tenantId/connectors', {
    schema: { params: TenantIdParams, response: { 200: ConnectorsResponse } },
    config: { audit: { action: 'tenant.connectors', target: { tenantId: 'params.tenantId' } } },
    handler: async (request) => envelope(await connectorsView(services, await tenantOr404(request.params.tenantId))),
  });

  for (const [verb, status] of [['disable', 'disabled'], ['enable', 'active']] as const) {
    app.post(`/v1/tenants/:tenantId/${verb}`, {
      schema: { params: TenantIdParams, response: { 200: TenantResponse } },
      config: { audit: { action: `tenant.${verb}`, target: { tenantId: 'params.tenantId' } } },
      handler: async (request) => {
        const { tenantId } = request.params;
        if (!(await setTenantStatus(services, tenantId, status))) throw Errors.tenantNotFound(tenantId);
        return envelope(await viewOf(tenantId));
      },
    });
  }

  // ── A tenant's users (its first Admin; recovery when no Admin of its own can act) ─────────────────

  app.get('/v1/tenants/:tenantId/users', {
    schema: { params: TenantIdParams, querystring: PageQuery, response: { 200: UserPageResponse } },
    config: { objectName: 'userListRequest', audit: { action: 'user.list', target: { tenantId: 'params.tenantId' } } },
    handler: async (request) => {
      const bounds = boundsOf(request.query, 'userListRequest', isUsername);
      return paged(await services.users.page((await tenantOr404(request.params.tenantId)).id, bounds));
    },
  });

  app.post('/v1/tenants/:tenantId/users', {
    schema: { params: TenantIdParams, body: UserCreateBody, response: { 201: UserResponse } },
    config: { objectName: 'userRequest', idempotency: 'sealed', audit: { action: 'user.create', target: { tenantId: 'params.tenantId', username: 'body.username' } } },
    handler: async (request, reply) => {
      const tenant = await tenantOr404(request.params.tenantId);
      const { username, role } = request.body;
      const password = await passwordOf(request, tenant, request.body.password);
      const user = await services.users.create(tenant.id, username, role, password);
      securityEvent(request, 'user.created', { username: user.username, role: user.role });
      reply.code(201);
      return envelope(user);
    },
  });

  app.patch('/v1/tenants/:tenantId/users/:username', {
    schema: { params: TenantUserParams, body: UserPatchBody, response: { 200: UserResponse } },
    config: { objectName: 'userPatch', audit: { action: 'user.update', target: { tenantId: 'params.tenantId', username: 'params.username' } } },
    handler: async (request) => {
      const tenant = await tenantOr404(request.params.tenantId);
      const user = await services.users.update(tenant.id, request.params.username, request.body);
      if (request.body.disabled === true) securityEvent(request, 'user.disabled', { username: user.username, by: request.operator?.name ?? null });
      return envelope(user);
    },
  });

  app.post('/v1/tenants/:tenantId/users/:username/unlock', {
    schema: { params: TenantUserParams, response: { 200: UserResponse } },
    config: { audit: { action: 'user.unlock', target: { tenantId: 'params.tenantId', username: 'params.username' } } },
    handler: async (request) => {
      const tenant = await tenantOr404(request.params.tenantId);
      return envelope(await services.users.unlock(tenant.id, request.params.username));
    },
  });

  app.put('/v1/tenants/:tenantId/users/:username/password', {
    schema: { params: TenantUserParams, body: PasswordBody, response: { 200: MessageResponse } },
    config: { objectName: 'passwordRequest', idempotency: 'sealed', audit: { action: 'user.password-reset', target: { tenantId: 'params.tenantId', username: 'params.username' } } },
    handler: async (request) => {
      const tenant = await tenantOr404(request.params.tenantId);
      const { username } = request.params;
      await services.users.setPassword(tenant.id, username, await passwordOf(request, tenant, request.body.password));
      return envelope({ message: `Password of '${username}' set; its tokens are revoked` });
    },
  });

  app.delete('/v1/tenants/:tenantId/users/:username', {
    schema: { params: TenantUserParams, response: { 200: MessageResponse } },
    config: { audit: { action: 'user.remove', target: { tenantId: 'params.tenantId', username: 'params.username' } } },
    handler: async (request) => {
      const tenant = await tenantOr404(request.params.tenantId);
      await services.users.remove(tenant.id, request.params.username);
      return envelope({ message: `User '${request.params.username}' removed` });
    },
  });

  // ── Operator keys ─────────────────────────────────────────────────────────────────────────────────

  app.get('/v1/operator-keys', {
    schema: { querystring: PageQuery, response: { 200: OperatorKeyPageResponse } },
    config: { objectName: 'operatorKeyListRequest', audit: { action: 'operator-key.list' } },
    handler: async (request) => paged(await services.operatorKeys.page(boundsOf(request.query, 'operatorKeyListRequest', isOperatorKeyName))),
  });

  app.post('/v1/operator-keys', {
    schema: { body: OperatorKeyCreateBody, response: { 201: OperatorKeyCreatedResponse } },
    // The new key, shown once: a retry with the Idempotency-Key gets it again, stored sealed (decision 0175).
    config: { objectName: 'operatorKeyRequest', idempotency: 'sealed', audit: { action: 'operator-key.create', target: { name: 'body.name' } } },
    handler: async (request, reply) => {
      try {
        const { key, view } = await services.operatorKeys.create(request.body.name);
        reply.code(201);
        return envelope({ key, operatorKey: view });
      } catch (err) {
        if (err instanceof OperatorKeyError) throw Errors.business('OPERATOR_KEY_EXISTS', err.message);
        throw err;
      }
    },
  });

  app.delete('/v1/operator-keys/:name', {
    schema: { params: OperatorKeyParams, response: { 200: MessageResponse } },
    config: { audit: { action: 'operator-key.revoke', target: { name: 'params.name' } } },
    handler: async (request) => {
      if (!(await services.operatorKeys.revoke(request.params.name))) throw Errors.operatorKeyNotFound(request.params.name);
      return envelope({ message: `Operator key '${request.params.name}' revoked` });
    },
  });
};

export default managementRoutes;
