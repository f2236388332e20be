// Issue 18 point 4: the /docs page works wherever the gateway is served, and says how to get a token;
// `cardline login` prints one. A gateway listens on a port the system picks (never 8080); the page is read
// as a browser reads it (its CSP, the document it loads by a relative URL, the server URL it resolves
// against its own address), and the "try it out" call is made where the page would send it, with the token
// `cardline login` printed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCS_CSP, SWAGGER_UI_LOGO_STYLE } from '../../src/plugins/docs.js';
import { LIMIT_URL, PASSWORD, createTestApp, type TestApp } from '../helpers/app.js';
import { cliInProcess } from '../helpers/cli.js';

let t: TestApp;
let base: string;

/** `cardline login …` with the password in CARDLINE_USER_PASSWORD (null: none). */
const login = (args: string[], password: string | null = PASSWORD) => {
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (password === null) delete env.CARDLINE_USER_PASSWORD;
  else env.CARDLINE_USER_PASSWORD = password;
  delete env.CARDLINE_GATEWAY_URL;
  return cliInProcess(['login', ...args], env);
};

beforeAll(async () => {
  t = await createTestApp();
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(() => t?.close());

/** A CSP header as directive → sources. */
const directives = (csp: string) =>
  new Map(
    csp
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...sources]) => [name!, sources]),
  );

describe('GET /docs on any origin', () => {
  it('serves the page under a CSP that allows its own assets and calls to its own origin, and nothing else', async () => {
    expect(new URL(base).port).not.toBe('8080');
    const page = await fetch(`${base}/docs/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toBe(DOCS_CSP);
    const policy = directives(csp);
    expect(policy.get('default-src')).toEqual(["'none'"]);
    expect(policy.get('connect-src')).toEqual(["'self'"]);
    expect(policy.get('script-src')).toEqual(["'self'"]);
    // Its own stylesheets, and Swagger UI's logo style by its hash (test/openapi/docs-page.test.ts).
    expect(policy.get('style-src')).toEqual(["'self'", SWAGGER_UI_LOGO_STYLE]);
    expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
    // No request is rewritten to https (which broke the page on plain http away from localhost), no other origin.
    expect(policy.has('upgrade-insecure-requests')).toBe(false);
    expect(csp).not.toMatch(/https?:|\*|validator\.swagger\.io|'unsafe-/);
    // Every asset the page loads is relative (no scheme, no other host), so served by this origin.
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThan(0);
    for (const src of assets) expect(new URL(src, `${base}/docs/`).origin, src).toBe(base);
  });

  it('"try it out" sends its calls to the origin the page was opened at, and they reach the gateway', async () => {
    const pageUrl = `${base}/docs/`;
    const init = await (await fetch(new URL('static/swagger-initializer.js', pageUrl))).text();
    // The initializer loads the document relative to the page (resolveUrl('./json')).
    expect(init).toContain("resolveUrl('./json')");
    const doc = (await (await fetch(new URL('json', pageUrl))).json()) as {
      servers: { url: string }[];
      info: { description: string };
      components: { securitySchemes: { bearer: { description: string } } };
    };
    expect(doc.servers).toEqual([{ url: '/', description: 'The gateway that serves this document' }]);
    // The page says how to get a token.
    expect(doc.info.description).toContain('npx cardline login --gateway <this page\'s origin> --tenant <tenant> --username <user> --password-stdin');
    expect(doc.components.securitySchemes.bearer.description).toContain('`npx cardline login` prints one');

    const { stdout } = await login(['--gateway', base, '--tenant', 'demo', '--username', 'integration']);
    const token = stdout.trim();
    // Where Swagger UI sends the call: the server URL resolved against the page's address; 'self' to the CSP.
    const target = new URL(doc.servers[0]!.url.replace(/\/$/, '') + LIMIT_URL, pageUrl);
    expect(target.origin).toBe(new URL(pageUrl).origin);
    const res = await fetch(target, {
      method: 'POST',
      headers: { TENANT: 'demo', authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ entityId: 'ENT-1001', amount: '75000.00' }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toEqual({ result: true, exception: null, pagination: null });
  });
});

describe('cardline login', () => {
  it('prints a token the gateway accepts, with its user and expiry on stderr', async () => {
    const r = await login(['--gateway', `${base}/`, '--tenant', 'demo', '--username', 'viewer']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    expect(r.stderr).toMatch(/^Logged in as 'viewer' \(Read-Only\) on tenant 'demo'; the token expires at \d{4}-\d\d-\d\dT[\d:.]+Z\.\n$/);
    const me = await t.inject({ method: 'GET', url: '/api/keys', headers: { TENANT: 'demo', authorization: `Bearer ${r.stdout.trim()}` } });
    expect(me.statusCode).toBe(200);
    // The token is the user's: the Read-Only user may not change a limit.
    const refused = await t.inject({
      method: 'POST',
      url: LIMIT_URL,
      headers: { TENANT: 'demo', authorization: `Bearer ${r.stdout.trim()}` },
      payload: { entityId: 'ENT-1001', amount: '75000.00' },
    });
    expect(refused.statusCode).toBe(403);
  });

  it('--json prints the token with its expiry and role; CARDLINE_GATEWAY_URL names the gateway', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, CARDLINE_USER_PASSWORD: PASSWORD, CARDLINE_GATEWAY_URL: base };
    const r = await cliInProcess(['login', '--tenant', 'demo', '--username', 'admin', '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const body = JSON.parse(r.stdout) as { id_token: string; expiresAt: string; role: string };
    expect(body).toEqual({ id_token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/), expiresAt: expect.any(String), role: 'Admin' });
    expect(Date.parse(body.expiresAt)).toBeGreaterThan(Date.now());
  });

  it('a refusal is one line with the gateway\'s words and exit code 1', async () => {
    const wrong = await login(['--gateway', base, '--tenant', 'demo', '--username', 'integration'], 'not-the-password');
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toBe('');
    expect(wrong.stderr).toBe("error: Login of 'integration' on tenant 'demo' refused: 401 Unauthorized: Bad credentials.\n");
    const noPassword = await login(['--gateway', base, '--tenant', 'demo', '--username', 'integration'], null);
    expect(noPassword.stderr).toBe('error: No password: pipe it in with --password-stdin, or set CARDLINE_USER_PASSWORD.\n');
    const unknown = await login(['--gateway', base, '--tenant', 'nobody', '--username', 'integration']);
    expect(unknown.stderr).toMatch(/^error: The gateway answered 400 to GET \/api\/keys for tenant 'nobody'/);
  });
});
