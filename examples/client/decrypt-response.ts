// A bank integrator's client for encrypted response fields: keep a P-256 key pair, register its public
// half with the gateway once, read a card and decrypt its PAN, CVV and expiry with the private half.
// Only `jose` and Node built-ins: copy it into your own project.
//
//   CARDLINE_PASSWORD=... npx tsx examples/client/decrypt-response.ts \
//     --gateway http://localhost:8080 --tenant demo --username admin --card CARD-3001 \
//     --client-key ./client-key.json --register
//
// --client-key names the file holding the client's private JWK; it is created (mode 0600) when missing.
// --register registers its public half (PUT /v1/admin/client-key, an Admin's call; `npx cardline keys
// register-client --tenant demo --jwk @public.json` does the same from the operator's side).
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { CompactEncrypt, compactDecrypt, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';

const { values: args } = parseArgs({
  options: {
    gateway: { type: 'string', default: 'http://localhost:8080' },
    tenant: { type: 'string', default: 'demo' },
    username: { type: 'string', default: 'admin' },
    card: { type: 'string', default: 'CARD-3001' },
    'client-key': { type: 'string', default: './client-key.json' },
    register: { type: 'boolean', default: false },
  },
});
const password = process.env.CARDLINE_PASSWORD;
if (!password) {
  console.error('Set CARDLINE_PASSWORD to the user password.');
  process.exit(2);
}
const base = args.gateway.replace(/\/$/, '');

async function call(method: string, path: string, init: { headers?: Record<string, string>; body?: unknown } = {}) {
  const res = await fetch(base + path, {
    method,
    headers: { TENANT: args.tenant, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) {
    console.error(`${method} ${path} → ${res.status} ${JSON.stringify(json)}`);
    process.exit(1);
  }
  return json;
}

// 1. The client key pair: the private half never leaves this machine.
const keyFile = args['client-key'];
if (!existsSync(keyFile)) {
  const { privateKey } = await generateKeyPair('ECDH-ES+A256KW', { crv: 'P-256', extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: `client-${randomUUID()}`, use: 'enc', alg: 'ECDH-ES+A256KW' };
  writeFileSync(keyFile, JSON.stringify(jwk, null, 2) + '\n', { mode: 0o600 });
}
const privateJwk = JSON.parse(readFileSync(keyFile, 'utf8')) as JWK;
const { d: _private, ...publicJwk } = privateJwk;

// 2. Log in (the password encrypted to the gateway's active key, as in encrypt-request.ts).
const gatewayKey = ((await call('GET', '/api/keys')).keys as JWK[])[0]!;
const passwordJwe = await new CompactEncrypt(new TextEncoder().encode(password))
  .setProtectedHeader({ alg: 'ECDH-ES+A256KW', enc: 'A256GCM', kid: gatewayKey.kid!, iat: Math.floor(Date.now() / 1000), jti: randomUUID() })
  .encrypt(await importJWK(gatewayKey, 'ECDH-ES+A256KW'));
const { id_token } = (await call('POST', '/api/authenticate', { body: { username: args.username, password: passwordJwe } })) as { id_token: string };
const auth = { authorization: `Bearer ${id_token}` };

// 3. Register the public half (once; again after the client rotates its own key).
if (args.register) {
  const registered = (await call('PUT', '/v1/admin/client-key', { headers: auth, body: { jwk: publicJwk } })).result as { jwk: JWK };
  console.log(`registered client key ${registered.jwk.kid}`);
}

// 4. Read the card: `sensitive` holds one JWE per field, to the registered client key.
const card = (await call('GET', `/v1/cards/${encodeURIComponent(args.card)}`, { headers: auth })).result as {
  cardId: string;
  panMasked: string;
  sensitive?: Record<string, string>;
};
if (!card.sensitive) {
  console.error('The card read carries no sensitive fields: register the client key first (--register).');
  process.exit(1);
}
const key = await importJWK(privateJwk, 'ECDH-ES+A256KW');
const fields: Record<string, string> = {};
for (const [name, jwe] of Object.entries(card.sensitive)) {
  // Pin the algorithms: never let the message choose them.
  const { plaintext } = await compactDecrypt(jwe, key, { keyManagementAlgorithms: ['ECDH-ES+A256KW'], contentEncryptionAlgorithms: ['A256GCM'] });
  fields[name] = new TextDecoder().decode(plaintext);
}
// Printed here to show the round trip; a real client hands these to the cardholder's screen, never to a log.
console.log(JSON.stringify({ cardId: card.cardId, panMasked: card.panMasked, ...fields }));
