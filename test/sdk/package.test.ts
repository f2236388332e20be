// The SDK as a package (issue 27, point 17): `npm pack` of the workspace builds it (prepack) and the tarball holds
// dist/ with its declarations; installed into a new project, a file written against it typechecks under browser
// libraries without Node's types, compiles, and runs against a gateway on loopback: login, a limit upgrade, a
// page of transactions with a numeric limit, a user created with its password encrypted by default, a PIN block.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, createTestApp, type TestApp } from '../helpers/app.js';

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** The consumer's file: typed against the installed package only (no path into this repository). */
const CHECK = `import { Cardline, CardlineTimeoutError, buildPinBlock, isPending, type TransactionQuery, type UserCreateBody } from '@cardline/sdk';

export async function check(baseUrl: string, password: string): Promise<unknown> {
  const cl = new Cardline({ baseUrl, tenant: 'demo', attemptTimeoutMs: 30_000, deadlineMs: 60_000 });
  await cl.login('integration', password);
  const upgraded = await cl.creditLimit.upgrade({ entityId: 'ENT-1002', amount: '51000.00' });
  for (const amount of ['1.00', '2.00']) await cl.transaction.authorize('CARD-3002', { amount, merchant: { name: 'Shop', mcc: '5411', country: 'PT' }, channel: 'POS' });
  const query: Omit<TransactionQuery, 'cursor'> = { limit: 1 };
  const page = await cl.transaction.list('ENT-1002', query).page();
  const admin = new Cardline({ baseUrl, tenant: 'demo' });
  await admin.login('admin', password);
  const user: UserCreateBody = { username: 'packaged-sdk-user', role: 'Read-Only', password: 'packaged-password-1' };
  const created = await admin.user.create(user);
  const pinBlock = await buildPinBlock({ pin: '1234', pan: '4000000000030017', keyHex: 'C1D0F8FB4958670DBA40AB1F3752EF0D', format: 4 });
  return {
    upgraded: isPending(upgraded) ? 'pending' : upgraded.result,
    page: [page.result.length, typeof page.pagination.nextCursor],
    created: isPending(created) ? 'pending' : created.result.username,
    pinBlock: /^[0-9A-F]{32}$/.test(pinBlock),
    timeoutClass: CardlineTimeoutError.name,
  };
}
`;

describe('the SDK packed and installed in a new project', () => {
  let t: TestApp;
  let baseUrl: string;
  const dirs: string[] = [];
  const temp = (prefix: string) => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
  beforeAll(async () => {
    t = await createTestApp();
    baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await t.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  // A build, an install and a compile in child processes: minutes on a loaded machine; the bound only ends a broken run.
  it('packs dist/, installs, typechecks under browser libraries and runs against a gateway', async () => {
    const packs = temp('cardline-sdk-pack-');
    // As after `npm ci`: npm pack runs the workspace's prepack, which builds dist/.
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', packs], { cwd: join(ROOT, 'sdk'), maxBuffer: 16 << 20 });
    const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
    const files = packed!.files.map((f) => f.path);
    expect(files).toEqual(expect.arrayContaining(['package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/generated/operations.js', 'dist/generated/types.d.ts', 'dist/pin-block.js']));
    expect(files.filter((f) => !f.startsWith('dist/') && f !== 'package.json')).toEqual([]);
    expect(readdirSync(packs)).toEqual([packed!.filename]);

    const project = temp('cardline-sdk-consumer-');
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    await run('npm', ['install', join(packs, packed!.filename), '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: project, maxBuffer: 16 << 20 });
    writeFileSync(join(project, 'check.ts'), CHECK);
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2023', 'DOM', 'DOM.Iterable'], types: [], strict: true, outDir: 'out' },
        files: ['check.ts'],
      }),
    );
    // Typechecked (the package's own declarations too: no skipLibCheck) and compiled.
    const tsc = await run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: project }).catch((err: { stdout: string }) => ({ stdout: err.stdout, failed: true }));
    expect(tsc.stdout).toBe('');

    writeFileSync(join(project, 'main.mjs'), "import { check } from './out/check.js';\nconsole.log(JSON.stringify(await check(process.argv[2], process.argv[3])));\n");
    const { stdout: printed } = await run(process.execPath, ['main.mjs', baseUrl, PASSWORD], { cwd: project });
    expect(JSON.parse(printed)).toEqual({ upgraded: true, page: [1, 'string'], created: 'packaged-sdk-user', pinBlock: true, timeoutClass: 'CardlineTimeoutError' });
  }, 900_000);
});
