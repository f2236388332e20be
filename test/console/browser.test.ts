// The operations console end to end in a real browser (issue 19): playwright-core driving Debian's chromium
// against one gateway's management listener (one browser and one gateway for the file). An operator signs
// in, onboards a bank with its first Admin, disables and enables it, sees a failing channel's deliveries and
// fixes them with a retry, reads a verified audit chain and a broken one located, sees a failing core marked;
// a change without the CSRF token is refused and an idle session ends. axe-core finds no serious or critical
// violation on any page; each page is photographed at 1280 and 390 px (test-results/console/), and at 390 px
// no table label overlaps its value and nothing is wider than the screen.
// Without a browser the file says it was skipped, and why; under CI=true that is a failure.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildMockCore } from '../../connectors/mock-core/server.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { startDecisionEndpoint } from '../helpers/decision-endpoint.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const noBrowser = existsSync(CHROMIUM) ? null : `no browser at ${CHROMIUM} (install it: apt-get install -y chromium, or set CHROMIUM_PATH)`;
if (noBrowser && process.env.CI === 'true') throw new Error(`The console's browser tests need a browser under CI=true: ${noBrowser}`);
if (noBrowser) console.warn(`SKIPPED test/console/browser.test.ts: ${noBrowser}`);

const SHOTS = join(process.cwd(), 'test-results', 'console');
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

let t: TestApp;
let m: FastifyInstance;
let base: string;
let key: string;
let context: BrowserContext;
let page: Page;
let profile: string;
let rx: Receiver;
let failingCore: FastifyInstance;
const cspViolations: string[] = [];

beforeAll(async () => {
  if (noBrowser) return;
  const { buildConsole } = await import('../../bin/build-console.js');
  await buildConsole();
  rx = await startReceiver();
  failingCore = buildMockCore({ fixtures: 'demo', faults: { errorRate: 1 } });
  const coreBase = await failingCore.listen({ host: '127.0.0.1', port: 0 });
  t = await createTestApp({
    env: { CARDLINE_WEBHOOK_ALLOW_HOSTS: '127.0.0.1' },
    tenants: [
      { id: 'failing-bank', config: { connector: { id: 'rest', options: { baseUrl: `${coreBase}/banks/failing-bank` } } } },
      // Another bank on the same core: the two share its breaker.
      { id: 'failing-twin', config: { connector: { id: 'rest', options: { baseUrl: `${coreBase}/banks/failing-twin` } } } },
    ],
  });
  m = await t.management();
  base = await m.listen({ host: '127.0.0.1', port: 0 });
  key = await t.operatorKey('ops-carol');
  await mkdir(SHOTS, { recursive: true });
  profile = await mkdtemp(join(tmpdir(), 'cardline-chromium-'));
  const { chromium } = await import('playwright-core');
  // A fixed zone, so that the zone every time shows is known.
  context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: ARGS, viewport: { width: 1280, height: 900 }, timezoneId: 'UTC' });
  page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (msg) => {
    if (msg.type() === 'error' && /Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
  });
}, 120_000);

afterAll(async () => {
  if (noBrowser) return;
  await context?.close();
  await rm(profile, { recursive: true, force: true });
  await t?.close();
  await failingCore?.close();
  await rx?.close();
});

const axeSource = async () => readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page as it is now (rule id and the first target). */
async function axeViolations(): Promise<string[]> {
  // Evaluated as strings: the page's globals are not this file's (no DOM types here), and CDP is not bound by the page's CSP.
  if (!(await page.evaluate<boolean>("'axe' in window"))) await page.evaluate(await axeSource());
  const result = await page.evaluate<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }>('axe.run(document)');
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/**
 * What is broken in the narrow layout (each table row a card, its labels in the cells' left padding): a label
 * taller than its cell (it ran into the next one, as "Latency avg/max" did), a label in its cell's font (a
 * monospaced amount's), a table region or the page wider than the screen (text cut off, or a sideways scroll).
 */
async function narrowLayoutProblems(): Promise<string[]> {
  return page.evaluate<string[]>(`(() => {
    const problems = [];
    for (const td of document.querySelectorAll('.table-region td[data-label]')) {
      if (!td.dataset.label || td.hasAttribute('colspan')) continue;
      const label = parseFloat(getComputedStyle(td, '::before').height);
      const cell = td.getBoundingClientRect().height;
      if (!Number.isFinite(label)) { problems.push('label of ' + td.dataset.label + ' not measured'); continue; }
      if (label + parseFloat(getComputedStyle(td).paddingTop) > cell + 0.5) problems.push('label ' + td.dataset.label + ' (' + label + ' px) overflows its cell (' + cell + ' px)');
      if (getComputedStyle(td, '::before').fontFamily !== getComputedStyle(document.body).fontFamily) problems.push('label ' + td.dataset.label + ' is in its cell font, not the page font');
    }
    for (const region of document.querySelectorAll('.table-region')) {
      if (region.scrollWidth > region.clientWidth + 1) problems.push('table ' + region.getAttribute('aria-label') + ' is ' + region.scrollWidth + ' px wide in ' + region.clientWidth);
    }
    if (document.documentElement.scrollWidth > window.innerWidth) problems.push('page is ' + document.documentElement.scrollWidth + ' px wide');
    return problems;
  })()`);
}

