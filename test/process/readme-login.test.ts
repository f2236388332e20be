// The README walk-through's `login` shell function, run as a newcomer runs it (bash, npx cardline, curl)
// against a gateway on loopback: a token on success; on a failed login the gateway's answer on stderr, a
// non-zero status and nothing on stdout (never "undefined" flowing into $TOKEN).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, createTestApp, type TestApp } from '../helpers/app.js';
import { runProcess, type Run } from '../helpers/spawn.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The `login() { … }` function of the README, from its first line to the closing brace at column 0. */
function readmeLogin(): string {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const match = /^login\(\) \{\n[\s\S]*?\n\}\n/m.exec(readme);
  if (!match) throw new Error('README.md has no login() function');
  return match[0];
}

function bash(script: string): Promise<Run> {
  const env = { ...process.env };
  delete env.DATABASE_URL;
  return runProcess('bash', ['-c', script], { cwd: ROOT, env });
}

describe("the README's login helper", () => {
  let t: TestApp;
  let fn: string;
  beforeAll(async () => {
    t = await createTestApp();
    const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    fn = readmeLogin().replaceAll('http://localhost:8080', base);
  });
  afterAll(() => t?.close());

  /** `TOKEN=$(login <user>)` as the walk-through writes it; prints what TOKEN holds and the status. */
  const run = (password: string, user = 'integration') =>
    bash(`DEMO_PASSWORD='${password}'\n${fn}\nTOKEN=$(login ${user}); status=$?\nprintf 'TOKEN=[%s] status=%s\\n' "$TOKEN" "$status"`);

  it('prints the token of a good login', async () => {
    const r = await run(PASSWORD);
    expect(r.stdout).toMatch(/^TOKEN=\[[\w-]+\.[\w-]+\.[\w-]+\] status=0\n$/);
    expect(r.stderr.replace(/^npm warn .*\n/gm, '')).toBe('');
  }, 180_000);

  it('a wrong password: the error body on stderr, status 1, an empty TOKEN, never "undefined"', async () => {
    const r = await run('demo-password-1');
    expect(r.stdout).toBe('TOKEN=[] status=1\n');
    expect(r.stdout + r.stderr).not.toContain('undefined');
    const line = r.stderr.split('\n').find((l) => l.startsWith('login failed: '));
    expect(JSON.parse(line!.slice('login failed: '.length))).toEqual({
      type: 'https://www.jhipster.tech/problem/problem-with-message',
      title: 'Unauthorized',
      status: 401,
      message: 'error.http.401',
      detail: 'Bad credentials',
    });
  }, 180_000);
});
