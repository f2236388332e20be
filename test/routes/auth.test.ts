// Authentication (DESIGN §3, §4): tokens, the one "Bad credentials" answer, lockout, password
// encryption and its replay rules, and the token attacks a business route must refuse.
import { randomUUID } from 'node:crypto';
import {
  CompactEncrypt,
  SignJWT,
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  exportSPKI,
  generateKeyPair,
  importJWK,
  jwtVerify,
  type JSONWebKeySet,
  type JWK,
  type JWTPayload,
  type JWTHeaderParameters,
} from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { MockCore } from '../../connectors/mock/index.js';
import { PASSWORD, createTestApp, type TestApp } from '../helpers/app.js';
import { TOKEN_TARGETS, UNAUTHORIZED_ENVELOPE, challengeFor, UNAUTHORIZED_PROBLEM, lowS, type TokenTarget } from '../helpers/token-targets.js';

let t: TestApp;
beforeAll(async () => {
  // The library's argon2id cost, as a gateway process hashes (the other in-process test gateways hash cheaper, decision 0378).
  t = await createTestApp({
    passwordHashing: null,
    tenants: [
      { id: 'plain', config: { tokenLifetimeSeconds: 900, encryption: { allowPlaintextPassword: true } } },
    ],
  });
  await t.app.cardline.users.add('plain', 'plainuser', 'Admin', PASSWORD);
});
afterAll(() => t.close());

const PROBLEM_WITH_MESSAGE = 'https://www.jhipster.tech/problem/problem-with-message';

const BAD_CREDENTIALS = {
  type: PROBLEM_WITH_MESSAGE,
  title: 'Unauthorized',
  status: 401,
  message: 'error.http.401',
  detail: 'Bad credentials',
};

const ENCRYPTED_PAYLOAD = {
  type: PROBLEM_WITH_MESSAGE,
  title: 'Bad Request',
  status: 400,
  message: 'error.http.400',
  detail: 'The encrypted payload could not be processed.',
};

const PLAINTEXT_PASSWORD = {
  type: PROBLEM_WITH_MESSAGE,
  title: 'Bad Request',
  status: 400,
  message: 'error.http.400',
  detail: "The password must be a compact JWE encrypted to the tenant's key (GET /api/keys).",
};

const nowSeconds = () => Math.floor(Date.now() / 1000);
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Sends a password as the client would, by default encrypted to the tenant's gateway key. */
async function authenticate(username: string, password: string, tenant = 'demo', encrypt = true) {
  return t.inject({
    method: 'POST',
    url: '/api/authenticate',
    headers: { TENANT: tenant },
    payload: { username, password: encrypt ? await t.encrypt(password, tenant) : password },
  });
}

async function loginAttempts(username: string, tenant = 'demo') {
  const r = await t.db.query<{ failures: number; locked: boolean }>(
    'SELECT failures, coalesce(locked_until > now(), false) AS locked FROM login_attempts WHERE tenant_id = $1 AND username = $2',
    [tenant, username],
  );
  return r.rows[0] ?? null;
}

async function tenantEncKey(tenant = 'demo'): Promise<JWK> {
  const res = await t.inject({ method: 'GET', url: '/api/keys', headers: { TENANT: tenant } });
  return res.json().keys[0] as JWK;
}

