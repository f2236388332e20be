// The demo's log on a terminal: pretty lines (pino-pretty) instead of JSON, after the same masking, so that a
// secret the JSON line hides is hidden on the terminal too; anywhere else the lines stay JSON.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loggerOptions, prettyLogStream, wantsPrettyLogs } from '../../src/logging.js';

describe('pretty demo logs', () => {
  it('are chosen for the demo on a terminal only', () => {
    expect(wantsPrettyLogs(true, true)).toBe(true);
    expect(wantsPrettyLogs(true, false)).toBe(false);
    expect(wantsPrettyLogs(true, undefined)).toBe(false);
    expect(wantsPrettyLogs(false, true)).toBe(false);
  });

  it('print one readable line per entry, its secrets masked as in the JSON line', async () => {
    const out: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => (out.push(chunk.toString()), done()) });
    const log = pino(loggerOptions('info'), await prettyLogStream(sink));
    log.info(
      { tenant: 'demo', password: 'demo-password-1', headers: { authorization: 'Bearer clop_secret-operator-key' }, note: 'card 4111 1111 1111 1111' },
      'Server listening at http://127.0.0.1:8080 for eyJhbGciOiJFQ0RILUVTIn0.abc.def',
    );
    const text = out.join('');
    expect(text).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: Server listening at http:\/\/127\.0\.0\.1:8080 for \[REDACTED-JOSE\]\n/);
    expect(text).toContain('tenant: "demo"');
    expect(() => JSON.parse(text.split('\n')[0]!)).toThrow();
    for (const secret of ['demo-password-1', 'clop_secret-operator-key', '4111 1111 1111 1111', 'eyJhbGciOiJFQ0RILUVTIn0']) expect(text).not.toContain(secret);
  });
});
