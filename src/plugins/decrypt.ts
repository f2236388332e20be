// Decrypts what arrives encrypted before validation (preValidation), so the schema sees plaintext: whole
// bodies (Content-Type: application/jose) and JWE fields: the route's encrypted fields, which the registrar computes
// from its operation (declared paths and the body schema's fields marked sensitive, src/plugins/register.ts).
import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { CardlineError, Errors } from '../errors.js';
import { looksLikeCompactJwe } from '../crypto/jwe.js';
import { openTenantJwe } from '../crypto/tenant-jwe.js';
import type { KeySource } from '../crypto/keys.js';
import { onboardingKeySource } from '../crypto/onboarding-key.js';
import { PLATFORM_TENANT } from '../services/tenancy/tenants.js';
import type { Tenant } from '../services/tenancy/tenants.js';
import { declareErrors, errorCase, isManagement, settle, takesBody } from '../step-errors.js';
import { parseStrictJson } from './strict-json.js';
import { inStep } from './tracing.js';

const JOSE_MEDIA_TYPE = 'application/jose';

/** What this step answers: public writes, management writes naming a tenant, and a new tenant's encrypted fields. */
export const decryptErrors = declareErrors('decrypt', (op) =>
  takesBody(op) && (!isManagement(op) || op.tenantParam !== undefined || !!op.encryptedFields?.length)
    ? [errorCase('encrypted-payload', 'An encrypted body or field could not be processed', Errors.encryptedPayload())]
    : [],
);

/** A body that arrived as application/jose: the compact JWE, held until preValidation decrypts it. */
class EncryptedBody {
  constructor(readonly compact: string) {}
}

/** `a.b[].c` → ['a', 'b', '[]', 'c']. */
const segmentsOf = (path: string): string[] => path.split('.').flatMap((p) => (p.endsWith('[]') ? [p.slice(0, -2), '[]'] : [p])).filter(Boolean);

/** Every (container, key) at which the path ends in the body, so the value can be replaced in place. */
function slotsOf(body: unknown, segments: string[]): { holder: Record<string, unknown> | unknown[]; key: string | number }[] {
  let level: { holder: Record<string, unknown> | unknown[]; key: string | number }[] = [{ holder: { body }, key: 'body' }];
  for (const segment of segments) {
    const next: typeof level = [];
    for (const { holder, key } of level) {
      const value = (holder as Record<string | number, unknown>)[key];
      if (segment === '[]') {
        if (Array.isArray(value)) value.forEach((_, i) => next.push({ holder: value, key: i }));
      } else if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, segment)) {
        next.push({ holder: value as Record<string, unknown>, key: segment });
      }
    }
    level = next;
  }
  return level;
}

/** A route pattern of encryption.requireEncryptedBody, compiled: parameter names do not matter. */
interface RoutePattern {
  method: string | null;
  path: string;
  prefix: boolean;
}

const normalisePath = (path: string): string => path.replace(/\/(?::[^/]+|\{[^}/]+\})/g, '/:');

function compile(entry: string): RoutePattern {
  if (entry === '*') return { method: null, path: '/', prefix: true };
  const [method, rawPath] = entry.includes(' ') ? (entry.split(' ', 2) as [string, string]) : [null, entry];
  const prefix = rawPath.endsWith('*');
  return { method, path: normalisePath(prefix ? rawPath.slice(0, -1) : rawPath), prefix };
}

const compiled = new WeakMap<readonly string[], RoutePattern[]>();

/** Whether the tenant's policy requires this route's body to arrive encrypted. */
function requiresEncryptedBody(tenant: Tenant, method: string, routeUrl: string): boolean {
  const entries = tenant.config.encryption.requireEncryptedBody;
  if (!entries?.length) return false;
  let patterns = compiled.get(entries);
  if (!patterns) compiled.set(entries, (patterns = entries.map(compile)));
  const url = normalisePath(routeUrl);
  return patterns.some((p) => (!p.method || p.method === method) && (p.prefix ? url.startsWith(p.path) : url === p.path));
}

