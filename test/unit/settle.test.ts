// settle() ends a callback-style pipeline hook with its step's work (decision 0403): once, with the step's error.
import { describe, expect, it } from 'vitest';
import { Errors } from '../../src/errors.js';
import { settle } from '../../src/step-errors.js';

const settled = (work: Promise<unknown>) => new Promise<unknown[]>((resolve) => settle(work, (...args) => resolve(args)));

describe('settle', () => {
  it('ends the hook without an error when the work succeeds, whatever it returns', async () => {
    expect(await settled(Promise.resolve('ignored'))).toEqual([]);
  });

  it("passes the step's own error on, so the route answers it", async () => {
    const err = Errors.idempotencyKeyInvalid();
    const [got] = await settled(Promise.reject(err));
    expect(got).toBe(err);
  });

  it('fails the request even when the work rejects without an Error', async () => {
    const [got] = await settled(Promise.reject(undefined));
    expect(got).toBeInstanceOf(Error);
    expect((got as Error).message).toBe('a pipeline step failed: undefined');
  });
});
