// The README's SDK quickstart and its CardlineAdmin example run as written, against a gateway listening on
// loopback: their import is the SDK's, their URLs the test gateway's listeners, the password the test users',
// the operator key a fresh one.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cardline, CardlineAdmin } from '@cardline/sdk';
import { PASSWORD, createTestApp, type TestApp } from '../helpers/app.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The ```ts block after a marker. */
function blockAfter(marker: string): string {
  const at = README.indexOf(marker);
  const block = /```ts\n([\s\S]*?)```/.exec(README.slice(at));
  if (at < 0 || !block) throw new Error(`README.md has no SDK block after ${marker}`);
  return block[1]!;
}
const quickstart = () => blockAfter('<!-- with-the-sdk:');

const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (...args: string[]) => (...a: unknown[]) => Promise<void>;

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
    await new AsyncFunction('Cardline', 'process', 'console', body)(Cardline, { env: { CARDLINE_DEMO_PASSWORD: PASSWORD } }, { log: (v: unknown) => printed.push(v) });
    expect(printed).toEqual([{ result: true, exception: null, pagination: null }]);
    const viewer = new Cardline({ baseUrl, tenant: 'demo' });
    await viewer.login('viewer', PASSWORD);
    expect(await viewer.creditLimit.read({ entityId: 'ENT-1001' })).toMatchObject({ result: { creditLimit: '75000.00' } });
  });

  it('CardlineAdmin creates a bank and its first Admin, lists the tenants, and that Admin logs in', async () => {
    const code = blockAfter('<!-- with-the-sdk-admin:');
    const lines = code.split('\n').filter((l) => l.trim() && !l.trim().startsWith('//'));
    expect(lines[0]).toBe("import { Cardline, CardlineAdmin } from '@cardline/sdk';");
    const managementUrl = await (await t.management()).listen({ host: '127.0.0.1', port: 0 });
    const body = lines
      .slice(1)
      .join('\n')
      .replace("'http://127.0.0.1:8081'", JSON.stringify(managementUrl))
      .replace("'http://localhost:8080'", JSON.stringify(baseUrl));
    const printed: unknown[][] = [];
    const env = { CARDLINE_OPERATOR_KEY: await t.operatorKey('readme-ops') };
    await new AsyncFunction('Cardline', 'CardlineAdmin', 'process', 'console', body)(Cardline, CardlineAdmin, { env }, { log: (...v: unknown[]) => printed.push(v) });
    const tenants = printed.slice(0, -1);
    expect(tenants).toContainEqual(['acme', 'active']);
    expect(tenants.map(([id]) => id)).toEqual([...tenants.map(([id]) => id)].sort());
    expect(printed.at(-1)).toEqual([[expect.objectContaining({ username: 'root', role: 'Admin', disabled: false })]]);
  });
});