describe('password hashes', () => {
  it("are argon2id at the library's defaults (19 MiB, 2 passes, one lane), for the demo users and a user added later", async () => {
    await t.app.cardline.users.add('demo', 'hashed', 'Read-Only', PASSWORD);
    const r = await t.db.query<{ username: string; password_hash: string }>("SELECT username, password_hash FROM users WHERE tenant_id = 'demo' ORDER BY username");
    expect(r.rows.map((row) => row.username)).toEqual(['admin', 'hashed', 'integration', 'ops', 'viewer']);
    for (const row of r.rows) expect(row.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
  });
});

describe('POST /api/authenticate: success', () => {
  it('answers only {id_token}', async () => {
    const res = await authenticate('admin', PASSWORD);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ id_token: expect.any(String) });
  });

  it('issues an ES256 JWT with kid and the claims sub, tenant, role, iat, exp, jti, iss, aud, gen; lifetime 3600 s', async () => {
    const before = nowSeconds();
    const token = (await authenticate('ops', PASSWORD)).json().id_token as string;
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'ES256', kid: expect.any(String), typ: 'JWT' });
    const claims = decodeJwt(token);
    expect(claims).toEqual({
      sub: 'ops',
      tenant: 'demo',
      role: 'Operations',
      iat: expect.any(Number),
      exp: expect.any(Number),
      jti: expect.any(String),
      iss: 'cardline',
      aud: 'cardline-api',
      // The user's token generation: a revocation (disabled, removed, role or password changed) bumps it.
      gen: 0,
    });
    expect(claims.iat).toBeGreaterThanOrEqual(before);
    expect(claims.iat).toBeLessThanOrEqual(nowSeconds());
    expect(claims.exp! - claims.iat!).toBe(3600);
  });

  it('takes the lifetime from the tenant configuration (tokenLifetimeSeconds)', async () => {
    const res = await authenticate('plainuser', PASSWORD, 'plain');
    expect(res.statusCode).toBe(200);
    const claims = decodeJwt(res.json().id_token);
    expect(claims.tenant).toBe('plain');
    expect(claims.exp! - claims.iat!).toBe(900);
  });

  it('each token has its own jti', async () => {
    const a = decodeJwt((await authenticate('viewer', PASSWORD)).json().id_token);
    const b = decodeJwt((await authenticate('viewer', PASSWORD)).json().id_token);
    expect(a.jti).not.toBe(b.jti);
  });

  it('verifies against the key published at /.well-known/jwks.json', async () => {
    const token = (await authenticate('integration', PASSWORD)).json().id_token as string;
    const res = await t.inject({ method: 'GET', url: '/.well-known/jwks.json' });
    expect(res.statusCode).toBe(200);
    const jwks = res.json() as JSONWebKeySet;
    const kid = decodeProtectedHeader(token).kid;
    expect(jwks.keys.filter((k) => k.kid === kid)).toHaveLength(1);
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(jwks), {
      algorithms: ['ES256'],
      issuer: 'cardline',
      audience: 'cardline-api',
    });
    expect(protectedHeader.alg).toBe('ES256');
    expect(payload).toMatchObject({ sub: 'integration', tenant: 'demo', role: 'API Integration' });
  });
});

describe('POST /api/authenticate: one answer for every credential failure', () => {
  it('unknown user → 401 Bad credentials', async () => {
    const res = await authenticate('nobody-here', PASSWORD);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(BAD_CREDENTIALS);
  });

  it('wrong password → the same 401', async () => {
    await t.app.cardline.users.add('demo', 'wrongpw', 'Read-Only', PASSWORD);
    const res = await authenticate('wrongpw', 'not-the-password');
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(BAD_CREDENTIALS);
  });

  it('a user of another tenant is unknown here → the same 401', async () => {
    const res = await authenticate('plainuser', PASSWORD, 'demo');
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(BAD_CREDENTIALS);
  });
});