/** Screenshots at both widths, the axe check at both, and at 390 px nothing overlapping or cut off. */
async function photograph(name: string): Promise<void> {
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    expect(await axeViolations(), `${name} at ${width} px`).toEqual([]);
    if (width === 390) expect(await narrowLayoutProblems(), `${name} at ${width} px`).toEqual([]);
    await page.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

const row = (tenant: string) => page.locator(`tr[data-tenant="${tenant}"]`);

describe.skipIf(noBrowser !== null)('the operations console in a browser', () => {
  it('serves the console with a strict CSP and no framing', async () => {
    const res = await fetch(`${base}/console/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toBe("default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'");
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(await res.text()).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  });

  it('signs in with an operator key (a wrong one says what to do); the key is not kept in the browser', async () => {
    await page.goto(`${base}/console/`);
    await page.getByLabel('Operator key').waitFor();
    // Signed out, the page is the sign-in form, whatever page the address names.
    expect(await page.title()).toBe('Sign in · Cardline console');
    await page.getByLabel('Operator key').fill('clop_wrong-wrong-wrong-wrong-wrong-wrong-000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('This operator key is unknown or revoked');
    await photograph('sign-in');
    await page.getByLabel('Operator key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Tenants' }).waitFor();
    expect(await page.getByText('Signed in as').textContent()).toContain('ops-carol');
    const stored = await page.evaluate<string>('JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie');
    expect(stored).not.toContain(key);
    expect(stored).not.toContain('cardline_console');
    const cookie = (await context.cookies(base)).find((c) => c.name === 'cardline_console')!;
    expect({ httpOnly: cookie.httpOnly, sameSite: cookie.sameSite }).toEqual({ httpOnly: true, sameSite: 'Strict' });
  });

  it('shows a not-found view for a malformed address, and the pages again at the next address', async () => {
    await page.goto(`${base}/console/#/tenants/%E0%A4%A`);
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
    expect(await page.locator('main').textContent()).toContain('There is no page “#/tenants/%E0%A4%A”');
    await page.getByRole('link', { name: 'Go to the tenants' }).click();
    await page.getByRole('heading', { name: 'Tenants' }).waitFor();
    await page.goto(`${base}/console/#/cores/%ZZ`);
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
    await page.getByRole('link', { name: 'Cores' }).click();
    await page.getByRole('heading', { name: 'Cores' }).waitFor();
    await page.goto(`${base}/console/#/tenants`);
    await page.getByRole('heading', { name: 'Tenants' }).waitFor();
  });

  it('onboards a tenant with its first Admin in one call: country, zone and maximum asked, the password rule stated before sending', async () => {
    await page.getByRole('button', { name: 'Onboard a tenant' }).click();
    // The rule is on the page before anything is sent.
    expect(await page.locator('#t-password-hint').textContent()).toContain('At least 8 characters.');
    await page.getByLabel('Tenant id').fill('north-bank');
    await page.getByLabel('Name', { exact: true }).fill('North Bank');
    await page.getByLabel("First Admin's username").fill('north-admin');
    await page.getByLabel("First Admin's password").fill('north-secret-password-1');
    // Nothing is guessed: without a home country, a time zone and a maximum the form says what is missing.
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await expect.poll(() => page.locator('form .notice.error').textContent()).toBe('Home country: two capital letters (ISO 3166-1), such as PT or GB.');
    await page.getByLabel('Home country').fill('gb');
    expect(await page.getByLabel('Home country').inputValue()).toBe('GB');
    await page.getByLabel('Time zone').fill('Europe/London');
    await page.getByLabel('Maximum credit limit').fill('250000.00');
    await page.getByLabel("First Admin's password").fill('short');
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await expect.poll(() => page.locator('form .notice.error').textContent()).toBe("First Admin's password: at least 8 characters (this one has 5).");
    expect(await t.app.cardline.tenants.stored('north-bank')).toBeNull();
    await page.getByLabel("First Admin's password").fill('north-secret-password-1');
    await page.getByLabel('Connector options (JSON)').fill('{ "fixtures": "nope" }');
    await page.getByRole('button', { name: 'Create tenant' }).click();
    // The connector's own schema refuses the options before anything is created.
    await expect.poll(() => page.locator('form .notice.error').textContent()).toMatch(/^The connector options are refused: connector 'mock' options are invalid/);
    expect(await t.app.cardline.tenants.stored('north-bank')).toBeNull();
    await photograph('tenants-onboard');
    await page.getByLabel('Connector options (JSON)').fill('{ "fixtures": "demo" }');
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toBe("Tenant north-bank onboarded with its first Admin 'north-admin'.");
    // The list shows the new tenant without a reload of the page.
    await row('north-bank').waitFor();
    const stored = await t.app.cardline.tenants.stored('north-bank');
    expect(stored!.config).toMatchObject({ homeCountry: 'GB', timeZone: 'Europe/London', creditLimit: { maximum: '250000.00', allowDecrease: false } });
    // The Admin signs in on the public API with that password.
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/authenticate',
      headers: { TENANT: 'north-bank' },
      payload: { username: 'north-admin', password: await t.encrypt('north-secret-password-1', 'north-bank') },
    });
    expect(login.statusCode).toBe(200);
    // One operation, one record: the tenant and the Admin it created.
    const audited = await t.db.query<{ actor: string; action: string; target: Record<string, string> }>(
      "SELECT actor, action, target FROM audit_log WHERE tenant_id = 'north-bank' AND action IN ('tenant.create', 'user.create') ORDER BY seq",
    );
    expect(audited.rows).toEqual([{ actor: 'ops-carol', action: 'tenant.create', target: { tenantId: 'north-bank', username: 'north-admin' } }]);
    await photograph('tenants');
  });

  it('disables and enables the tenant, each after a confirmation', async () => {
    await row('north-bank').getByRole('button', { name: 'Disable north-bank' }).click();
    await row('north-bank').getByRole('button', { name: 'Disable', exact: true }).click();
    await expect.poll(() => row('north-bank').locator('.badge').first().textContent()).toBe('disabled');
    expect((await t.app.cardline.tenants.stored('north-bank'))!.status).toBe('disabled');
    await row('north-bank').getByRole('button', { name: 'Enable north-bank' }).click();
    await row('north-bank').getByRole('button', { name: 'Enable', exact: true }).click();
    await expect.poll(() => row('north-bank').locator('.badge').first().textContent()).toBe('active');
    const audited = await t.db.query<{ actor: string; action: string }>("SELECT actor, action FROM audit_log WHERE tenant_id = 'north-bank' AND action IN ('tenant.disable', 'tenant.enable') ORDER BY seq");
    expect(audited.rows).toEqual([
      { actor: 'ops-carol', action: 'tenant.disable' },
      { actor: 'ops-carol', action: 'tenant.enable' },
    ]);
  });

  it("shows a tenant's page: configuration, cores and users with the last-Admin rule", async () => {
    await page.goto(`${base}/console/#/tenants/north-bank`);
    await page.getByRole('heading', { name: 'Tenant north-bank' }).waitFor();
    await page.getByText('The last Admin: it cannot be disabled or removed until another Admin exists.').waitFor();
    await page.locator('#cores-h').waitFor();
    // A new user is Read-Only unless the operator chooses more.
    expect(await page.getByLabel('Role').inputValue()).toBe('Read-Only');
    // Dates name their zone.
    expect(await page.locator('#config-h + p').textContent()).toMatch(/created \d{1,2} \w{3} \d{4}, \d{2}:\d{2} UTC/);
    // A merge patch saved: the box then shows the configuration as stored, the patch merged into it.
    await page.getByLabel('Configuration (JSON, sent as a merge patch)').fill('{ "creditLimit": { "maximum": "500000.00" } }');
    await page.getByRole('button', { name: 'Save configuration' }).click();
    await expect.poll(() => page.locator('#config-h ~ .notice.ok').textContent()).toMatch(/^Saved\./);
    const shown = JSON.parse(await page.getByLabel('Configuration (JSON, sent as a merge patch)').inputValue());
    expect(shown).toMatchObject({ connector: { id: 'mock' }, creditLimit: { maximum: '500000.00' }, timeZone: expect.any(String) });
    await photograph('tenant');
  });

  it('marks a tenant whose mock core fails every call on the tenants list', async () => {
    await t.app.cardline.users.create('failing-bank', 'fb-admin', 'Admin', 'failing-bank-password-1');
    const login = await t.app.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: 'failing-bank' }, payload: { username: 'fb-admin', password: await t.encrypt('failing-bank-password-1', 'failing-bank') } });
    const token = login.json().id_token as string;
    for (let i = 0; i < 3; i++) {
      const res = await t.app.inject({ method: 'GET', url: '/v1/entities/ENT-1001', headers: { TENANT: 'failing-bank', authorization: `Bearer ${token}` } });
      expect(res.statusCode).toBeGreaterThanOrEqual(500);
    }
    await page.goto(`${base}/console/#/tenants`);
    await page.reload();
    await expect.poll(() => row('failing-bank').textContent()).toMatch(/core failing: rest/);
    expect(await row('failing-bank').getAttribute('class')).toBe('row-failing');
    expect(await row('demo').getAttribute('class')).toBe('');
    await photograph('tenants-failing-core');
    // Its twin on the same core, started (its cores read): the breaker is said to be shared by the two.
    expect((await m.inject({ method: 'GET', url: '/v1/tenants/failing-twin/connectors', headers: { authorization: `Bearer ${key}` } })).statusCode).toBe(200);
    await page.goto(`${base}/console/#/cores`);
    await page.locator('tr.row-failing').first().waitFor();
    await expect.poll(() => page.locator('tr', { hasText: 'failing-bank' }).first().textContent()).toContain('shared with failing-twin');
    await photograph('cores');
  });

  it('shows a failing channel\'s failed deliveries, and a retry delivers', async () => {
    const admin = { TENANT: 'demo', authorization: `Bearer ${await t.token('Admin')}` };
    rx.answer('/hooks', { status: 500 });
    const created = await t.app.inject({ method: 'POST', url: '/v1/admin/channels', headers: admin, payload: { type: 'webhook', url: `${rx.base}/hooks`, eventTypes: ['*'], description: 'Risk desk' } });
    expect(created.statusCode).toBe(201);
    const channelId = created.json().result.channelId as string;
    const test = await t.app.inject({ method: 'POST', url: `/v1/admin/channels/${channelId}/test`, headers: admin });
    expect(test.json().result.attempts[0].statusCode).toBe(500);

    // A tenant without a channel says so, and what to do.
    await page.goto(`${base}/console/#/channels/north-bank`);
    await page.getByText('This tenant has no channel').waitFor();
    await photograph('channels-empty');

    await page.goto(`${base}/console/#/channels/demo`);
    await expect.poll(() => page.locator('tr.row-failing').textContent()).toContain('Risk desk');
    expect(await page.locator('tr.row-failing').textContent()).toContain('0% of 1');
    await page.getByRole('link', { name: 'Risk desk' }).click();
    const delivery = page.locator('tr[data-status]').first();
    await expect.poll(() => delivery.textContent()).toContain('500 in');
    expect(await delivery.getAttribute('data-status')).not.toBe('delivered');
    expect(await delivery.textContent()).toMatch(/\d{1,2} \w{3} \d{4}, \d{2}:\d{2} UTC: 500 in/);
    await photograph('channels');

    rx.answer('/hooks', { status: 204 });
    await delivery.getByRole('button', { name: 'Retry now: channel.test' }).click();
    await expect.poll(() => page.locator('.notice.ok').first().textContent()).toBe('Delivery of channel.test retried: delivered.');
    await expect.poll(() => page.locator('tr[data-status]').first().getAttribute('data-status')).toBe('delivered');
    expect(rx.at('/hooks')).toHaveLength(2);
    // The channel's success rate is read again, and a delivered row has no next attempt.
    await expect.poll(() => page.getByRole('region', { name: 'Channels' }).locator('tr', { hasText: 'Risk desk' }).textContent()).toContain('100% of 1');
    expect(await delivery.locator('td').nth(3).textContent()).toBe('— (delivered)');
    const audited = await t.db.query<{ actor: string }>("SELECT actor FROM audit_log WHERE tenant_id = 'demo' AND action = 'delivery.retry'");
    expect(audited.rows).toEqual([{ actor: 'ops-carol' }]);

    // Sending a delivered one again asks first; cancelled, nothing is sent.
    await delivery.getByRole('button', { name: 'Send again' }).click();
    expect(await delivery.getByRole('group').textContent()).toMatch(/^Delivered \d{1,2} \w{3} \d{4}, \d{2}:\d{2} UTC\. Send channel\.test again\? The receiver gets it a second time/);
    await photograph('channels-send-again');
    await delivery.getByRole('button', { name: 'Cancel' }).click();
    expect(rx.at('/hooks')).toHaveLength(2);
    await delivery.getByRole('button', { name: 'Send again' }).click();
    await delivery.getByRole('group').getByRole('button', { name: 'Send again' }).click();
    await expect.poll(() => page.locator('.notice.ok').first().textContent()).toBe('Delivery of channel.test sent again: delivered.');
    expect(rx.at('/hooks')).toHaveLength(3);

    // Rotating the secret asks first; the new one is shown only once confirmed.
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    expect(await page.locator('.secret').count()).toBe(0);
    await page.getByRole('button', { name: 'Rotate', exact: true }).click();
    await page.locator('.secret code').waitFor();
    expect(await page.locator('.secret code').textContent()).toMatch(/^whsec_/);
  });

  it('shows a verified audit chain, and where a chain broken on purpose breaks', async () => {
    await page.goto(`${base}/console/#/audit/north-bank`);
    await expect.poll(() => page.locator('[data-chain]').getAttribute('data-chain')).toBe('verified');
    await page.getByLabel('Action').fill('tenant.disable');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByText('Request id').waitFor();
    await photograph('audit');

    // The trail opens on changes only.
    expect(await page.getByLabel('Kind').inputValue()).toBe('write');

    // More changes than a page holds, then someone edits an early record in the store: the page names the
    // first record that no longer verifies, and leads to the page that holds it.
    for (let i = 0; i < 55; i++) {
      const res = await m.inject({ method: 'PATCH', url: '/v1/tenants/north-bank', headers: { authorization: `Bearer ${key}` }, payload: { name: `North Bank ${i}` } });
      expect(res.statusCode).toBe(200);
    }
    await t.db.query("UPDATE audit_log SET actor = 'someone-else' WHERE tenant_id = 'north-bank' AND seq = 2");
    await page.goto(`${base}/console/#/audit`);
    await page.goto(`${base}/console/#/audit/north-bank`);
    await expect.poll(() => page.locator('[data-chain]').getAttribute('data-chain')).toBe('broken');
    expect(await page.locator('[data-chain="broken"]').textContent()).toMatch(/First break in chain \S+ at position 2 \(record 2\): edited \(the record's contents do not match its hash\)\. The record before it verifies/);
    await page.locator('tbody tr').first().waitFor();
    expect(await page.locator('tr[data-seq="2"]').count()).toBe(0);
    await page.getByRole('button', { name: 'Show record 2' }).click();
    await page.locator('tr[data-seq="2"]').waitFor();
    expect(await page.locator('tr[data-seq="2"]').getAttribute('class')).toBe('row-failing');
    await photograph('audit-broken');
  });

  it('draws the live figures from the gateway\'s counters', async () => {
    const opened = new Date();
    await page.goto(`${base}/console/#/figures`);
    const drawn = async () => page.locator('.uplot').evaluateAll((charts) => charts.map((c) => Number(c.getAttribute('data-drawn') ?? 0)));
    const traffic = async () => {
      for (let i = 0; i < 5; i++) await t.app.inject({ method: 'GET', url: '/api/keys', headers: { TENANT: 'demo' } });
    };
    // The first point (two readings) is drawn as soon as it is known: one value is in the time range.
    await expect
      .poll(
        async () => {
          await traffic();
          return page.locator('.figures-now').textContent();
        },
        { timeout: 30_000 },
      )
      .toMatch(/^Now: /);
    expect(await drawn()).toEqual([expect.any(Number), expect.any(Number), expect.any(Number)]);
    expect(Math.min(...(await drawn()))).toBeGreaterThanOrEqual(1);
    // Traffic while the page reads: each poll sends a few requests, until every chart has drawn two points
    // (three readings) inside its time range, each series (p50 and p99 too) with a value at both.
    await expect
      .poll(
        async () => {
          await traffic();
          const counts = await drawn();
          return counts.length === 3 ? Math.min(...counts) : 0; // not Infinity before the charts exist
        },
        { timeout: 30_000 },
      )
      .toBeGreaterThanOrEqual(2);
    expect(await page.locator('.uplot').count()).toBe(3);
    expect(await page.locator('.figures-now').textContent()).toMatch(/^Now: [\d.]+ requests\/s · p50 ([\d.]+|—) ms/);
    // The time axis is dated today (its first tick carries the date, as 27 Nov 2026), not 1000 days on.
    const dated = (d: Date) => `${d.getDate()} ${'Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec'.split(' ')[d.getMonth()]} ${d.getFullYear()}`;
    const today = [dated(opened), dated(new Date())]; // two if the test ran over midnight
    for (const axis of await page.locator('.uplot').evaluateAll((charts) => charts.map((c) => c.getAttribute('data-axis')))) {
      expect(axis).toContain(String(new Date().getFullYear()));
      expect(today.some((d) => axis!.includes(d)), `${axis} is dated ${today.join(' or ')}`).toBe(true);
    }
    await photograph('figures');
  });

  it('looks up a customer and one of its cards: masked numbers only, with recent transactions', async () => {
    // A purchase on the customer's card, so there is a transaction to show.
    const spent = await t.app.inject({
      method: 'POST',
      url: '/v1/sandbox/cards/CARD-3001/authorizations',
      headers: { 'X-TENANT-ID': 'demo', authorization: `Bearer ${await t.token('Admin')}` },
      payload: { amount: '12.50', merchant: { name: 'Harbour Cafe', mcc: '5814', country: 'PT' }, channel: 'POS' },
    });
    expect(spent.statusCode, spent.body).toBe(201);
    await page.goto(`${base}/console/#/lookup/demo`);
    await page.getByLabel('Id').waitFor();
    await photograph('lookup-empty');
    await page.getByLabel('Id').fill('ENT-1001');
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByRole('heading', { name: 'Recent transactions' }).waitFor();
    const text = (await page.locator('main').textContent())!;
    expect(text).toMatch(/\*{4,}\d{4}|•+\d{4}|X+\d{4}/i);
    expect(text).not.toMatch(/\b4\d{15}\b/);
    const purchase = page.getByRole('region', { name: 'Recent transactions' }).locator('tbody tr');
    expect(await purchase.count()).toBe(1);
    expect(await purchase.textContent()).toMatch(/CARD-3001.*Harbour Cafe.*12\.50.*APPROVED/);
    await photograph('lookup');
    // The card by its id: the card masked, and the same transaction.
    await page.getByLabel('Look up', { exact: true }).selectOption('card');
    await page.getByLabel('Id').fill('CARD-3001');
    await page.getByRole('button', { name: 'Look up' }).click();
    await expect.poll(() => page.locator('#cards-h + ul').textContent()).toMatch(/^\d{6}\*+\d{4} CARD-3001 · /);
    expect(await page.getByRole('heading', { name: 'Demo Business 1' }).count()).toBe(0);
    expect(await page.getByRole('region', { name: 'Recent transactions' }).locator('tbody').textContent()).toMatch(/CARD-3001.*Harbour Cafe.*12\.50/);
    expect((await page.locator('main').textContent())!).not.toMatch(/\b4\d{15}\b/);
    await photograph('lookup-card');
    await page.getByLabel('Look up', { exact: true }).selectOption('customer');
    await page.getByLabel('Id').fill('ENT-9999');
    await page.getByRole('button', { name: 'Look up' }).click();
    await expect.poll(() => page.locator('.notice.error').textContent()).toMatch(/ENT-9999/);
  });

  it("shows an authorization's decision trail: the rule that declined it, the decision endpoint's stand-in, the core's decision", async () => {
    const asAdmin = async (method: 'POST' | 'PATCH', url: string, payload: unknown, role: 'Admin' | 'API Integration' = 'Admin') => {
      const res = await t.app.inject({ method, url, headers: { 'X-TENANT-ID': 'demo', authorization: `Bearer ${await t.token(role)}` }, payload: payload as string });
      expect(res.statusCode, res.body).toBeLessThan(300);
      return res.json().result;
    };
    const rule = await asAdmin('POST', '/v1/admin/auth-rules', {
      name: 'No casinos',
      mode: 'active',
      cardId: 'CARD-3001',
      conditions: [{ attribute: 'mcc', operation: 'is-one-of', values: ['7995'] }],
    });
    const purchase = (merchant: Record<string, string>, amount: string) =>
      asAdmin('POST', '/v1/authorizations', { cardId: 'CARD-3001', amount, currency: 'EUR', merchant, channel: 'ECOM' }, 'API Integration');
    const declined = await purchase({ name: 'Lucky Star Casino', mcc: '7995', country: 'MT' }, '80.00');
    expect(declined.decidedBy).toBe('spend-controls');
    // A decision endpoint that hangs past its deadline: the stand-in approves, and the core holds.
    const ep = await startDecisionEndpoint();
    let approved: { authorizationId: string };
    try {
      ep.reply('/hang', 'hang');
      await asAdmin('PATCH', '/v1/admin/config', { authorization: { decision: { url: `${ep.base}/hang`, secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`, standIn: 'approve', deadlineMs: 100 } } });
      approved = await purchase({ name: 'Harbour Cafe', mcc: '5814', country: 'PT' }, '12.50');
    } finally {
      await asAdmin('PATCH', '/v1/admin/config', { authorization: { decision: null } });
      ep.drop('/hang');
      await ep.close();
    }

    await page.goto(`${base}/console/#/lookup/demo`);
    await page.getByLabel('Look up', { exact: true }).selectOption('authorization');
    await page.getByLabel('Id').fill(declined.authorizationId);
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByRole('heading', { name: 'Decision trail' }).waitFor();
    const steps = page.locator('ol.trail > li');
    expect(await steps.count()).toBe(2);
    expect(await steps.nth(0).textContent()).toMatch(/^1?Card state\s*approved/);
    const decidedStep = page.locator('ol.trail > li.decided');
    expect(await decidedStep.textContent()).toMatch(/Spend controls\s*declined\s*decided here.*rule No casinos · version 1 ?[0-9a-f-]{36}.*SPEND_CONTROL_DECLINED/);
    expect(await decidedStep.textContent()).toContain(rule.ruleId);
    expect(await page.locator('#auth-h + p').textContent()).toMatch(/DECLINED\s*SPEND_CONTROL_DECLINED · decided by Spend controls/);
    await photograph('lookup-authorization-declined');

    await page.getByLabel('Id').fill(approved.authorizationId);
    await page.getByRole('button', { name: 'Look up' }).click();
    await expect.poll(() => page.locator('#auth-h').textContent()).toContain(approved.authorizationId);
    expect(await page.locator('ol.trail > li').allTextContents()).toEqual([
      expect.stringMatching(/^Card state\s*approved$/),
      expect.stringMatching(/^Spend controls\s*approved\s*1 rule version evaluated$/),
      expect.stringMatching(/^Decision endpoint\s*approved\s*timed out: stand-in approveno answer within 100 ms: stand-in approve$/),
      expect.stringMatching(/^Core\s*approved\s*decided here\s*the core's decision: approved$/),
    ]);
    await photograph('lookup-authorization-approved');

    // An unknown authorization: the management API's 404, said in the page.
    await page.getByLabel('Id').fill('auth_unknown');
    await page.getByRole('button', { name: 'Look up' }).click();
    await expect.poll(() => page.locator('.notice.error').textContent()).toMatch(/auth_unknown/);
  });

  it("shows a tenant's pending approvals, approves one (executed at once) and rejects one with a reason, only where the policy names Operator", async () => {
    const policies = [
      { operation: 'credit-limit.upgrade', when: { newLimitAbove: '100000.00' }, approvers: ['Admin', 'Operator'] },
      { operation: 'user.create', when: { roles: ['Admin'] }, approvers: ['Admin'] },
    ];
    expect((await m.inject({ method: 'PATCH', url: '/v1/tenants/demo', headers: { authorization: `Bearer ${key}` }, payload: { config: { approvals: policies } } })).statusCode).toBe(200);
    const integration = { TENANT: 'demo', authorization: `Bearer ${await t.token('API Integration')}` };
    const hold = async (entityId: string, amount: string) => {
      const res = await t.app.inject({ method: 'POST', url: '/credit-line-management/business-entity-manager/upgradeLimit', headers: integration, payload: { entityId, amount } });
      expect(res.statusCode, res.body).toBe(202);
      return String(res.headers.location).split('/').pop()!;
    };
    const raise = await hold('ENT-1001', '150000.00');
    const refuse = await hold('ENT-1002', '160000.00');
    const newAdmin = await t.app.inject({
      method: 'POST',
      url: '/v1/admin/users',
      headers: { 'X-TENANT-ID': 'demo', authorization: `Bearer ${await t.token('Admin')}` },
      payload: { username: 'second-admin', role: 'Admin', password: await t.encrypt('second-Admin-passw0rd') },
    });
    expect(newAdmin.statusCode).toBe(202);
    const limitOf = async (entityId: string) =>
      (await t.app.inject({ method: 'POST', url: '/credit-line-management/business-entity-manager/fetchLimit', headers: integration, payload: { entityId } })).json().result.creditLimit as string;

    await page.goto(`${base}/console/#/approvals/demo`);
    const row = (id: string) => page.locator(`tr[data-approval="${id}"]`);
    await row(raise).waitFor();
    expect(await page.getByLabel('Status').inputValue()).toBe('pending');
    expect(await page.locator('tr[data-approval]').count()).toBe(3);
    // What will execute, who asked, until when, and the approvals so far.
    expect(await row(raise).textContent()).toMatch(
      /^credit-limit\.upgradePOST \/credit-line-management\/business-entity-manager\/upgradeLimit(entityIdENT-1001amount150000\.00|amount150000\.00entityIdENT-1001)integrationAPI Integration · .+ UTC0 of 1Approvers: Admin, Operator\d{1,2} \w{3} \d{4}, \d{2}:\d{2} UTCApproveReject$/,
    );
    // A secret field is shown as the gateway holds it, and an operator may not decide where the policy does not name Operator.
    const userRow = page.locator('tr[data-approval]', { hasText: 'user.create' });
    expect(await userRow.textContent()).toContain('password[encrypted]');
    expect(await userRow.textContent()).toContain('Only Admin may decide: the policy does not name Operator.');
    expect(await userRow.getByRole('button').count()).toBe(0);
    await photograph('approvals');

    // A change without the session's CSRF token is refused, and nothing executes.
    const forged = await page.evaluate<number>(`fetch('/v1/tenants/demo/approvals/${raise}/approve', { method: 'POST', credentials: 'same-origin' }).then((r) => r.status)`);
    expect(forged).toBe(403);
    expect(await limitOf('ENT-1001')).toBe('50000.00');

    // Approve asks first, then executes the request at once.
    await row(raise).getByRole('button', { name: 'Approve' }).click();
    expect(await row(raise).getByRole('group').textContent()).toBe('Approve credit-limit.upgrade by integration? It executes now.ApproveCancel');
    await photograph('approvals-confirm');
    await row(raise).getByRole('group').getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => page.locator('.notice.ok').first().textContent()).toBe('Approved and executed: credit-limit.upgrade answered 200.');
    await expect.poll(() => row(raise).count()).toBe(0);
    expect(await limitOf('ENT-1001')).toBe('150000.00');

    // Reject takes a reason; nothing executes.
    await row(refuse).getByRole('button', { name: 'Reject credit-limit.upgrade by integration' }).click();
    await page.getByLabel('Reason for rejecting').fill('No credit review on file');
    await photograph('approvals-reject');
    await page.getByRole('form', { name: 'Reject the request' }).getByRole('button', { name: 'Reject' }).click();
    await expect.poll(() => page.locator('.notice.ok').first().textContent()).toBe('Rejected: credit-limit.upgrade by integration will not run.');
    await expect.poll(() => row(refuse).count()).toBe(0);
    expect(await limitOf('ENT-1002')).toBe('50000.00');

    // Every status: the outcome of the executed one, the reason of the rejected one.
    await page.getByLabel('Status').selectOption('');
    await expect.poll(() => row(raise).textContent()).toContain('executed: 200');
    expect(await row(refuse).textContent()).toContain('rejectedby operator:ops-carol: No credit review on file');
    await photograph('approvals-decided');
    const audited = await t.db.query<{ actor: string; action: string; status: number }>(
      "SELECT actor, action, status FROM audit_log WHERE tenant_id = 'demo' AND role = 'Operator' AND action LIKE 'approvals.%' ORDER BY seq",
    );
    expect(audited.rows).toEqual([
      { actor: 'ops-carol', action: 'approvals.approve', status: 200 },
      { actor: 'ops-carol', action: 'approvals.reject', status: 200 },
    ]);
    await m.inject({ method: 'PATCH', url: '/v1/tenants/demo', headers: { authorization: `Bearer ${key}` }, payload: { config: { approvals: null } } });
  });

  it('searches every tenant, not only the page shown: a tenant past the first page is found', async () => {
    // Enough tenants that the list's first page (20) ends before zz-harbour.
    for (const id of [...Array.from({ length: 18 }, (_, i) => `x-bank-${String(i + 1).padStart(2, '0')}`), 'zz-harbour']) {
      const name = id === 'zz-harbour' ? 'Quiet Harbour Savings' : `Bank ${id.slice(7)}`;
      const res = await m.inject({ method: 'POST', url: '/v1/tenants', headers: { authorization: `Bearer ${key}` }, payload: { id, name, config: { connector: { id: 'mock', options: { fixtures: 'demo' } } } } });
      expect(res.statusCode).toBe(201);
    }
    await page.goto(`${base}/console/#/tenants`);
    await row('x-bank-01').waitFor();
    expect(await page.locator('tr[data-tenant]').count()).toBe(20);
    expect(await row('zz-harbour').count()).toBe(0);
    await page.getByLabel('Search tenants').fill('HARBOUR');
    await row('zz-harbour').waitFor();
    expect(await page.locator('tr[data-tenant]').count()).toBe(1);
    expect(await page.getByRole('navigation', { name: 'Tenant pages' }).textContent()).toContain('Search “HARBOUR”, page 1');
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
    await photograph('tenants-search');
    // Nothing holds "no-such": the empty search says so, and what to do.
    await page.getByLabel('Search tenants').fill('no-such');
    await expect.poll(() => page.locator('tbody').textContent()).toBe('No tenant\'s id or name holds “no-such”: check the spelling, or clear the search to see every tenant.');
    await photograph('tenants-search-empty');
    await page.getByLabel('Search tenants').fill('');
    await row('x-bank-01').waitFor();
    await expect.poll(() => page.locator('tr[data-tenant]').count()).toBe(20);
  });

  it('refuses a change without the CSRF token', async () => {
    const status = await page.evaluate<number>("fetch('/v1/tenants/north-bank/disable', { method: 'POST', credentials: 'same-origin' }).then((r) => r.status)");
    expect(status).toBe(403);
    expect((await t.app.cardline.tenants.stored('north-bank'))!.status).toBe('active');
  });

  it('draws /docs (one section) with no policy error logged, and "try it out" fits 390 px', async () => {
    const errors: string[] = [];
    const docs = await context.newPage();
    docs.on('console', (msg) => {
      if (msg.type() === 'error') errors.push(msg.text());
    });
    // One section: the operations of the document's first tag, not the whole document.
    const document = (await (await fetch(`${base}/openapi.json`)).json()) as { tags: { name: string }[]; paths: Record<string, Record<string, { tags?: string[] }>> };
    const firstSection = Object.values(document.paths).flatMap((p) => Object.values(p)).filter((o) => o.tags?.[0] === document.tags[0]!.name).length;
    expect(firstSection).toBeGreaterThan(1);
    await docs.goto(`${base}/docs/`);
    await docs.locator('.opblock').first().waitFor();
    await expect.poll(() => docs.locator('.opblock').count()).toBe(firstSection);
    expect(errors).toEqual([]);
    await docs.setViewportSize({ width: 390, height: 844 });
    const op = docs.locator('.opblock').first();
    await op.locator('.opblock-summary').first().click();
    await op.getByRole('button', { name: 'Try it out' }).click();
    await op.locator('.responses-table').first().waitFor();
    expect(await docs.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await docs.screenshot({ path: join(SHOTS, 'docs-try-it-out-390.png'), fullPage: false });
    expect(errors).toEqual([]);
    await docs.close();
  });

  it('ends an idle session: the next action goes back to sign-in with the reason', async () => {
    await page.goto(`${base}/console/#/tenants`);
    await row('north-bank').waitFor();
    await t.db.query("UPDATE console_sessions SET seen_at = now() - interval '16 minutes' WHERE operator = 'ops-carol'");
    await page.getByRole('link', { name: 'Cores' }).click();
    await page.getByRole('heading', { name: 'Cardline console' }).waitFor();
    expect(await page.getByRole('status').first().textContent()).toBe('The console session ended after 15 minutes without use; sign in again with your operator key.');
    expect(cspViolations).toEqual([]);
  });

  it('signs out', async () => {
    await page.getByLabel('Operator key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Cardline console' }).waitFor();
    expect((await context.cookies(base)).find((c) => c.name === 'cardline_console')).toBeUndefined();
    expect((await t.db.query("SELECT 1 FROM console_sessions WHERE operator = 'ops-carol' AND seen_at > now() - interval '1 minute'")).rows).toEqual([]);
  });
});
