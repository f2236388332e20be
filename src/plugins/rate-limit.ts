// Request limits per tenant and per user (DESIGN §7), from each tenant's configuration, counted by
// @fastify/rate-limit in-process or, when REDIS_URL is set, in Redis so that every replica shares them.
import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import { Errors } from '../errors.js';
import { declareErrors, errorCase, settle } from '../step-errors.js';
import { inStep } from './tracing.js';

/** What this step answers: on every public-API operation that needs a token (it counts authenticated callers only). */
export const rateLimitErrors = declareErrors('rate-limit', (op) =>
  op.access === 'public' || op.access === 'operator'
    ? []
    : [errorCase('rate-limited', "The user's or the tenant's rate limit is reached", Errors.tooManyRequests("Tenant 'demo' has reached its limit of 600 requests per minute; retry in 42 s.", 42))],
);

const RATE_LIMIT_WINDOW_MS = 60_000;

interface Counting {
  key: string;
  max: number;
}

type Outcome = { max: number; remaining: number; resetSeconds: number; exceeded: boolean };

const rateLimitPlugin: FastifyPluginAsync = async (app) => {
  const { redis, config } = app.cardline;
  // @fastify/rate-limit takes the key and the maximum from the request; this says which counter is asked.
  const counting = new WeakMap<FastifyRequest, Counting>();
  await app.register(rateLimit, {
    global: false,
    timeWindow: RATE_LIMIT_WINDOW_MS,
    keyGenerator: (request) => counting.get(request)!.key,
    max: (request) => counting.get(request)!.max,
    // A limiter that cannot count lets requests through: it protects capacity, it is not access control.
    skipOnError: true,
    // In-process: one entry per tenant and per active user; the least recently used are forgotten first.
    cache: 50_000,
    ...(redis ? { redis, nameSpace: `${config.redisPrefix}rate-limit:` } : {}),
  });
  const limiter = app.createRateLimit();
  // A route-level limit would bypass the tenant's limits and counters, so a route declaring one does not start.
  app.addHook('onRoute', (route) => {
    if (route.config?.rateLimit !== undefined) {
      throw new Error(`Route ${String(route.method)} ${route.url} declares config.rateLimit; limits are set per tenant (rateLimit in its configuration)`);
    }
  });

  const count = async (request: FastifyRequest, key: string, max: number): Promise<Outcome> => {
    counting.set(request, { key, max });
    const r = await limiter(request);
    if (r.isAllowed) return { max, remaining: max, resetSeconds: 0, exceeded: false };
    return { max, remaining: r.remaining, resetSeconds: Math.max(1, r.ttlInSeconds), exceeded: r.isExceeded };
  };

  const headers = (reply: FastifyReply, o: Outcome) => {
    reply.header('x-ratelimit-limit', o.max);
    reply.header('x-ratelimit-remaining', o.exceeded ? 0 : o.remaining);
    reply.header('x-ratelimit-reset', o.resetSeconds);
  };

  // After authentication, so only authenticated callers spend a tenant's budget; login is limited by lockout (DESIGN §7).
  app.addHook('onRequest', (request, reply, done) => {
    const { tenant, principal } = request.ctx;
    const limits = tenant?.config.rateLimit;
    if (!tenant || !principal || !limits) return done();
    settle(inStep(request, 'rate-limit', async () => {
      const outcomes: Outcome[] = [];
      // The user's own limit first: a user already over it does not spend the tenant's budget too.
      if (limits.perUserPerMinute) {
        const o = await count(request, `user:${tenant.id}:${principal.sub}`, limits.perUserPerMinute);
        if (o.exceeded) {
          headers(reply, o);
          throw Errors.tooManyRequests(
            `User '${principal.sub}' has reached the limit of ${o.max} requests per minute; retry in ${o.resetSeconds} s.`,
            o.resetSeconds,
          );
        }
        outcomes.push(o);
      }
      if (limits.perTenantPerMinute) {
        const o = await count(request, `tenant:${tenant.id}`, limits.perTenantPerMinute);
        if (o.exceeded) {
          headers(reply, o);
          throw Errors.tooManyRequests(
            `Tenant '${tenant.id}' has reached its limit of ${o.max} requests per minute; retry in ${o.resetSeconds} s.`,
            o.resetSeconds,
          );
        }
        outcomes.push(o);
      }
      // The headers describe whichever limit is closer to being reached.
      const tightest = outcomes.reduce<Outcome | undefined>((a, o) => (!a || o.remaining < a.remaining ? o : a), undefined);
      if (tightest) headers(reply, tightest);
    }), done);
  });
};

export default fp(rateLimitPlugin, { name: 'rate-limit', dependencies: ['services', 'errors', 'auth'] });