describe('POST /api/authenticate: lockout (10 failures → 30 minutes)', () => {
  it('ten wrong passwords lock the user; the right password then gets the same 401; it works again once the lock expires', async () => {
    await t.app.cardline.users.add('demo', 'locky', 'Operations', PASSWORD);
    await t.app.cardline.users.add('demo-b', 'locky', 'Operations', PASSWORD);
    for (let i = 1; i <= 10; i++) {
      const res = await authenticate('locky', `wrong-password-${i}`);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(BAD_CREDENTIALS);
      expect(await loginAttempts('locky')).toEqual({ failures: i, locked: i === 10 });
    }
    const r = await t.db.query<{ minutes: number }>(
      "SELECT round(extract(epoch FROM (locked_until - now())) / 60)::int AS minutes FROM login_attempts WHERE tenant_id = 'demo' AND username = 'locky'",
    );
    expect(r.rows[0]?.minutes).toBe(30);

    // Locked: the right password answers exactly like an unknown user.
    const locked = await authenticate('locky', PASSWORD);
    expect(locked.statusCode).toBe(401);
    expect(locked.json()).toEqual(BAD_CREDENTIALS);
    expect(locked.json()).toEqual((await authenticate('nobody-here', PASSWORD)).json());

    // The lock is per tenant: the same username on demo-b is unaffected.
    expect((await authenticate('locky', PASSWORD, 'demo-b')).statusCode).toBe(200);

    // The lock expires.
    await t.db.query(
      "UPDATE login_attempts SET locked_until = now() - interval '1 second' WHERE tenant_id = 'demo' AND username = 'locky'",
    );
    const again = await authenticate('locky', PASSWORD);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ id_token: expect.any(String) });
    expect(await loginAttempts('locky')).toBeNull();
  });

  it('a success resets the failure counter', async () => {
    await t.app.cardline.users.add('demo', 'resetty', 'Operations', PASSWORD);
    for (let i = 0; i < 9; i++) expect((await authenticate('resetty', 'wrong-password')).statusCode).toBe(401);
    expect(await loginAttempts('resetty')).toEqual({ failures: 9, locked: false });
    expect((await authenticate('resetty', PASSWORD)).statusCode).toBe(200);
    expect(await loginAttempts('resetty')).toBeNull();
    // Nine more failures: without the reset, the first of them would have been the tenth.
    for (let i = 0; i < 9; i++) expect((await authenticate('resetty', 'wrong-password')).statusCode).toBe(401);
    expect(await loginAttempts('resetty')).toEqual({ failures: 9, locked: false });
    expect((await authenticate('resetty', PASSWORD)).statusCode).toBe(200);
  });
  it('a burst of concurrent guesses gets at most ten passwords checked, and the right one sent last does not get in', async () => {
    await t.app.cardline.users.add('demo', 'bursty', 'Operations', PASSWORD);
    const checks = vi.spyOn(t.app.cardline.users, 'checkPassword');
    try {
      const guesses = Array.from({ length: 30 }, (_, i) => authenticate('bursty', `wrong-${i}`));
      // The attempt is counted before argon2 runs: the burst cannot outrun the lock.
      const results = await Promise.all(guesses);
      expect(results.map((r) => r.statusCode)).toEqual(Array(30).fill(401));
      expect(checks.mock.calls.length).toBeLessThanOrEqual(10);
      // Only checked passwords count as failures: the ten admitted ones, which lock the user.
      expect(await loginAttempts('bursty')).toEqual({ failures: 10, locked: true });
      const right = await authenticate('bursty', PASSWORD);
      expect(right.statusCode).toBe(401);
      expect(right.json()).toEqual(BAD_CREDENTIALS);
      expect(checks.mock.calls.length).toBeLessThanOrEqual(10);
    } finally {
      checks.mockRestore();
    }
  });
});

describe('POST /api/authenticate: concurrent logins of one user', () => {
  it('at most ten are checked at once; the others get the same 401 but are not failures, and never lock the user', async () => {
    await t.app.cardline.users.add('demo', 'busy', 'API Integration', PASSWORD);
    const results = await Promise.all(Array.from({ length: 25 }, () => authenticate('busy', PASSWORD)));
    const ok = results.filter((r) => r.statusCode === 200).length;
    expect(ok).toBeGreaterThanOrEqual(1);
    expect(ok).toBeLessThanOrEqual(25);
    for (const r of results.filter((x) => x.statusCode !== 200)) expect(r.json()).toEqual(BAD_CREDENTIALS);
    // Nothing was a failure: the user is not locked and logs in at once.
    const after = await loginAttempts('busy');
    expect(after === null || (after.failures === 0 && !after.locked)).toBe(true);
    expect((await authenticate('busy', PASSWORD)).statusCode).toBe(200);
  });
});

