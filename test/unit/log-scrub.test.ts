// The log line's masking (decision 0207): secrets masked by key at any depth (pino's redaction by path is gone),
// and scrub()'s quick test never lets through what the full masking would have changed.
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { maskCardNumbers } from '../../connectors/shared/pan.js';
import { loggerOptions, scrub } from '../../src/logging.js';

/** scrub() without its quick test: what it masked before decision 0207. */
const fullScrub = (value: string) => maskCardNumbers(value.replace(/eyJ[\w-]*\.[\w.-]+/g, '[REDACTED-JOSE]'), { luhnOnly: false });

function lines(write: (log: pino.Logger) => void): Record<string, unknown>[] {
  const out: string[] = [];
  const log = pino(loggerOptions('info'), new Writable({ write: (chunk: Buffer, _enc, done) => (out.push(chunk.toString()), done()) }));
  write(log);
  return out.map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('log masking', () => {
  it('scrub() changes exactly what the full masking changes, for any text of digits, separators and JOSE-like parts', () => {
    const piece = fc.constantFrom('0', '1', '4', '9', ' ', '-', '.', 'a', 'Z', '_', 'eyJ', 'eyJhbGciOi.', '4111 1111', '-1111-');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }).map((p) => p.join('')), (text) => {
        expect(scrub(text)).toBe(fullScrub(text));
      }),
      { numRuns: 5_000 },
    );
    expect(scrub('4111 1111 1111 1111')).toBe(fullScrub('4111 1111 1111 1111'));
    expect(scrub('4111 1111 1111 1111')).not.toContain('1111 1111 1111');
    expect(scrub('/credit-line-management/business-entity-manager/upgradeLimit')).toBe('/credit-line-management/business-entity-manager/upgradeLimit');
  });

  it('credentials are masked by key at any depth, as the former redaction paths did and deeper', () => {
    const [line] = lines((log) =>
      log.info(
        {
          req: { headers: { authorization: 'Bearer abc', cookie: 'session=1', host: 'x' } },
          headers: { authorization: 'Basic xyz' },
          token: 'plain-token',
          result: { id_token: 'tok', password: 'p', nested: { privateKey: 'k', masterKey: 'm', pan: '4111111111111111' } },
        },
        'with secrets',
      ),
    );
    expect(line).toMatchObject({
      req: { headers: { authorization: '[REDACTED]', cookie: '[REDACTED]', host: 'x' } },
      headers: { authorization: '[REDACTED]' },
      token: '[REDACTED]',
      result: { id_token: '[REDACTED]', password: '[REDACTED]', nested: { privateKey: '[REDACTED]', masterKey: '[REDACTED]', pan: '[REDACTED]' } },
      msg: 'with secrets',
    });
  });

  it('the request line keeps its fields as they are', () => {
    const [line] = lines((log) =>
      log.info({ requestId: 'r-1', method: 'POST', route: '/a/b', status: 200, ms: 3, tenant: 'demo' }, 'request completed'),
    );
    expect(line).toMatchObject({ requestId: 'r-1', method: 'POST', route: '/a/b', status: 200, ms: 3, tenant: 'demo', msg: 'request completed' });
  });

  it("a W3C trace id whose digits run 13 or more in a row, Luhn-valid, is kept whole; a card number in a field of that name that is not one is masked", () => {
    // A random trace id as the tracing mixin adds it: 46989303040478 is 14 digits and passes Luhn; it was masked
    // to 469893****0478, and the request's log line no longer named its trace.
    const traceId = '46989303040478d9f6d6a3dbec80a15a';
    const spanId = '4111111111111111';
    const [kept, masked] = lines((log) => {
      log.info({ requestId: 'r-1', trace_id: traceId, span_id: spanId }, 'request completed');
      log.info({ trace_id: 'card 4111111111111111', span_id: '4111 1111 1111 1111' }, 'not ids');
    });
    expect(kept).toMatchObject({ requestId: 'r-1', trace_id: traceId, span_id: spanId });
    expect(JSON.stringify(masked)).not.toMatch(/4111111111111111|4111 1111 1111 1111/);
    expect(masked!.trace_id).toBe(fullScrub('card 4111111111111111'));
  });
});

describe('audit masking (Luhn-valid runs only)', () => {
  // A key id whose last groups join into a Luhn-valid 13-digit run ("0-394298183903"): it was masked in an
  // audit record's target, one run in several hundred.
  const kid = '6afb9a42-4a98-4c4e-b5b0-394298183903';

  it('keeps a UUID whole, whatever its digits add up to', () => {
    expect(maskCardNumbers(`{"kid":"${kid}"}`, { luhnOnly: true })).toBe(`{"kid":"${kid}"}`);
  });

  it('still masks a card number beside it, and logs still mask every long run', () => {
    expect(maskCardNumbers(`${kid} paid with 4000000000000002`, { luhnOnly: true })).toBe(`${kid} paid with 400000******0002`);
    expect(maskCardNumbers(kid, { luhnOnly: false })).toBe('6afb9a42-4a98-4c4e-b5b039429***3903');
  });
});
