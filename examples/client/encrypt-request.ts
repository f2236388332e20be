// A bank integrator's client, step by step: fetch the tenant's gateway key, log in with an encrypted
// password, send a whole request body encrypted (Content-Type: application/jose) and a card upgrade whose
// address lines are encrypted fields. Only `jose` and Node built-ins: copy it into your own project.
//
//   CARDLINE_PASSWORD=... npx tsx examples/client/encrypt-request.ts \
//     --gateway http://localhost:8080 --tenant demo --username integration \
//     --entity ENT-1001 --amount 75000.00 --kit KIT-2001
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { CompactEncrypt, importJWK, type JWK } from 'jose';

const { values: args } = parseArgs({
  options: {
    gateway: { type: 'string', default: 'http://localhost:8080' },
    tenant: { type: 'string', default: 'demo' },
    username: { type: 'string', default: 'integration' },
    entity: { type: 'string', default: 'ENT-1001' },
    amount: { type: 'string', default: '75000.00' },
    kit: { type: 'string', default: 'KIT-2001' },
  },
});
const password = process.env.CARDLINE_PASSWORD;
if (!password) {
  console.error('Set CARDLINE_PASSWORD to the user password.');
  process.exit(2);
}
const base = args.gateway.replace(/\/$/, '');

/**
 * Encrypts a string to the gateway key the way Cardline requires: ECDH-ES+A256KW with A256GCM, the key's
 * kid, and a fresh iat (checked to ±300 s) and jti (accepted once) in the protected header. Encrypt anew for
 * every request, retries included: a JWE is single-use.
 */
async function encrypt(plaintext: string, key: JWK): Promise<string> {
  return new CompactEncrypt(new TextEncoder().encode(plaintext))
    .setProtectedHeader({ alg: 'ECDH-ES+A256KW', enc: 'A256GCM', kid: key.kid!, iat: Math.floor(Date.now() / 1000), jti: randomUUID() })
    .encrypt(await importJWK(key, 'ECDH-ES+A256KW'));
}

async function call(method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}) {
  const res = await fetch(base + path, { method, headers: { TENANT: args.tenant, ...init.headers }, body: init.body });
  const text = await res.text();
  // A token is a credential: it is used, never printed.
  const shown = res.ok && path === '/api/authenticate' ? '(token received)' : text;
  console.log(`${method} ${path} → ${res.status} ${shown}`);
  return { status: res.status, json: () => JSON.parse(text) as Record<string, unknown> };
}

// 1. The tenant's gateway encryption keys: the first is the active one (others are retiring after a rotation).
const keys = (await call('GET', '/api/keys')).json().keys as JWK[];
const gatewayKey = keys[0]!;

// 2. Log in: the password is a JWE string inside a plain JSON body.
const login = await call('POST', '/api/authenticate', {
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ username: args.username, password: await encrypt(password, gatewayKey) }),
});
if (login.status !== 200) process.exit(1);
const auth = { authorization: `Bearer ${login.json().id_token as string}` };

// 3. A whole body encrypted: the JSON text is the JWE's plaintext; the route answers as it would to the JSON.
const limit = await call('POST', '/credit-line-management/business-entity-manager/upgradeLimit', {
  headers: { ...auth, 'content-type': 'application/jose' },
  body: await encrypt(JSON.stringify({ entityId: args.entity, amount: args.amount }), gatewayKey),
});

// 4. Encrypted fields in a plain JSON body: each address line is its own JWE (spec 5.3 rule 2).
const upgrade = await call('PUT', '/v1/cards/upgrade/physical', {
  headers: { ...auth, 'content-type': 'application/json' },
  body: JSON.stringify({
    kitNo: args.kit,
    entityId: args.entity,
    communicationAddress: {
      address1: await encrypt('1 Rua Augusta', gatewayKey),
      address2: await encrypt('3rd floor', gatewayKey),
      city: 'Lisbon',
      state: 'Lisboa',
      country: 'PT',
      pin: '1100-053',
    },
  }),
});

process.exit(limit.status === 200 && upgrade.status === 200 ? 0 : 1);