describe('POST /api/authenticate: password encryption', () => {
  it('refuses a plain-text password by default → 400', async () => {
    const res = await authenticate('admin', PASSWORD, 'demo', false);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(PLAINTEXT_PASSWORD);
  });

  it("accepts a plain-text password when the tenant's policy allows it", async () => {
    const res = await authenticate('plainuser', PASSWORD, 'plain', false);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ id_token: expect.any(String) });
    const wrong = await authenticate('plainuser', 'not-the-password', 'plain', false);
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toEqual(BAD_CREDENTIALS);
  });

  it('a JWE password is still accepted by a tenant that allows plain text', async () => {
    expect((await authenticate('plainuser', PASSWORD, 'plain')).statusCode).toBe(200);
  });

  it('the same JWE twice → the second is a replay → 400', async () => {
    const jwe = await t.encrypt(PASSWORD);
    const send = () =>
      t.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: 'demo' }, payload: { username: 'admin', password: jwe } });
    expect((await send()).statusCode).toBe(200);
    const replay = await send();
    expect(replay.statusCode).toBe(400);
    expect(replay.json()).toEqual(ENCRYPTED_PAYLOAD);
  });

  it('a replayed JWE is refused even when the first use failed on the password', async () => {
    const jwe = await t.encrypt('not-the-password');
    const send = () =>
      t.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: 'demo' }, payload: { username: 'viewer', password: jwe } });
    expect((await send()).json()).toEqual(BAD_CREDENTIALS);
    expect((await send()).json()).toEqual(ENCRYPTED_PAYLOAD);
  });

  it('accepts an iat within the ±300 s window', async () => {
    expect((await authenticate('admin', PASSWORD)).statusCode).toBe(200);
    const older = await t.encrypt(PASSWORD, 'demo', { iat: nowSeconds() - 250 });
    const newer = await t.encrypt(PASSWORD, 'demo', { iat: nowSeconds() + 60 });
    for (const password of [older, newer]) {
      const res = await t.inject({ method: 'POST', url: '/api/authenticate', headers: { TENANT: 'demo' }, payload: { username: 'admin', password } });
      expect(res.statusCode).toBe(200);
    }
  });

  const badJwes: [string, () => Promise<string>][] = [
    ['iat 301 s old', () => t.encrypt(PASSWORD, 'demo', { iat: nowSeconds() - 301 })],
    ['iat an hour old', () => t.encrypt(PASSWORD, 'demo', { iat: nowSeconds() - 3600 })],
    ['iat 310 s in the future', () => t.encrypt(PASSWORD, 'demo', { iat: nowSeconds() + 310 })],
    ['iat a day in the future', () => t.encrypt(PASSWORD, 'demo', { iat: nowSeconds() + 86_400 })],
    [
      'no jti in the protected header',
      async () => {
        const jwk = await tenantEncKey();
        return new CompactEncrypt(new TextEncoder().encode(PASSWORD))
          .setProtectedHeader({ alg: 'ECDH-ES+A256KW', enc: 'A256GCM', kid: jwk.kid!, iat: nowSeconds() })
          .encrypt(await importJWK(jwk, 'ECDH-ES+A256KW'));
      },
    ],
    [
      'no iat in the protected header',
      async () => {
        const jwk = await tenantEncKey();
        return new CompactEncrypt(new TextEncoder().encode(PASSWORD))
          .setProtectedHeader({ alg: 'ECDH-ES+A256KW', enc: 'A256GCM', kid: jwk.kid!, jti: randomUUID() })
          .encrypt(await importJWK(jwk, 'ECDH-ES+A256KW'));
      },
    ],
    ['a too short jti', () => t.encrypt(PASSWORD, 'demo', { jti: 'abc' })],
    ["alg 'ECDH-ES' (direct key agreement) not allow-listed", () => t.encrypt(PASSWORD, 'demo', { alg: 'ECDH-ES' })],
    ["enc 'A128GCM' not allow-listed", () => t.encrypt(PASSWORD, 'demo', { enc: 'A128GCM' })],
    ["encrypted to another tenant's key", () => t.encrypt(PASSWORD, 'demo-b')],
    ['a garbage five-part string', async () => 'aaaa.bbbb.cccc.dddd.eeee'],
    ['a tampered ciphertext', async () => {
      const parts = (await t.encrypt(PASSWORD)).split('.');
      const ct = Buffer.from(parts[3]!, 'base64url');
      ct[0] = ct[0]! ^ 0xff;
      parts[3] = ct.toString('base64url');
      return parts.join('.');
    }],
  ];

  it.each(badJwes)('%s → 400, the one generic encrypted-payload answer', async (_name, make) => {
    const res = await t.inject({
      method: 'POST',
      url: '/api/authenticate',
      headers: { TENANT: 'demo' },
      payload: { username: 'admin', password: await make() },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(ENCRYPTED_PAYLOAD);
  });
});

// ---------------------------------------------------------------------------------------------------
// Token attacks on the business routes.

type Target = TokenTarget;
const TARGETS = TOKEN_TARGETS;

