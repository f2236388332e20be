// Configuration fails fast, naming the variable at fault.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('config', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      logLevel: 'info',
      databaseUrl: undefined,
      demo: false,
      issuer: 'cardline',
      audience: 'cardline-api',
      problemBaseUrl: 'https://www.jhipster.tech/problem',
    });
    expect(c.dataDir.endsWith('/data')).toBe(true);
  });

  it.each([
    [{ PORT: 'abc' }, /PORT must be a whole number/],
    [{ PORT: '70000' }, /PORT must be between 0 and 65535/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL must be a postgres/],
    [{ CARDLINE_MASTER_KEY: 'short' }, /CARDLINE_MASTER_KEY must be 32 random bytes/],
    [{ CARDLINE_DEMO: 'yes' }, /CARDLINE_DEMO must be 1\/true or 0\/false/],
  ])('%j is refused', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('strips a trailing slash from the problem base URL', () => {
    expect(loadConfig({ CARDLINE_PROBLEM_BASE_URL: 'https://errors.example.com/p/' }).problemBaseUrl).toBe('https://errors.example.com/p');
  });
});
