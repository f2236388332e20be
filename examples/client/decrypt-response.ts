// A bank integrator's client for encrypted response fields, on the SDK (@cardline/sdk, docs/sdk.md): keep a
// P-256 key pair, register its public half with the gateway once, read a card and let the SDK open its PAN,
// CVV and expiry with the private half (`decrypt: true`).
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
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { Cardline, CardlineError, isPending, type ClientJwk } from '@cardline/sdk';

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

// 1. The client key pair: the private half never leaves this machine.
const keyFile = args['client-key'];
if (!existsSync(keyFile)) {
  const { privateKey } = await generateKeyPair('ECDH-ES+A256KW', { crv: 'P-256', extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: `client-${randomUUID()}`, use: 'enc', alg: 'ECDH-ES+A256KW' };
  writeFileSync(keyFile, JSON.stringify(jwk, null, 2) + '\n', { mode: 0o600 });
}
const privateJwk = JSON.parse(readFileSync(keyFile, 'utf8')) as JWK;
const { d: _private, ...publicJwk } = privateJwk;

const cl = new Cardline({ baseUrl: args.gateway, tenant: args.tenant, clientKey: privateJwk });
try {
  // 2. Log in (the SDK encrypts the password to the gateway's active key).
  await cl.login(args.username, password);

  // 3. Register the public half (once; again after the client rotates its own key).
  if (args.register) {
    const registered = await cl.clientKey.register({ jwk: publicJwk as ClientJwk });
    console.log(`registered client key ${registered.result.jwk.kid}`);
  }

  // 4. Read the card: `sensitive` holds one JWE per field, to the registered client key; `decrypt` opens them.
  const card = await cl.card.read(args.card, { decrypt: true });
  if (isPending(card)) throw new Error('The core has not answered the card read yet (202)');
  const { cardId, panMasked, sensitive } = card.result;
  if (!sensitive) {
    console.error('The card read carries no sensitive fields: register the client key first (--register).');
    process.exit(1);
  }
  // Printed here to show the round trip; a real client hands these to the cardholder's screen, never to a log.
  console.log(JSON.stringify({ cardId, panMasked, ...sensitive }));
} catch (err) {
  console.error(err instanceof CardlineError ? `${err.name} ${err.status}: ${err.message}` : err);
  process.exit(1);
}