const call = (target: Target, authorization: string | undefined, tenant = 'demo', payload = target.payload) =>
  t.inject({
    method: target.method,
    url: target.url,
    headers: { [target.tenantHeader]: tenant, ...(authorization === undefined ? {} : { authorization }) },
    payload,
  });

async function mockCore(tenant: string): Promise<MockCore> {
  return (await t.app.cardline.connectors.forTenant((await t.app.cardline.tenants.get(tenant))!)) as unknown as MockCore;
}

describe('token attacks on business routes', () => {
  const attacks = new Map<string, string | undefined>();
  let control: string;

  beforeAll(async () => {
    const sig = (await t.app.cardline.keys.forTenant('demo')).sig[0]!;
    const otherSig = (await t.app.cardline.keys.forTenant('demo-b')).sig[0]!;
    const now = nowSeconds();
    const claims = (over: JWTPayload = {}): JWTPayload => ({
      sub: 'admin',
      tenant: 'demo',
      role: 'Admin',
      iat: now,
      exp: now + 3600,
      jti: randomUUID(),
      iss: 'cardline',
      aud: 'cardline-api',
      ...over,
    });
    // Low-S, as the gateway signs: the one hostile property is what gets a token refused.
    const es256 = async (payload: JWTPayload, header: Partial<JWTHeaderParameters> = {}, key?: Parameters<SignJWT["sign"]>[0]) =>
      lowS(await new SignJWT(payload).setProtectedHeader({ alg: 'ES256', kid: sig.kid, typ: 'JWT', ...header }).sign(key ?? (await sig.privateKey())));

    control = await es256(claims());

    attacks.set('no Authorization header', undefined);
    attacks.set('an empty bearer', 'Bearer ');
    attacks.set('a Basic credential', `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`);
    attacks.set("alg 'none'", `Bearer ${b64({ alg: 'none', typ: 'JWT', kid: sig.kid })}.${b64(claims())}.`);
    attacks.set(
      'HS256 signed with the public key (PEM) as the secret',
      `Bearer ${await new SignJWT(claims())
        .setProtectedHeader({ alg: 'HS256', kid: sig.kid, typ: 'JWT' })
        .sign(new TextEncoder().encode(await exportSPKI(await sig.publicKey())))}`,
    );
    attacks.set(
      'HS256 signed with the public JWK (JSON) as the secret',
      `Bearer ${await new SignJWT(claims())
        .setProtectedHeader({ alg: 'HS256', kid: sig.kid, typ: 'JWT' })
        .sign(new TextEncoder().encode(JSON.stringify(sig.publicJwk)))}`,
    );
    const [h, p, s] = (await t.token('Read-Only')).split('.') as [string, string, string];
    const tampered = { ...(JSON.parse(Buffer.from(p, 'base64url').toString()) as JWTPayload), role: 'Admin' };
    attacks.set('claims tampered (Read-Only → Admin), signature kept', `Bearer ${h}.${b64(tampered)}.${s}`);
    const [ch, cp] = control.split('.') as [string, string];
    attacks.set('an all-zero signature', `Bearer ${ch}.${cp}.${Buffer.alloc(64).toString('base64url')}`);
    const attacker = await generateKeyPair('ES256', { extractable: true });
    const attackerJwk = await exportJWK(attacker.publicKey);
    attacks.set('an embedded jwk header (signed by that key)', `Bearer ${await es256(claims(), { jwk: attackerJwk }, attacker.privateKey)}`);
    attacks.set(
      'an embedded jwk header without kid',
      `Bearer ${await new SignJWT(claims()).setProtectedHeader({ alg: 'ES256', typ: 'JWT', jwk: attackerJwk }).sign(attacker.privateKey)}`,
    );
    attacks.set('signed by an unknown key under the tenant kid', `Bearer ${await es256(claims(), {}, attacker.privateKey)}`);
    attacks.set(
      "kid pointing to another tenant's key (signed with it)",
      `Bearer ${await es256(claims(), { kid: otherSig.kid }, await otherSig.privateKey())}`,
    );
    attacks.set('an unknown kid', `Bearer ${await es256(claims(), { kid: randomUUID() })}`);
    attacks.set('expired', `Bearer ${await es256(claims({ iat: now - 7200, exp: now - 3600 }))}`);
    attacks.set('not yet valid (nbf in the future)', `Bearer ${await es256(claims({ nbf: now + 3600 }))}`);
    attacks.set('the wrong audience', `Bearer ${await es256(claims({ aud: 'another-api' }))}`);
    attacks.set('the wrong issuer', `Bearer ${await es256(claims({ iss: 'not-cardline' }))}`);
    attacks.set('a tenant claim naming another tenant', `Bearer ${await es256(claims({ tenant: 'demo-b' }))}`);
    attacks.set('an unknown role', `Bearer ${await es256(claims({ role: 'Root' }))}`);
    attacks.set('no jti', `Bearer ${await es256(claims({ jti: undefined }))}`);
    attacks.set('a demo-b token sent with the demo tenant header', `Bearer ${await t.token('Admin', 'demo-b')}`);
  });

  it('control: a token signed with the tenant key and valid claims is accepted', async () => {
    const core = await mockCore('demo');
    const res = await call(TARGETS[0]!, `Bearer ${control}`, 'demo', { entityId: 'ENT-1003', amount: '50000.01' });
    expect(res.statusCode).toBe(200);
    expect(core.state.entities.get('ENT-1003')?.creditLimitMinor).toBe(5_000_001n);
  });

  const ATTACK_NAMES = [
    'no Authorization header',
    'an empty bearer',
    'a Basic credential',
    "alg 'none'",
    'HS256 signed with the public key (PEM) as the secret',
    'HS256 signed with the public JWK (JSON) as the secret',
    'claims tampered (Read-Only → Admin), signature kept',
    'an all-zero signature',
    'an embedded jwk header (signed by that key)',
    'an embedded jwk header without kid',
    'signed by an unknown key under the tenant kid',
    "kid pointing to another tenant's key (signed with it)",
    'an unknown kid',
    'expired',
    'not yet valid (nbf in the future)',
    'the wrong audience',
    'the wrong issuer',
    'a tenant claim naming another tenant',
    'an unknown role',
    'no jti',
    'a demo-b token sent with the demo tenant header',
  ];
  const cases = TARGETS.flatMap((target) => ATTACK_NAMES.map((attack) => [target.name, attack, target] as const));

  it('every attack above is exercised', () => {
    expect([...attacks.keys()].sort()).toEqual([...ATTACK_NAMES].sort());
  });

  it.each(cases)('%s: %s → 401, nothing changes', async (_route, attack, target) => {
    const cores = [await mockCore('demo'), await mockCore('demo-b')];
    const before = cores.map((c) => structuredClone(c.state));
    const res = await call(target, attacks.get(attack));
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe(challengeFor(attack));
    expect(res.json()).toEqual(target.unauthorized);
    expect(cores.map((c) => c.state)).toEqual(before);
  });
});