interface DecryptOptions {
  /** Whether `encryption.requireEncryptedBody` applies (default true): the tenant's API only, not the operator's. */
  tenantPolicy?: boolean;
  /** Fields of a request naming no tenant (a new tenant's first Admin) open with the onboarding key, never in clear. */
  onboarding?: boolean;
}

const decryptPlugin: FastifyPluginAsync<DecryptOptions> = async (app, opts) => {
  const tenantPolicy = opts.tenantPolicy ?? true;
  // The raw compact JWE is kept until preValidation, where the tenant is known (and auth has run).
  app.addContentTypeParser(JOSE_MEDIA_TYPE, { parseAs: 'string' }, (_request, body, done) => {
    done(null, new EncryptedBody(String(body).trim()));
  });

  const open = (request: FastifyRequest, tenant: Tenant | null, compact: string, what: string): Promise<string> =>
    inStep(
      request,
      'decrypt',
      () =>
        tenant
          ? openTenantJwe(app.cardline, tenant.id, compact, request.log, what)
          : openTenantJwe({ keys: onboardingKeys(), replay: app.cardline.replay }, PLATFORM_TENANT, compact, request.log, what),
      { 'cardline.field': what },
    );
  let onboardingSource: KeySource | undefined;
  const onboardingKeys = () => (onboardingSource ??= onboardingKeySource(app.cardline.onboardingKey));

  /** The tenant's policy refusing a plain body on this route, if it does. */
  const plainBodyRefusal = (request: FastifyRequest, tenant: Tenant | null): CardlineError | undefined => {
    const route = request.routeOptions.url ?? request.url;
    return tenantPolicy && tenant && request.body !== undefined && requiresEncryptedBody(tenant, request.method, route)
      ? Errors.encryptedBodyRequired(`${request.method} ${route}`)
      : undefined;
  };

  app.addHook('preValidation', (request, _reply, done) => {
    if (request.body instanceof EncryptedBody || request.routeOptions.config.encryptedFields?.length) return settle(opened(request), done);
    // A plain body on a route without encryptable fields: only the tenant's policy may refuse it, nothing to wait for.
    done(plainBodyRefusal(request, request.ctx.tenant));
  });

  const opened = async (request: FastifyRequest): Promise<void> => {
    const tenant = request.ctx.tenant;
    const config = request.routeOptions.config;
    let bodyEncrypted = false;

    if (request.body instanceof EncryptedBody) {
      if (!tenant) throw Errors.encryptedPayload();
      const plaintext = await open(request, tenant, request.body.compact, 'body');
      // The plaintext gets exactly the checks a JSON body gets; its errors are the JSON body's errors.
      request.body = parseStrictJson(plaintext);
      bodyEncrypted = true;
    } else {
      const refusal = plainBodyRefusal(request, tenant);
      if (refusal) throw refusal;
    }

    const fields = config.encryptedFields;
    if (!fields?.length || (!tenant && !opts.onboarding)) return;
    const body = request.body;
    if (body === null || typeof body !== 'object') return;
    for (const { field, required } of fields) {
      for (const { holder, key } of slotsOf(body, segmentsOf(field))) {
        const value = (holder as Record<string | number, unknown>)[key];
        if (typeof value !== 'string') continue;
        if (!looksLikeCompactJwe(value)) {
          // Without a tenant (a new one's first Admin) there is no policy that could allow plain text.
          if (!tenant) throw Errors.plaintextOnboardingPassword();
          // A value inside an encrypted body travelled encrypted: the requirement is met.
          if (!bodyEncrypted && required?.(tenant)) throw plaintextRefusal(field);
          continue;
        }
        (holder as Record<string | number, unknown>)[key] = await open(request, tenant, value, field);
      }
    }
  };
};

const plaintextRefusal = (field: string): CardlineError => (field === 'password' ? Errors.plaintextPassword() : Errors.plaintextField(field));

// After the listener's authentication step (auth, or operator-auth on the management listener).
export default fp(decryptPlugin, { name: 'decrypt', dependencies: ['request-context', 'strict-json'] });
