// The README's SDK quickstart runs as written, against a gateway listening on loopback: its import is the
// SDK's, its URL the test gateway's, its password the test users'.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cardline } from '@cardline/sdk';
import { PASSWORD, createTestApp, type TestApp } from '../helpers/app.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The ```ts block after the with-the-sdk marker. */
function quickstart(): string {
  const at = README.indexOf('<!-- with-the-sdk:');
  const block = /```ts\n([\s\S]*?)```/.exec(README.slice(at));
  if (at < 0 || !block) throw new Error('README.md has no SDK quickstart block after <!-- with-the-sdk: -->');
  return block[1]!;
}

describe('README SDK quickstart', () => {
  let t: TestApp;
  let baseUrl: string;
  beforeAll(async () => {
    t = await createTestApp();
    baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => t.close());

  it('is four lines of code that upgrade a limit', async () => {
    const code = quickstart();
    const lines = code.split('\n').filter((l) => l.trim() && !l.trim().startsWith('//'));
    expect(lines).toHaveLength(4);
    expect(lines[0]).toBe("import { Cardline } from '@cardline/sdk';");
    const body = lines.slice(1).join('\n').replace("'http://localhost:8080'", JSON.stringify(baseUrl));
    const printed: unknown[] = [];
    const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (...args: string[]) => (...a: unknown[]) => Promise<void>;
    await new AsyncFunction('Cardline', 'process', 'console', body)(Cardline, { env: { CARDLINE_DEMO_PASSWORD: PASSWORD } }, { log: (v: unknown) => printed.push(v) });
    expect(printed).toEqual([{ result: true, exception: null, pagination: null }]);
    const viewer = new Cardline({ baseUrl, tenant: 'demo' });
    await viewer.login('viewer', PASSWORD);
    expect(await viewer.creditLimit.read({ entityId: 'ENT-1001' })).toMatchObject({ result: { creditLimit: '75000.00' } });
  });
});