describe('a token is valid only with its own tenant header', () => {
  it('demo token: accepted with demo, refused with demo-b (both dialects)', async () => {
    const demoToken = `Bearer ${await t.token('Admin', 'demo')}`;
    const ok = await call(TARGETS[0]!, demoToken, 'demo', { entityId: 'ENT-1001', amount: '51000.00' });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ result: true, exception: null, pagination: null });
    for (const target of TARGETS) {
      const res = await call(target, demoToken, 'demo-b');
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(target.unauthorized);
    }
  });

  it('demo-b token: accepted with demo-b, refused with demo, never served from cache for the wrong tenant', async () => {
    // A fresh token, so that its first verification is for the wrong tenant.
    const fresh = `Bearer ${(await authenticate('admin', PASSWORD, 'demo-b')).json().id_token}`;
    const wrong = await call(TARGETS[0]!, fresh, 'demo', { entityId: 'ENT-1001', amount: '52000.00' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toEqual(UNAUTHORIZED_ENVELOPE);
    const right = await call(TARGETS[0]!, fresh, 'demo-b', { entityId: 'ENT-1001', amount: '52000.00' });
    expect(right.statusCode).toBe(200);
    const wrongAgain = await call(TARGETS[1]!, fresh, 'demo');
    expect(wrongAgain.statusCode).toBe(401);
    expect(wrongAgain.json()).toEqual(UNAUTHORIZED_PROBLEM);
    expect((await mockCore('demo-b')).state.entities.get('ENT-1001')?.creditLimitMinor).toBe(5_200_000n);
  });
});
