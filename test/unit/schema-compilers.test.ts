// Route schemas compiled once per process, at first use (src/schema-compilers.ts): a second app registering the
// same schema object gets the validator the first one compiled; another schema, or the same one with other
// options, is compiled anew; validation answers as before; every route's schemas compile.
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { compilePending, compilersFactory } from '../../src/schema-compilers.js';
import { createTestApp } from '../helpers/app.js';

const BODY = { type: 'object', required: ['amount'], properties: { amount: { type: 'string', pattern: '^[0-9]+\\.[0-9]{2}$' } }, additionalProperties: false } as const;
const ANSWER = { 200: { type: 'object', properties: { ok: { type: 'boolean' } } } } as const;

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

/** An app with one route on `schema`; its handler answers and hands the route's body validator to `seen`. */
async function app(schema: object, seen: (fn: unknown) => void, customOptions = { allErrors: true }): Promise<FastifyInstance> {
  const a = Fastify({ schemaController: { compilersFactory }, ajv: { customOptions } });
  a.post('/x', { schema: { body: schema, response: ANSWER } }, async (request: FastifyRequest) => {
    seen(request.getValidationFunction('body'));
    return { ok: true, extra: 'dropped by the serializer' };
  });
  await a.ready();
  apps.push(a);
  return a;
}

const post = (a: FastifyInstance, payload: unknown) => a.inject({ method: 'POST', url: '/x', payload: payload as object });

describe('compilersFactory', () => {
  it('a second app on the same schema object reuses its validator; another schema or other options compile anew', async () => {
    const fns: unknown[] = [];
    const first = await app(BODY, (fn) => fns.push(fn));
    const second = await app(BODY, (fn) => fns.push(fn));
    const copy = await app(structuredClone(BODY), (fn) => fns.push(fn));
    const otherOptions = await app(BODY, (fn) => fns.push(fn), { allErrors: false });
    for (const a of [first, second, copy, otherOptions]) {
      const res = await post(a, { amount: '10.00' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ ok: true });
    }
    expect(fns).toHaveLength(4);
    expect(typeof fns[0]).toBe('function');
    expect(fns[1]).toBe(fns[0]);
    expect(fns[2]).not.toBe(fns[0]);
    expect(fns[3]).not.toBe(fns[0]);
  });

  it('validation refuses as Fastify does, in every app sharing the validator', async () => {
    for (const a of [await app(BODY, () => undefined), await app(BODY, () => undefined)]) {
      const res = await post(a, { amount: '10' });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'FST_ERR_VALIDATION', message: 'body/amount must match pattern "^[0-9]+\\.[0-9]{2}$"' });
    }
  });

  it('compiles a schema at its first use, not when the app is ready', async () => {
    const a = await app(structuredClone(BODY), () => undefined);
    // The new body schema's validator, at least, waits (the answer's serializer is the earlier tests').
    expect(compilePending()).toBeGreaterThanOrEqual(1);
    expect(compilePending()).toBe(0);
    expect((await post(a, { amount: '10.00' })).json()).toEqual({ ok: true });
  });

  it("every route's schemas compile, the gateway's and the management listener's", async () => {
    const t = await createTestApp();
    try {
      await t.management();
      compilePending();
      expect(compilePending()).toBe(0);
    } finally {
      await t.close();
    }
  });
});
