// Errors of the store (PGlite or PostgreSQL) keep what an operator needs — SQLSTATE, severity, table, column,
// constraint — and never the statement's parameters or row data, so no log line can carry what a caller typed.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loggerOptions } from '../../src/logging.js';
import { StoreError } from '../../src/store/db.js';
import { PROBLEM_BASE, createTestApp, type TestApp } from '../helpers/app.js';

const MARKER = `Typed-By-Caller-${Math.random().toString(36).slice(2, 10)}`;

let t: TestApp;
const lines: string[] = [];
beforeAll(async () => {
  const stream = { write: (chunk: string) => void lines.push(chunk) };
  t = await createTestApp({ env: { LOG_LEVEL: 'trace' }, logger: pino(loggerOptions('trace'), stream) });
});
afterAll(() => t?.close());

describe('a store error', () => {
  it('a refused audit insert: the caller gets a 500, the log names the constraint, and no log line holds the row', async () => {
    await t.db.exec(`ALTER TABLE audit_log ADD CONSTRAINT test_no_marker CHECK (actor IS NULL OR position('Typed-By-Caller' in actor) = 0)`);
    try {
      const res = await t.inject({
        method: 'POST',
        url: '/api/authenticate',
        headers: { TENANT: 'demo', 'x-request-id': 'store-error-1' },
        payload: { username: MARKER, password: 'not-encrypted' },
      });
      expect(res.statusCode).toBe(500);
      expect(res.json()).toMatchObject({ type: `${PROBLEM_BASE}/problem-with-message`, status: 500, message: 'error.http.500' });
    } finally {
      await t.db.exec('ALTER TABLE audit_log DROP CONSTRAINT test_no_marker');
    }
    const text = lines.join('');
    const errorLine = text.split('\n').find((l) => l.includes('audit record could not be committed'));
    expect(errorLine).toBeDefined();
    expect(JSON.parse(errorLine!).err).toMatchObject({ type: 'StoreError', code: '23514', table: 'audit_log', constraint: 'test_no_marker' });
    expect(text).not.toContain(MARKER);
  });

  it('a refused parameter: the message keeps no value, the SQLSTATE stays', async () => {
    const err = await t.db.query('SELECT $1::integer AS n', [MARKER]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect(err).toMatchObject({ code: '22P02', severity: 'ERROR' });
    expect(JSON.stringify({ ...(err as object), message: (err as Error).message, stack: (err as Error).stack })).not.toContain(MARKER);
    expect((err as StoreError).message).toBe('The store refused the statement: SQLSTATE 22P02 (data exception).');
  });

  it('inside a transaction too', async () => {
    const err = await t.db.transaction((tx) => tx.query('SELECT $1::uuid AS id', [MARKER])).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'StoreError', code: '22P02' });
    expect(JSON.stringify({ ...(err as object), message: (err as Error).message })).not.toContain(MARKER);
  });
});
